package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Figure 10: capacity. The sustained capacity of a service is the highest
// arrival rate of POST /v1/messages that holds for 30 s under open-loop
// load (openload.go: requests started on a schedule, latency from the
// scheduled time). A rate holds when, over the whole window, no request
// fails, the accept's p99 is at most 50 ms, and the backlog (messages
// accepted and not yet reported sent through the webhook) is at most one
// second of arrivals when the last request is due (and the messages not
// yet reported read at most 3.15 s of arrivals, as the fake provider
// applies its reports once a second): the service keeps up
// with the whole lifecycle, not only the accept. The rate is searched by
// probes of 3 s (from 250 a second, doubling while it holds, then
// bisecting to within 10 %, or 5 % when seeded; a search seeded with a measured capacity steps
// by 10 %, at most twice, instead), each probe starting with the service idle (the backlog
// of the one before drained). A probe also fails when its backlog, grown
// at the rate it grew during the probe (a least squares slope of samples
// every 50 ms), would pass one second of arrivals within 30 s. The highest
// holding rate is then confirmed for 30 s (once more 10 % lower when it
// does not hold; the log says when that did not hold either; a side whose
// backlog stops draining ends its search there, its figure the highest
// rate that held, unconfirmed, as the log says). Each side
// is searched and confirmed once (no repeats: a search takes about a
// minute), one after another, so the ratios carry the drift of a shared
// machine over minutes; with -short, two probes of 1 s a side (50 and 100
// a second) and no confirmation.
//
// The product is examples/server built from this repository with its
// defaults except -rate-limits off and -dispatch-rate off (the pacing is
// a deliberate limit), and the fake provider's reports shortened to 50 ms
// (delivered) and 100 ms more (read), so the lifecycle completes within a
// probe: request log on, written to a file as a user redirecting stderr
// would; the dispatcher; -webhooks-loopback and one webhook endpoint,
// subscribed through the operator and API routes, pointing at a loopback
// receiver in the bench that answers 200 and counts the events by status.
// Each message thus costs an accept, a dispatch and three status changes,
// each delivered as a webhook.
//
// 10a: the baseline is a naive durable service (naive.go) doing the same
// lifecycle the plain way, one commit per change, driven by the same load
// generator, reporting to the same receiver, held to the same rule; it
// runs in the bench's process. Goal: twice its capacity.
// 10b: the request log's cost: the product against itself with
// -request-log off. Goal >= 0.95.
// 10c: instrumentation's cost: the product with -metrics-addr (every
// Prometheus metric recorded, /metrics scraped every second) against the
// product as shipped (no metrics). Goal >= 0.95.
// 10d, 10e: the product on PostgreSQL (-db postgres://..., a fresh database
// each): one instance against the product on SQLite, and two instances on
// one database (load split between them in turn, both dispatching)
// against one. Information, no goal: two shared cores cannot show
// scaling.
//
// -capacity-profile <dir> writes a 10 s CPU profile of the server with
// -metrics-addr (which serves /debug/pprof/) taken while it runs at its
// capacity, and the top functions by cumulative time (go tool pprof -top
// -cum).

// errNotDrained is a probe after which the side's backlog did not drain.
var errNotDrained = errors.New("the backlog did not drain")

// capacityLimits is the rule a rate must meet for every side.
// The read reports get more slack: the server's fake provider applies
// its due reports once a second (a flush for delivered, a later one for
// read), so a read report comes up to 2 s after the delays.
var capacityLimits = holdLimits{horizon: 30 * time.Second, p99: 50 * time.Millisecond, backlog: time.Second, readSlack: 2*time.Second + fakeDeliveredAfter + fakeReadAfter}

// The fake provider's delays in the capacity figure (the server's
// defaults are 1 s and 2 s).
const (
	fakeDeliveredAfter = 50 * time.Millisecond
	fakeReadAfter      = 100 * time.Millisecond
)

// searchPlan is how a capacity is searched.
type searchPlan struct {
	// start is the first rate probed; factor the step while expanding.
	start, factor float64
	// maxExpand bounds the expanding steps.
	maxExpand int
	// resolution: bisect until hi/lo <= 1+resolution.
	resolution float64
	probe      time.Duration
	// confirm is the window of the confirmation; 0: none.
	confirm time.Duration
	// maxDrain bounds the wait for the backlog between probes.
	maxDrain time.Duration
}

