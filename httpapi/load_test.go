package httpapi_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// The load test: 64 clients for 5 s (30 s with MESSAGING_LONG=1) against
// the handler over TCP on SQLite, with the dispatcher running.

// nopProvider accepts every message and remembers nothing, so that the
// process's memory is the service's, not a test double's.
type nopProvider struct{ n atomic.Int64 }

// Channels makes the provider serve Meta's channels.
func (*nopProvider) Channels() []messaging.ChannelSpec { return metaprovider.ChannelSpecs() }

func (p *nopProvider) Send(ctx context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	return &messaging.SendReceipt{ProviderMessageID: "wamid.load." + strconv.FormatInt(p.n.Add(1), 10)}, nil
}

// latencies is a histogram of request durations in logarithmic buckets
// (about 4 % wide), so that its memory does not grow with the run.
type latencies struct {
	buckets [512]int64
	n       int64
}

func latencyBucket(d time.Duration) int {
	if d < time.Microsecond {
		return 0
	}
	return min(int(math.Log(float64(d/time.Microsecond))*25)+1, 511)
}

func (l *latencies) add(d time.Duration) { l.buckets[latencyBucket(d)]++; l.n++ }

func (l *latencies) merge(o *latencies) {
	for i, c := range o.buckets {
		l.buckets[i] += c
	}
	l.n += o.n
}

// quantile returns the upper bound of the bucket holding quantile q.
func (l *latencies) quantile(q float64) time.Duration {
	want := int64(math.Ceil(q * float64(l.n)))
	var seen int64
	for i, c := range l.buckets {
		seen += c
		if seen >= want && c > 0 {
			return time.Duration(math.Exp(float64(i)/25)) * time.Microsecond
		}
	}
	return 0
}

// Operations of the load mix.
const (
	opSend = iota
	opReplay
	opTemplate
	opContact
	opSearch
	opGetMessage
	opGetContact
	nOps
)

var opNames = [nOps]string{"send", "replay", "template send", "contact create", "search", "get message", "get contact"}

// loadClient is one of the 64 clients, bound to one workspace.
type loadClient struct {
	id, ws int
	key    string
	rng    *rand.Rand
	lat    [nOps]latencies
	codes  [nOps]map[int]int
	// recent accepted ids, to read back and replay.
	msgs, contacts []string
	keys           map[string]string // idempotency key -> message id, last few
	accepted       *bufio.Writer     // one line per accepted new message: ws id
	bad            []string
}

