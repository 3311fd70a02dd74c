package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The open-loop load generator of the capacity figure: requests start on
// a fixed schedule whatever the server does (not closed-loop clients that
// wait for an answer before the next request), each in a goroutine of its
// own over a large pool of keep-alive connections, and each latency runs
// from the request's scheduled time, so that a server falling behind
// shows in the latencies instead of slowing the load down (coordinated
// omission).

// capTarget is a service under load: one or more instances loaded in
// turn (round-robin), the header carrying the API key, and the receiver
// of its webhooks.
type capTarget struct {
	// urls are the POST /v1/messages URLs of the instances.
	urls []string
	// authHeader and authValue carry the key ("X-API-Key: <key>" or
	// "Authorization: Bearer <key>").
	authHeader, authValue string
	hooks                 *hookReceiver
	// accepted counts the 201 answers since the target started.
	accepted atomic.Int64
	// sent numbers the requests, for distinct recipients.
	sent atomic.Int64
}

// probeResult is what one window of open-loop load did.
type probeResult struct {
	rate     float64
	requests int
	errors   int
	firstErr string
	p50, p99 time.Duration
	// sentBacklog is the messages accepted and not yet reported sent
	// (through the webhook) at the end of the schedule; readBacklog those
	// not yet reported read.
	sentBacklog, readBacklog int64
	// growth is how fast the sent backlog grew over the window (after its
	// first half second), in messages a second: the slope of a least
	// squares line through samples taken every 50 ms.
	growth float64
	d      time.Duration
	// lag is how late the generator started its last request (its own
	// shortfall, included in the latencies).
	lag time.Duration
}

// holdLimits are the rule a rate must meet to hold.
type holdLimits struct {
	// horizon is how long a rate must hold: a shorter window holds only
	// if its backlog, grown at the rate measured, would still be within
	// the limit at the horizon.
	horizon time.Duration
	p99     time.Duration
	// backlog is how many seconds of arrivals may be waiting to be sent
	// at the end; readSlack is added for the read reports, which come the
	// fake provider's delays after the send.
	backlog, readSlack time.Duration
}

// holds reports whether r meets the limits, and why not.
func (l holdLimits) holds(r *probeResult) (bool, string) {
	switch {
	case r.errors > 0:
		return false, fmt.Sprintf("%d errors (%s)", r.errors, r.firstErr)
	case r.p99 > l.p99:
		return false, fmt.Sprintf("p99 %s > %s", r.p99.Round(100*time.Microsecond), l.p99)
	case float64(r.sentBacklog) > r.rate*l.backlog.Seconds():
		return false, fmt.Sprintf("%d accepted not yet sent > %s of arrivals", r.sentBacklog, l.backlog)
	case r.d < l.horizon && float64(r.sentBacklog)+max(0, r.growth)*(l.horizon-r.d).Seconds() > r.rate*l.backlog.Seconds():
		return false, fmt.Sprintf("the backlog grows %.0f/s: %s of arrivals before %s", r.growth, l.backlog, l.horizon)
	case float64(r.readBacklog) > r.rate*(l.backlog+l.readSlack).Seconds():
		return false, fmt.Sprintf("%d accepted not yet read > %s of arrivals", r.readBacklog, l.backlog+l.readSlack)
	}
	return true, ""
}

// capMessage is the body of every request: a text message to a distinct
// recipient whose number ends in neither 0000 nor 0408 (which the fake
// provider fails or leaves unanswered).
func capMessage(k int64) string {
	n := k % 9_000_000
	return fmt.Sprintf(`{"channel":"whatsapp","to":"+25471%03d%04d","type":"text","text":"Your order A-1042 has shipped."}`, n/9000, 1000+n%9000)
}

// newLoadClient returns the client of the open-loop load: keep-alive
// connections, as many as the arrivals in flight need, up to 1,024.
func newLoadClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 1024, DisableCompression: true,
		IdleConnTimeout: time.Minute,
	}}
}