// capacityPlan returns the plan of a search from scratch (seed 0) or
// around a measured capacity.
func (c *config) capacityPlan(seed float64) searchPlan {
	if c.short {
		return searchPlan{start: 50, factor: 2, maxExpand: 1, resolution: 10, probe: time.Second, maxDrain: 20 * time.Second}
	}
	p := searchPlan{start: 250, factor: 2, maxExpand: 8, resolution: 0.1, probe: 3 * time.Second, confirm: 30 * time.Second, maxDrain: 3 * time.Minute}
	if seed > 0 {
		p.start, p.factor, p.maxExpand, p.resolution = seed, 1.1, 2, 0.05
	}
	return p
}

// capacitySide is one service under test, started and ready.
type capacitySide struct {
	name   string
	target *capTarget
	// metricsURL is the product's internal listener (http://host:port),
	// "" without -metrics-addr.
	metricsURL string
	stop       func() error
}

func runCapacity(ctx context.Context, c *config) ([]*row, error) {
	dir, bin, err := buildServer(ctx, c, "capacity")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	client := newLoadClient()
	defer client.CloseIdleConnections()
	r := &capacityRunner{c: c, bin: bin, dir: dir, client: client}

	rows := []*row{
		{figure: "10a", name: "capacity, open-loop POST /v1/messages through sent, delivered, read (3 webhooks), examples/server on SQLite as shipped", unit: "msg/s", higherBetter: true, goal: 2,
			baselineName: "a naive durable service in the bench: bearer key (constant time), JSON decode, INSERT committed alone (SQLite WAL, synchronous=FULL), a worker loop claiming 16 at a time, each status change (sent; delivered, read 50 ms and 100 ms later) its own commit and one signed POST to the same receiver; same load and hold rule (p99 <= 50 ms, no errors, backlog <= 1 s of arrivals)"},
		{figure: "10b", name: "capacity with the request log on (to a file) vs off (-request-log off)", unit: "msg/s", higherBetter: true, goal: 0.95,
			baselineName: "the same server with -request-log off"},
		{figure: "10c", name: "capacity with metrics on (-metrics-addr, scraped every second) vs off", unit: "msg/s", higherBetter: true, goal: 0.95,
			baselineName: "the server as shipped (no -metrics-addr: nothing recorded)"},
		{figure: "10d", name: "capacity on PostgreSQL, one instance (vs SQLite, information)", unit: "msg/s", higherBetter: true,
			baselineName: "the server as shipped, on SQLite"},
		{figure: "10e", name: "capacity on PostgreSQL, two instances on one database (vs one, information)", unit: "msg/s", higherBetter: true,
			baselineName: "one instance on PostgreSQL"},
	}
	a, logRow, metrics, pg1, pg2 := rows[0], rows[1], rows[2], rows[3], rows[4]

	var shipped float64
	if c.side != "baseline" {
		if shipped, err = r.measure(ctx, "product", 0, productVariant{}); err != nil {
			return nil, err
		}
		a.product, logRow.product, metrics.baseline, pg1.baseline = []float64{shipped}, []float64{shipped}, []float64{shipped}, []float64{shipped}
	}
	if c.side != "product" {
		v, err := r.measureNaive(ctx)
		if err != nil {
			return nil, err
		}
		a.baseline = []float64{v}
	}
	if c.side == "baseline" {
		return rows[:1], nil
	}
	v, err := r.measure(ctx, "request log off", shipped, productVariant{requestLogOff: true})
	if err != nil {
		return nil, err
	}
	logRow.baseline = []float64{v}
	if v, err = r.measure(ctx, "metrics on", shipped, productVariant{metrics: true, profile: c.capacityProfile}); err != nil {
		return nil, err
	}
	metrics.product = []float64{v}
	var one float64
	if one, err = r.measure(ctx, "PostgreSQL, one instance", 0, productVariant{postgres: 1}); err != nil {
		return nil, err
	}
	pg1.product, pg2.baseline = []float64{one}, []float64{one}
	if v, err = r.measure(ctx, "PostgreSQL, two instances", one, productVariant{postgres: 2}); err != nil {
		return nil, err
	}
	pg2.product = []float64{v}
	return rows, nil
}