// TestLoad runs 64 clients, eight per workspace, mixing text sends (with
// idempotency keys, some replayed), template sends, contact creates,
// searches and reads, for 5 s (30 s with MESSAGING_LONG=1). It requires no
// 5xx; every accepted message stored exactly once (the database holds
// exactly the ids answered, replays answered with the original id); 429
// only on the route given a low limit, never more successes than its
// token bucket allows, each with Retry-After; the Go heap and the
// goroutines after the run no larger than after the warm-up (with a
// margin for noise). It logs p50 and p99 latency per operation. It is not
// parallel, so that the heap and goroutines it measures are its own.
func TestLoad(t *testing.T) {
	duration := 5 * time.Second
	if os.Getenv("MESSAGING_LONG") != "" {
		duration = 30 * time.Second
	}
	const (
		clients    = 64
		workspaces = 8
		// templatesPerMinute is the one low limit: template sends exceed it
		// even on a slow machine or under -race.
		templatesPerMinute = 12
	)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "load.db")
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := messaging.New(st, &nopProvider{}, &messaging.Options{Dispatch: messaging.DispatchOptions{PerSenderRate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, workspaces)
	for w := range workspaces {
		id := fmt.Sprintf("ws_load_%d", w)
		if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: id, Channels: svc.Channels()}); err != nil {
			t.Fatal(err)
		}
		if _, keys[w], err = svc.Workspace(id).APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Workspace(id).Templates.Create(ctx, &messaging.TemplateCreateParams{Name: "order_update", Category: record.CategoryUtility,
			Language: "en", Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi {{1}}, order {{2}} shipped."}}}); err != nil {
			t.Fatal(err)
		}
	}
	limits := map[string]int{"unauthenticated": 1 << 30}
	for _, rt := range httpapi.Routes() {
		limits[rt.Name()] = 1 << 30
	}
	limits["POST /v1/messages/templates"] = templatesPerMinute
	h := httpapi.New(svc, &httpapi.Options{RateLimits: limits})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	runCtx, stopRun := context.WithCancel(ctx)
	if err := svc.Start(runCtx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stopRun()
		_ = svc.Close(ctx)
	}()

	acceptedFile, err := os.Create(filepath.Join(dir, "accepted.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer acceptedFile.Close()
	var fileMu sync.Mutex
	transport := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}

	_, baseGoroutines, _ := memNow()
	start := time.Now()
	warm, late, end := start.Add(duration/5), start.Add(duration*19/20), start.Add(duration)
	var warmHeap, lateHeap uint64
	var warmRSS, lateRSS int64
	var warmOnce, lateOnce sync.Once
	cs := make([]*loadClient, clients)
	var wg sync.WaitGroup
	for i := range clients {
		c := &loadClient{id: i, ws: i % workspaces, key: keys[i%workspaces], rng: rand.New(rand.NewPCG(uint64(i), 42)), keys: map[string]string{}}
		for op := range nOps {
			c.codes[op] = map[int]int{}
		}
		cs[i] = c
		wg.Go(func() {
			var local strings.Builder
			for n := 0; time.Now().Before(end); n++ {
				// Client 0 measures the heap under load after the
				// warm-up and near the end.
				if now := time.Now(); i == 0 && now.After(warm) {
					warmOnce.Do(func() { warmHeap, _, warmRSS = memNow() })
					if now.After(late) {
						lateOnce.Do(func() { lateHeap, _, lateRSS = memNow() })
					}
				}
				c.step(client, srv.URL, n, &local)
				if local.Len() > 4096 {
					fileMu.Lock()
					_, _ = acceptedFile.WriteString(local.String())
					fileMu.Unlock()
					local.Reset()
				}
			}
			if i == 0 {
				// A slow last request (under -race on a loaded machine)
				// may span the whole late window: measure as it ends.
				warmOnce.Do(func() { warmHeap, _, warmRSS = memNow() })
				lateOnce.Do(func() { lateHeap, _, lateRSS = memNow() })
			}
			fileMu.Lock()
			_, _ = acceptedFile.WriteString(local.String())
			fileMu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	client.CloseIdleConnections()
	// The server's connection goroutines end once it sees the clients go.
	var endGoroutines uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, endGoroutines, _ = memNow(); endGoroutines <= baseGoroutines+2 || time.Now().After(deadline) {
			break
		}
	}

	// Statuses and latencies.
	var all latencies
	var byOp [nOps]latencies
	codes := [nOps]map[int]int{}
	for op := range nOps {
		codes[op] = map[int]int{}
	}
	perWS := make([]map[int]int, workspaces) // template sends by status, per workspace
	for w := range perWS {
		perWS[w] = map[int]int{}
	}
	for _, c := range cs {
		for op := range nOps {
			byOp[op].merge(&c.lat[op])
			all.merge(&c.lat[op])
			for code, k := range c.codes[op] {
				codes[op][code] += k
				if op == opTemplate {
					perWS[c.ws][code] += k
				}
			}
		}
		for _, b := range c.bad {
			t.Error(b)
		}
	}
	total := 0
	for op := range nOps {
		for code, k := range codes[op] {
			total += k
			if code >= 500 {
				t.Errorf("%s: %d answers %d", opNames[op], k, code)
			}
			if code == 429 && op != opTemplate {
				t.Errorf("%s: %d answers 429 with no limit in reach", opNames[op], k)
			}
		}
		t.Logf("%-15s %6d requests  p50 %8v  p99 %8v  statuses %v", opNames[op], byOp[op].n, byOp[op].quantile(0.5), byOp[op].quantile(0.99), codes[op])
	}
	t.Logf("all             %6d requests in %v (%.0f/s)  p50 %v  p99 %v", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), all.quantile(0.5), all.quantile(0.99))
	// The token bucket: at most the burst plus the refill over the run,
	// and every other attempt refused with 429.
	allowed := templatesPerMinute + int(math.Ceil(elapsed.Seconds()*templatesPerMinute/60)) + 1
	for w, m := range perWS {
		attempts := 0
		for _, k := range m {
			attempts += k
		}
		if m[201] > allowed || (attempts > allowed && m[429] == 0) || m[201]+m[429] != attempts {
			t.Errorf("workspace %d: template sends %v; at most %d may be accepted, the rest 429", w, m, allowed)
		}
	}

	// Every accepted message is stored, once, under the id answered.
	fileMu.Lock()
	_ = acceptedFile.Sync()
	fileMu.Unlock()
	answered := map[string]map[string]bool{}
	b, err := os.ReadFile(acceptedFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		ws, id, _ := strings.Cut(line, " ")
		if answered[ws] == nil {
			answered[ws] = map[string]bool{}
		}
		if answered[ws][id] {
			t.Errorf("message %s answered as new twice", id)
		}
		answered[ws][id] = true
		n++
	}
	ro, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rows, err := ro.Query(`SELECT workspace_id, id FROM messages`)
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for rows.Next() {
		var ws, id string
		if err := rows.Scan(&ws, &id); err != nil {
			t.Fatal(err)
		}
		stored++
		if !answered[ws][id] {
			t.Errorf("message %s stored but never answered as created", id)
		}
	}
	rows.Close()
	if stored != n {
		t.Errorf("%d messages answered as created, %d stored", n, stored)
	}

	// Memory: flat from the warm-up to the end.
	t.Logf("memory under load: heap %d KiB after the warm-up, %d KiB near the end; RSS %d KiB, %d KiB; goroutines %d before, %d after",
		warmHeap>>10, lateHeap>>10, warmRSS>>10, lateRSS>>10, baseGoroutines, endGoroutines)
	if lateHeap == 0 || lateHeap > warmHeap*3/2+8<<20 {
		t.Errorf("the heap grew from %d KiB after the warm-up to %d KiB near the end", warmHeap>>10, lateHeap>>10)
	}
	if !raceDetector && warmRSS > 0 && lateRSS > warmRSS+64<<20 {
		t.Errorf("RSS grew from %d KiB to %d KiB", warmRSS>>10, lateRSS>>10)
	}
	if endGoroutines > baseGoroutines+2 {
		t.Errorf("%d goroutines before the load, %d after it", baseGoroutines, endGoroutines)
	}
}

// memNow returns the live heap after a collection, the goroutine count and
// the resident set size (0 when /proc is not there).
func memNow() (heap, goroutines uint64, rss int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				rss = kb << 10
			}
		}
	}
	return ms.HeapAlloc, uint64(runtime.NumGoroutine()), rss
}