// openLoad sends rate requests a second to t for d, on a schedule, and
// returns their latencies' percentiles, the errors and the backlog at the
// end of the schedule. It returns once every request has ended.
func openLoad(ctx context.Context, client *http.Client, t *capTarget, rate float64, d time.Duration) *probeResult {
	n := max(1, int(rate*d.Seconds()))
	lat := make([]time.Duration, n)
	var errs atomic.Int64
	var firstErr atomic.Pointer[string]
	var wg sync.WaitGroup
	start := time.Now().Add(5 * time.Millisecond)
	res := &probeResult{rate: rate, requests: n, d: d}
	sampling := make(chan []float64, 1)
	go func() { sampling <- sampleBacklog(ctx, t, start.Add(500*time.Millisecond), start.Add(d)) }()
	for i := range n {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(at); wait > 0 {
			select {
			case <-ctx.Done():
				return res
			case <-time.After(wait):
			}
		}
		if i == n-1 {
			res.lag = time.Since(at)
		}
		k := t.sent.Add(1)
		url := t.urls[int(k)%len(t.urls)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := postMessage(ctx, client, t, url, capMessage(k))
			lat[i] = time.Since(at)
			if err != nil {
				if errs.Add(1) == 1 {
					s := err.Error()
					firstErr.Store(&s)
				}
				return
			}
			t.accepted.Add(1)
		}()
	}
	// The backlog when the last arrival is due (plus the time its answer
	// takes), before the drain.
	time.Sleep(time.Until(start.Add(d)))
	acc := t.accepted.Load()
	res.sentBacklog = acc - t.hooks.sent.Load()
	res.readBacklog = acc - t.hooks.read.Load()
	res.growth = slope(<-sampling)
	wg.Wait()
	res.errors = int(errs.Load())
	if p := firstErr.Load(); p != nil {
		res.firstErr = *p
	}
	res.p50, res.p99 = percentile(lat, 50), percentile(lat, 99)
	return res
}

// sampleBacklog samples t's sent backlog every 50 ms from from until
// until (the values at 50 ms intervals).
func sampleBacklog(ctx context.Context, t *capTarget, from, until time.Time) []float64 {
	var ys []float64
	for at := from; at.Before(until) && ctx.Err() == nil; at = at.Add(50 * time.Millisecond) {
		time.Sleep(time.Until(at))
		ys = append(ys, float64(t.accepted.Load()-t.hooks.sent.Load()))
	}
	return ys
}

// slope returns the least squares slope of ys sampled every 50 ms, per
// second (0 for fewer than 2 samples).
func slope(ys []float64) float64 {
	n := float64(len(ys))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i, y := range ys {
		x := float64(i) * 0.05
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// postMessage sends one message; any answer but 201 is an error.
func postMessage(ctx context.Context, client *http.Client, t *capTarget, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set(t.authHeader, t.authValue)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST /v1/messages: status %d: %.200s", resp.StatusCode, b)
	}
	return nil
}

// drain waits until every accepted message of t has been reported read,
// or until max has passed.
func drain(ctx context.Context, t *capTarget, max time.Duration) error {
	deadline := time.Now().Add(max)
	for {
		acc := t.accepted.Load()
		if t.hooks.sent.Load() >= acc && t.hooks.read.Load() >= acc {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s, %d accepted messages not reported sent and %d not reported read (webhooks)",
				max, acc-t.hooks.sent.Load(), acc-t.hooks.read.Load())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// hookReceiver is a loopback HTTP server answering 200 to every POST,
// counting the message.status_updated events by status.
type hookReceiver struct {
	srv                   *http.Server
	url                   string
	sent, delivered, read atomic.Int64
	other                 atomic.Int64
}

// newHookReceiver starts a receiver on a free loopback port.
func newHookReceiver() (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hookReceiver{url: "http://" + ln.Addr().String() + "/hooks"}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

// hookEvent is the part of a webhook's body the receiver reads.
type hookEvent struct {
	Type string `json:"type"`
	Data struct {
		Status string `json:"status"`
	} `json:"data"`
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev hookEvent
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&ev) != nil || ev.Type != "message.status_updated" {
		h.other.Add(1)
		w.WriteHeader(http.StatusOK)
		return
	}
	switch ev.Data.Status {
	case "sent":
		h.sent.Add(1)
	case "delivered":
		h.delivered.Add(1)
	case "read":
		h.read.Add(1)
	default:
		h.other.Add(1)
	}
	w.WriteHeader(http.StatusOK)
}

// total is the number of POSTs received.
func (h *hookReceiver) total() int64 {
	return h.sent.Load() + h.delivered.Load() + h.read.Load() + h.other.Load()
}

func (h *hookReceiver) close() { _ = h.srv.Close() }