// capacityRunner measures the sides of the capacity figure.
type capacityRunner struct {
	c      *config
	bin    string
	dir    string
	client *http.Client
	n      int // sides started, for distinct directories and databases
}

// productVariant is how a side's server differs from the one shipped.
type productVariant struct {
	requestLogOff bool
	metrics       bool
	// profile is the directory of the CPU profile taken at capacity; ""
	// for none (needs metrics).
	profile string
	// postgres is the number of instances on one fresh PostgreSQL
	// database; 0: SQLite.
	postgres int
}

// measure starts the product as v says, searches its capacity (around
// seed, 0 for from scratch) and stops it.
func (r *capacityRunner) measure(ctx context.Context, name string, seed float64, v productVariant) (float64, error) {
	side, err := r.startProduct(ctx, name, v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	stopScrape := func() {}
	if side.metricsURL != "" {
		stopScrape = scrapeEverySecond(ctx, r.client, side.metricsURL+"/metrics")
	}
	capacity, err := r.c.searchCapacity(ctx, r.client, side, r.c.capacityPlan(seed))
	if err == nil && v.profile != "" {
		err = r.profile(ctx, side, capacity, v.profile)
	}
	stopScrape()
	if serr := side.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return capacity, nil
}

// measureNaive starts the naive service, searches its capacity and stops
// it.
func (r *capacityRunner) measureNaive(ctx context.Context) (float64, error) {
	r.n++
	dir := filepath.Join(r.dir, fmt.Sprintf("naive-%d", r.n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	hooks, err := newHookReceiver()
	if err != nil {
		return 0, err
	}
	n, err := startNaive(ctx, dir, hooks.url, fakeDeliveredAfter, fakeReadAfter)
	if err != nil {
		hooks.close()
		return 0, err
	}
	side := &capacitySide{name: "naive", target: &capTarget{urls: []string{n.url}, authHeader: "Authorization", authValue: "Bearer " + benchKey, hooks: hooks},
		stop: func() error { n.close(); hooks.close(); return os.RemoveAll(dir) }}
	capacity, err := r.c.searchCapacity(ctx, r.client, side, r.c.capacityPlan(0))
	if serr := side.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return 0, fmt.Errorf("naive: %w", err)
	}
	return capacity, nil
}

// startProduct starts examples/server as v says (v.postgres instances on
// one fresh PostgreSQL database, or one on a new SQLite file), creates a
// workspace, an API key, the whatsapp channel and one webhook endpoint
// through the operator and API routes, and returns the side.
func (r *capacityRunner) startProduct(ctx context.Context, name string, v productVariant) (side *capacitySide, err error) {
	r.n++
	dir := filepath.Join(r.dir, fmt.Sprintf("server-%d", r.n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var stops []func() error
	stopAll := func() error {
		var first error
		for i := len(stops) - 1; i >= 0; i-- {
			if err := stops[i](); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	defer func() {
		if err != nil {
			_ = stopAll()
		}
	}()
	stops = append(stops, func() error { return os.RemoveAll(dir) })
	hooks, err := newHookReceiver()
	if err != nil {
		return nil, err
	}
	stops = append(stops, func() error { hooks.close(); return nil })

	db := filepath.Join(dir, "server.sqlite")
	if v.postgres > 0 {
		url, drop, err := r.c.freshPostgres(ctx, fmt.Sprintf("capacity-%d", r.n))
		if err != nil {
			return nil, err
		}
		stops = append(stops, func() error { drop(); return nil })
		db = url
	}
	tokenFile := filepath.Join(dir, "admin-token")
	args := []string{"-db", db, "-rate-limits", "off", "-dispatch-rate", "off", "-webhooks-loopback",
		"-fake-delivered-after", fakeDeliveredAfter.String(), "-fake-read-after", fakeReadAfter.String(),
		"-admin-token-file", tokenFile, "-secret-key-file", filepath.Join(dir, "secret-key")}
	if v.requestLogOff {
		args = append(args, "-request-log", "off")
	}
	side = &capacitySide{name: name, target: &capTarget{hooks: hooks}, stop: stopAll}
	instances := max(1, v.postgres)
	var bases []string
	for i := range instances {
		a := args
		if v.metrics && i == 0 {
			addr, err := freeLoopbackAddr()
			if err != nil {
				return nil, err
			}
			a = append(a, "-metrics-addr", addr)
			side.metricsURL = "http://" + addr
		}
		// Instances start one after the other: the first creates the
		// key files, the schema and the demo workspace.
		p, err := startServer(ctx, r.bin, filepath.Join(dir, fmt.Sprintf("server-%d.log", i)), a...)
		if err != nil {
			return nil, err
		}
		stops = append(stops, p.stop)
		bases = append(bases, p.base)
		side.target.urls = append(side.target.urls, p.base+"/v1/messages")
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, err
	}
	key, err := setUpWorkspace(ctx, r.client, bases[0], strings.TrimSpace(string(token)), hooks.url)
	if err != nil {
		return nil, err
	}
	side.target.authHeader, side.target.authValue = "X-API-Key", key
	return side, nil
}

// setUpWorkspace creates, through the server at base, the workspace
// "capacity" (operator token), its API key, its whatsapp channel and a
// webhook endpoint at hook subscribed to message.status_updated, and
// returns the key.
func setUpWorkspace(ctx context.Context, client *http.Client, base, token, hook string) (string, error) {
	op := func(method, path, body string) ([]byte, error) {
		return call(ctx, client, method, base+path, "Authorization", "Bearer "+token, body)
	}
	if _, err := op("POST", "/admin/v1/workspaces", `{"id":"capacity","name":"Capacity"}`); err != nil {
		return "", err
	}
	b, err := op("POST", "/admin/v1/workspaces/capacity/api-keys", `{"name":"load","scopes":["write:messages","manage:channels","manage:webhooks"]}`)
	if err != nil {
		return "", err
	}
	var k struct{ Key string }
	if err := json.Unmarshal(b, &k); err != nil || k.Key == "" {
		return "", fmt.Errorf("POST /admin/v1/workspaces/capacity/api-keys: no key in %s", b)
	}
	api := func(method, path, body string) error {
		_, err := call(ctx, client, method, base+path, "X-API-Key", k.Key, body)
		return err
	}
	if err := api("PUT", "/v1/channels/whatsapp", `{"phone_number_id":"106540352242922","waba_id":"102290129340398","access_token":"EAAGcapacityToken000000000x9Qz"}`); err != nil {
		return "", err
	}
	if err := api("POST", "/v1/webhooks", fmt.Sprintf(`{"url":%q,"events":["message.status_updated"]}`, hook)); err != nil {
		return "", err
	}
	return k.Key, nil
}

// call sends a request with one authentication header and a JSON body
// (none when empty) and returns the answer's body; an answer other than
// 2xx is an error.
func call(ctx context.Context, client *http.Client, method, url, header, value, body string) ([]byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set(header, value)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: status %d: %s", method, url, resp.StatusCode, b)
	}
	return b, nil
}

// freeLoopbackAddr returns a loopback address whose port was free just
// now.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// scrapeEverySecond GETs url every second, as Prometheus would, until the
// returned function is called.
func scrapeEverySecond(ctx context.Context, client *http.Client, url string) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, _ = call(ctx, client, "GET", url, "Accept", "text/plain", "")
		}
	}()
	return func() { cancel(); <-done }
}

// searchCapacity returns the highest rate at which side holds, searched
// as p says (see the figure's comment).
func (c *config) searchCapacity(ctx context.Context, client *http.Client, side *capacitySide, p searchPlan) (float64, error) {
	t := side.target
	// probe loads t at rate for d and drains the backlog (unless last:
	// the side is done).
	probe := func(rate float64, d time.Duration, last bool) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		res := openLoad(ctx, client, t, rate, d)
		limits := capacityLimits
		if c.short {
			limits.horizon = 0 // a window of 1 s tells no growth rate
		}
		ok, why := limits.holds(res)
		verdict := "holds"
		if !ok {
			verdict = "fails: " + why
		}
		c.logf("capacity %s: %.0f/s for %s: p50 %s p99 %s, backlog %d to send (growing %.0f/s), %d to read, generator lag %s: %s", side.name, rate, d,
			res.p50.Round(10*time.Microsecond), res.p99.Round(10*time.Microsecond), res.sentBacklog, res.growth, res.readBacklog, res.lag.Round(10*time.Microsecond), verdict)
		if last {
			return ok, nil
		}
		if err := drain(ctx, t, p.maxDrain); err != nil {
			c.logf("capacity %s: the backlog did not drain after %.0f/s: %v", side.name, rate, err)
			return false, fmt.Errorf("%w: %w", errNotDrained, err)
		}
		return ok, nil
	}
	// stuck ends the search of a side whose backlog no longer drains: the
	// highest rate that held so far is its figure (an upper bound), and a
	// side that never held fails the figure.
	stuck := func(lo float64, err error) (float64, error) {
		if errors.Is(err, errNotDrained) && lo > 0 {
			c.logf("capacity %s: %.0f msg/s, the highest rate that held before the backlog stopped draining (not confirmed)", side.name, lo)
			return lo, nil
		}
		return 0, err
	}
	// Warm-up: the connections, the caches and the first webhook
	// connections, not judged (none with -short).
	if !c.short {
		_ = openLoad(ctx, client, t, p.start/2, p.probe/2)
		if err := drain(ctx, t, p.maxDrain); err != nil {
			return 0, err
		}
	}
	var lo, hi float64
	rate := p.start
	ok, err := probe(rate, p.probe, false)
	if err != nil {
		return stuck(lo, err)
	}
	for i := 0; ; i++ {
		if ok {
			lo = rate
			if i >= p.maxExpand {
				break
			}
			rate *= p.factor
		} else {
			hi = rate
			if lo > 0 {
				break
			}
			if rate /= p.factor; rate < 5 {
				return 0, fmt.Errorf("does not hold even at %.0f/s", rate*p.factor)
			}
		}
		if lo > 0 && hi > 0 {
			break
		}
		if ok, err = probe(rate, p.probe, false); err != nil {
			return stuck(lo, err)
		}
	}
	for hi > 0 && hi/lo > 1+p.resolution {
		mid := math.Sqrt(lo * hi)
		ok, err := probe(mid, p.probe, false)
		if err != nil {
			return stuck(lo, err)
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	if p.confirm == 0 {
		return lo, nil
	}
	for try := 0; ; try++ {
		ok, err := probe(lo, p.confirm, try == 1)
		if err != nil {
			return stuck(lo, err)
		}
		if ok {
			c.logf("capacity %s: %.0f msg/s (held for %s; %d webhooks received)", side.name, lo, p.confirm, t.hooks.total())
			return lo, nil
		}
		if try == 1 {
			c.logf("capacity %s: %.0f msg/s did not hold for %s after %d steps down; reporting it", side.name, lo, p.confirm, try)
			return lo, nil
		}
		lo /= 1.1
	}
}

// profile loads side at rate while it takes a 10 s CPU profile of the
// server (its /debug/pprof/profile on the metrics listener), writes it
// to dir and the top functions by cumulative time beside it, and logs
// the top.
func (r *capacityRunner) profile(ctx context.Context, side *capacitySide, rate float64, dir string) error {
	if side.metricsURL == "" {
		return fmt.Errorf("-capacity-profile needs the metrics listener")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var res *probeResult
	go func() {
		defer wg.Done()
		res = openLoad(ctx, r.client, side.target, rate, 12*time.Second)
	}()
	time.Sleep(time.Second)
	prof, err := call(ctx, &http.Client{Timeout: time.Minute}, "GET", side.metricsURL+"/debug/pprof/profile?seconds=10", "Accept", "*/*", "")
	wg.Wait()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "capacity-cpu.pprof")
	if err := os.WriteFile(path, prof, 0o644); err != nil {
		return err
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=40", r.bin, path).Output()
	if err != nil {
		return fmt.Errorf("go tool pprof: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "capacity-top.txt"), top, 0o644); err != nil {
		return err
	}
	c := r.c
	c.logf("capacity profile at %.0f/s (p99 %s): %s", rate, res.p99.Round(10*time.Microsecond), path)
	for _, line := range strings.Split(strings.TrimSpace(string(top)), "\n") {
		c.logf("  %s", line)
	}
	return drain(ctx, side.target, time.Minute)
}