// step makes one request of the mix and checks its answer.
func (c *loadClient) step(client *http.Client, base string, n int, accepted *strings.Builder) {
	op := opSend
	switch r := c.rng.IntN(100); {
	case r < 35:
	case r < 40:
		op = opReplay
	case r < 50:
		op = opTemplate
	case r < 65:
		op = opContact
	case r < 80:
		op = opSearch
	case r < 90:
		op = opGetMessage
	default:
		op = opGetContact
	}
	if (op == opReplay && len(c.keys) == 0) || (op == opGetMessage && len(c.msgs) == 0) || (op == opGetContact && len(c.contacts) == 0) {
		op = opSend
	}
	phone := fmt.Sprintf("+2547%08d", c.id*1_000_000+n%1_000_000)
	var method, path, body, key string
	switch op {
	case opSend:
		key = fmt.Sprintf("c%d-%d", c.id, n)
		method, path, body = "POST", "/v1/messages", fmt.Sprintf(`{"channel":"whatsapp","to":%q,"type":"text","text":"load %d","idempotency_key":%q}`, phone, n, key)
	case opReplay:
		for k := range c.keys {
			key = k
			break
		}
		i, _ := strconv.Atoi(key[strings.IndexByte(key, '-')+1:])
		method, path, body = "POST", "/v1/messages", fmt.Sprintf(`{"channel":"whatsapp","to":"+2547%08d","type":"text","text":"load %d","idempotency_key":%q}`, c.id*1_000_000+i%1_000_000, i, key)
	case opTemplate:
		method, path, body = "POST", "/v1/messages/templates", fmt.Sprintf(`{"to":%q,"template_name":"order_update","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"A"},{"type":"text","text":"%d"}]}]}`, phone, n)
	case opContact:
		email := fmt.Sprintf("load%d.%d@example.com", c.id, n)
		if n%20 == 0 && n > 0 {
			email = fmt.Sprintf("load%d.%d@example.com", c.id, n-1) // a duplicate: 409
		}
		method, path, body = "POST", "/v1/contacts", fmt.Sprintf(`{"firstName":"Load %d","lastName":"Client %d","email":%q}`, n, c.id, email)
	case opSearch:
		method, path = "GET", "/v1/contacts?limit=20&search="+url.QueryEscape([]string{"load", "Load 1", "client", "+2547", "nobody"}[n%5])
	case opGetMessage:
		method, path = "GET", "/v1/messages/"+c.msgs[c.rng.IntN(len(c.msgs))]
	case opGetContact:
		method, path = "GET", "/v1/contacts/"+c.contacts[c.rng.IntN(len(c.contacts))]
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("X-API-Key", c.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		c.bad = append(c.bad, fmt.Sprintf("%s %s: %v", method, path, err))
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.lat[op].add(time.Since(t0))
	c.codes[op][resp.StatusCode]++
	if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
		c.bad = append(c.bad, fmt.Sprintf("%s: 429 without Retry-After", path))
	}
	var out struct {
		MessageID string `json:"message_id"`
		ID        string `json:"id"`
	}
	_ = json.Unmarshal(b, &out)
	keep := func(s []string, v string) []string {
		if len(s) >= 16 {
			s = s[1:]
		}
		return append(s, v)
	}
	switch {
	case op == opSend && resp.StatusCode == 201:
		if resp.Header.Get("Idempotent-Replayed") != "" {
			c.bad = append(c.bad, fmt.Sprintf("a new key %s was replayed", key))
		}
		c.msgs = keep(c.msgs, out.MessageID)
		if len(c.keys) >= 16 {
			for k := range c.keys {
				delete(c.keys, k)
				break
			}
		}
		c.keys[key] = out.MessageID
		fmt.Fprintf(accepted, "ws_load_%d %s\n", c.ws, out.MessageID)
	case op == opReplay:
		if resp.StatusCode != 201 || resp.Header.Get("Idempotent-Replayed") != "true" || out.MessageID != c.keys[key] {
			c.bad = append(c.bad, fmt.Sprintf("replay of %s: %d %q %s, want 201 replayed %s", key, resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), out.MessageID, c.keys[key]))
		}
	case op == opTemplate && resp.StatusCode == 201:
		c.msgs = keep(c.msgs, out.MessageID)
		fmt.Fprintf(accepted, "ws_load_%d %s\n", c.ws, out.MessageID)
	case op == opContact && resp.StatusCode == 201:
		c.contacts = keep(c.contacts, out.ID)
	case op == opContact && resp.StatusCode == 409 && n%20 == 0:
	case op == opTemplate && resp.StatusCode == 429:
	case resp.StatusCode >= 300:
		c.bad = append(c.bad, fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, b))
	}
}
