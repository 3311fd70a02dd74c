package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/internal/testclock"
)

// fault is one scripted answer of the fault server.
type fault struct {
	status     int
	retryAfter string
	// drop closes the connection without an answer.
	drop bool
}

// faultServer answers from a script, one fault per request, then 200 with
// ok; it records each request's body and Idempotency-Key header.
type faultServer struct {
	mu     sync.Mutex
	script []fault
	ok     string
	bodies []string
	keys   []string
	srv    *httptest.Server
}

func newFaultServer(t *testing.T, ok string, script ...fault) *faultServer {
	f := &faultServer{script: script, ok: ok}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(b))
	f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
	var ft *fault
	if len(f.script) > 0 {
		ft = &f.script[0]
		f.script = f.script[1:]
	}
	f.mu.Unlock()
	w.Header().Set("X-Correlation-ID", "req_fault")
	switch {
	case ft == nil:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, f.ok)
	case ft.drop:
		hj, _ := w.(http.Hijacker)
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
	default:
		if ft.retryAfter != "" {
			w.Header().Set("Retry-After", ft.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ft.status)
		code := "internal_error"
		switch ft.status {
		case 429:
			code = "rate_limit_exceeded"
		case 503:
			code = "service_unavailable"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": "fault", "statusCode": ft.status, "request_id": "req_fault"}})
	}
}

func (f *faultServer) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

const okMessage = `{"message_id":"msg_1","conversation_id":"conv_1","channel":"whatsapp","direction":"outbound","status":"queued","type":"text","created_at":"2026-03-01T09:00:00.000Z","updated_at":"2026-03-01T09:00:00.000Z"}`

// retryClient returns a client of f whose waits are recorded by sl, with
// jitter from jit and the clock clk (advanced by the waits).
func retryClient(t *testing.T, url string, sl *sleeps, jit func() float64, mod func(*client.Options)) *client.Client {
	t.Helper()
	o := &client.Options{Sleep: sl.Sleep, Jitter: jit, Clock: sl.clock.Now}
	if mod != nil {
		mod(o)
	}
	c, err := client.New(url, "mk_test", o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// within reports whether each wait is within 20 percent of its nominal
// length.
func within(t *testing.T, got, nominal []time.Duration) {
	t.Helper()
	if len(got) != len(nominal) {
		t.Fatalf("waits %v, want %d near %v", got, len(nominal), nominal)
	}
	for i, d := range got {
		lo, hi := time.Duration(float64(nominal[i])*0.8), time.Duration(float64(nominal[i])*1.2)
		if d < lo || d > hi {
			t.Errorf("wait %d: %v, want %v +-20%% (%v..%v)", i+1, d, nominal[i], lo, hi)
		}
	}
}

// TestBackoff: 429 without Retry-After, 503 and dropped connections are
// retried after 1 s, 2 s and 4 s, each +-20 %, whatever the jitter source
// gives, and the jitter does spread the waits.
func TestBackoff(t *testing.T) {
	nominal := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	for _, tt := range []struct {
		name   string
		script []fault
	}{
		{"429", []fault{{status: 429}, {status: 429}, {status: 429}}},
		{"503", []fault{{status: 503}, {status: 503}, {status: 503}}},
		{"500 502 504", []fault{{status: 500}, {status: 502}, {status: 504}}},
		{"dropped", []fault{{drop: true}, {drop: true}, {drop: true}}},
	} {
		for _, jit := range []struct {
			name string
			f    func() float64
			want []time.Duration
		}{
			{"low", func() float64 { return 0 }, []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}},
			{"mid", func() float64 { return 0.5 }, nominal},
			{"high", func() float64 { return 0.999999 }, nil},
		} {
			t.Run(tt.name+"/"+jit.name, func(t *testing.T) {
				f := newFaultServer(t, okMessage, tt.script...)
				sl := &sleeps{clock: testclock.New(t0)}
				m, err := retryClient(t, f.srv.URL, sl, jit.f, nil).Messages.Get(context.Background(), "msg_1")
				if err != nil {
					t.Fatal(err)
				}
				if m.Status != "queued" || f.requests() != 4 {
					t.Errorf("status %q after %d requests, want queued after 4", m.Status, f.requests())
				}
				within(t, sl.all(), nominal)
				if jit.want != nil {
					if diff := cmp.Diff(jit.want, sl.all()); diff != "" {
						t.Errorf("waits (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
}

// TestRetryAfter: a Retry-After longer than the backoff is waited (as
// seconds or as an HTTP date); a shorter one does not shorten the backoff.
func TestRetryAfter(t *testing.T) {
	sl := &sleeps{clock: testclock.New(t0)}
	date := t0.Add(7 * time.Second).Format(http.TimeFormat)
	f := newFaultServer(t, okMessage, fault{status: 429, retryAfter: "5"}, fault{status: 503, retryAfter: date}, fault{status: 429, retryAfter: "1"})
	if _, err := retryClient(t, f.srv.URL, sl, func() float64 { return 0.5 }, nil).Messages.Get(context.Background(), "msg_1"); err != nil {
		t.Fatal(err)
	}
	// The date is 7 s after t0; the clock is at t0+5 s when it is read.
	want := []time.Duration{5 * time.Second, 2 * time.Second, 4 * time.Second}
	if diff := cmp.Diff(want, sl.all()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestRetryLimits: attempts are capped by MaxAttempts, and by MaxElapsed
// (no retry whose wait would end after it); the last error is returned.
func TestRetryLimits(t *testing.T) {
	always := func(n int) []fault {
		s := make([]fault, n)
		for i := range s {
			s[i] = fault{status: 503}
		}
		return s
	}
	for _, tt := range []struct {
		name     string
		mod      func(*client.Options)
		requests int
	}{
		{"default attempts", nil, client.DefaultMaxAttempts},
		// Waits 1+2+4+8+16 s: 31 s, past the default MaxElapsed of 30 s.
		{"MaxAttempts 6", func(o *client.Options) { o.MaxAttempts = 6 }, 5},
		{"MaxAttempts 6 in a minute", func(o *client.Options) { o.MaxAttempts = 6; o.MaxElapsed = time.Minute }, 6},
		{"MaxAttempts 1", func(o *client.Options) { o.MaxAttempts = 1 }, 1},
		// Waits 1 s and 2 s fit in 5 s; the third (4 s) would end at 7 s.
		{"MaxElapsed 5s", func(o *client.Options) { o.MaxAttempts = 10; o.MaxElapsed = 5 * time.Second }, 3},
		// A Retry-After of 40 s does not fit in 30 s: one request.
		{"Retry-After past MaxElapsed", func(o *client.Options) { o.MaxElapsed = 30 * time.Second }, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := always(10)
			if tt.name == "Retry-After past MaxElapsed" {
				script = []fault{{status: 429, retryAfter: "40"}}
			}
			f := newFaultServer(t, okMessage, script...)
			sl := &sleeps{clock: testclock.New(t0)}
			_, err := retryClient(t, f.srv.URL, sl, func() float64 { return 0.5 }, tt.mod).Messages.Get(context.Background(), "msg_1")
			ce := apiError(t, err)
			if !ce.Temporary() || ce.CorrelationID != "req_fault" {
				t.Errorf("last error %v", err)
			}
			if f.requests() != tt.requests {
				t.Errorf("%d requests, want %d", f.requests(), tt.requests)
			}
		})
	}
}

// TestRetryDeadline: the context's deadline wins over the policy: no
// retry starts whose wait would pass it, and a cancelled context stops
// the waiting.
func TestRetryDeadline(t *testing.T) {
	f := newFaultServer(t, okMessage, fault{status: 503}, fault{status: 503}, fault{status: 503})
	sl := &sleeps{clock: testclock.New(t0)}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := retryClient(t, f.srv.URL, sl, func() float64 { return 0.5 }, nil).Messages.Get(ctx, "msg_1")
	if apiError(t, err).StatusCode != 503 {
		t.Fatalf("%v, want the last 503", err)
	}
	// The 1 s wait fits before the deadline; the 2 s one does not.
	if f.requests() != 2 || len(sl.all()) != 1 {
		t.Errorf("%d requests, waits %v; want 2 requests and one wait", f.requests(), sl.all())
	}

	f = newFaultServer(t, okMessage, fault{status: 503}, fault{status: 503})
	ctx, cancel = context.WithCancel(context.Background())
	stop := &client.Options{Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }}
	c, err := client.New(f.srv.URL, "mk_test", stop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Messages.Get(ctx, "msg_1"); apiError(t, err).StatusCode != 503 || f.requests() != 1 {
		t.Errorf("cancelled during the wait: %v after %d requests", err, f.requests())
	}
}

// TestRetryOnlySafe: a POST without an idempotency key is never retried
// (a contact create, a PATCH); a send always carries one, the same in
// every attempt, and is retried; 4xx other than 429 are never retried.
func TestRetryOnlySafe(t *testing.T) {
	ctx := context.Background()
	mid := func() float64 { return 0.5 }
	t.Run("POST without key", func(t *testing.T) {
		for _, ft := range []fault{{status: 503}, {status: 429}, {drop: true}} {
			f := newFaultServer(t, `{}`, ft, ft, ft)
			c := retryClient(t, f.srv.URL, &sleeps{clock: testclock.New(t0)}, mid, nil)
			if _, err := c.Contacts.Create(ctx, &client.ContactCreateParams{FirstName: "A", Email: "a@example.com"}); err == nil {
				t.Fatal("no error")
			}
			name := "x"
			if _, err := c.Contacts.Update(ctx, "ct_1", &client.ContactUpdateParams{FirstName: &name}); err == nil {
				t.Fatal("no error")
			}
			if f.requests() != 2 {
				t.Errorf("%+v: %d requests for a create and a patch, want 2", ft, f.requests())
			}
		}
	})
	t.Run("4xx", func(t *testing.T) {
		f := newFaultServer(t, okMessage, fault{status: 400}, fault{status: 404}, fault{status: 409})
		c := retryClient(t, f.srv.URL, &sleeps{clock: testclock.New(t0)}, mid, nil)
		for range 3 {
			if _, err := c.Messages.Get(ctx, "msg_1"); err == nil {
				t.Fatal("no error")
			}
		}
		if f.requests() != 3 {
			t.Errorf("%d requests for 3 calls answered 4xx", f.requests())
		}
	})
	t.Run("send keeps its key", func(t *testing.T) {
		f := newFaultServer(t, `{"message_id":"msg_1","status":"queued"}`, fault{drop: true}, fault{status: 503}, fault{status: 429})
		c := retryClient(t, f.srv.URL, &sleeps{clock: testclock.New(t0)}, mid, nil)
		if _, err := c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, b := range f.bodies {
			var p client.SendParams
			if err := json.Unmarshal([]byte(b), &p); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, p.IdempotencyKey)
		}
		if len(keys) != 4 || len(keys[0]) != 36 || keys[1] != keys[0] || keys[2] != keys[0] || keys[3] != keys[0] {
			t.Errorf("idempotency keys of the attempts: %q, want one UUID 4 times", keys)
		}
		// The next send gets a new key; the caller's key is kept.
		if _, err := c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		p := &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi", IdempotencyKey: "mine"}
		if _, err := c.Messages.Send(ctx, p); err != nil {
			t.Fatal(err)
		}
		last := func(i int) string {
			var p client.SendParams
			_ = json.Unmarshal([]byte(f.bodies[i]), &p)
			return p.IdempotencyKey
		}
		if last(4) == keys[0] || last(4) == "" || last(5) != "mine" || p.IdempotencyKey != "mine" {
			t.Errorf("keys of the next sends: %q, %q", last(4), last(5))
		}
	})
	t.Run("SMS send keeps its key", func(t *testing.T) {
		f := newFaultServer(t, `{"response-code":200,"id":"sms_1","status":"sent"}`, fault{drop: true}, fault{status: 503, retryAfter: "2"})
		sl := &sleeps{clock: testclock.New(t0)}
		c, err := client.NewSMS(f.srv.URL, smsPartner, smsKey, &client.Options{Sleep: sl.Sleep, Jitter: mid, Clock: sl.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Send(ctx, &client.SMSSendParams{Mobile: "254712345678", Message: "x", Shortcode: "ACME"}); err != nil {
			t.Fatal(err)
		}
		if len(f.keys) != 3 || f.keys[0] == "" || f.keys[1] != f.keys[0] || f.keys[2] != f.keys[0] {
			t.Errorf("Idempotency-Key of the attempts: %q", f.keys)
		}
		if !bytes.Contains([]byte(f.bodies[0]), []byte(`"apikey":"`+smsKey+`"`)) {
			t.Errorf("credentials not in the body: %s", f.bodies[0])
		}
		// A bulk naming two accounts gets no key and is not retried.
		f = newFaultServer(t, `{"responses":[]}`, fault{status: 503}, fault{status: 503})
		c, _ = client.NewSMS(f.srv.URL, smsPartner, smsKey, &client.Options{Sleep: sl.Sleep, Jitter: mid, Clock: sl.clock.Now})
		_, err = c.Bulk(ctx, &client.SMSBulkParams{Items: []*client.SMSBulkItem{{Mobile: "254712345678"}, {PartnerID: "other", Mobile: "254712345678"}}})
		if err == nil || f.requests() != 1 || f.keys[0] != "" {
			t.Errorf("mixed bulk: %v after %d requests with key %q", err, f.requests(), f.keys[0])
		}
	})
}

// TestRetriedSendSendsOnce: a send whose first attempt reached the server
// but lost its answer (the connection dropped after the message was
// stored), then met a 503, creates exactly one message: the retry with the
// same key is answered with the first result, replayed.
func TestRetriedSendSendsOnce(t *testing.T) {
	e := setup(t)
	before := e.store.created.Load()
	var mu sync.Mutex
	attempt := 0
	api := e.srv.Config.Handler
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		attempt++
		n := attempt
		mu.Unlock()
		switch n {
		case 1: // served, then the answer is lost
			api.ServeHTTP(httptest.NewRecorder(), r)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			api.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(proxy.Close)
	sl := &sleeps{clock: testclock.New(t0)}
	c, err := client.New(proxy.URL, e.A.Key, &client.Options{Sleep: sl.Sleep, Jitter: func() float64 { return 0.5 }, Clock: sl.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Messages.Send(context.Background(), &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "exactly once"})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.store.created.Load() - before; got != 1 || attempt != 3 || !res.Replayed {
		t.Errorf("%d messages created in %d attempts (replayed %v), want 1 in 3, replayed", got, attempt, res.Replayed)
	}
	m, err := c.Messages.Get(context.Background(), res.MessageID)
	if err != nil || m.Status != messaging.StatusQueued {
		t.Errorf("the message: %+v, %v", m, err)
	}
	// Without the client's key the same faults would have sent twice:
	// the retry would be a new request. The client does not retry a POST
	// without a key, so it cannot: see TestRetryOnlySafe.
	if errors.Is(err, &client.Error{Code: client.CodeNotFound}) {
		t.Fatal("not found")
	}
}

// TestRetryAfterBad: an unreadable or negative Retry-After is ignored (the
// backoff applies); an enormous one is past MaxElapsed, so no retry.
func TestRetryAfterBad(t *testing.T) {
	sl := &sleeps{clock: testclock.New(t0)}
	f := newFaultServer(t, okMessage, fault{status: 429, retryAfter: "soon"}, fault{status: 429, retryAfter: "-5"}, fault{status: 503, retryAfter: "1.5"})
	if _, err := retryClient(t, f.srv.URL, sl, func() float64 { return 0.5 }, nil).Messages.Get(context.Background(), "msg_1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, sl.all()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	f = newFaultServer(t, okMessage, fault{status: 429, retryAfter: "99999999999999999"})
	_, err := retryClient(t, f.srv.URL, sl, func() float64 { return 0.5 }, nil).Messages.Get(context.Background(), "msg_1")
	if ce := apiError(t, err); ce.RetryAfter != 24*time.Hour || f.requests() != 1 {
		t.Errorf("enormous Retry-After: %v (%v) after %d requests", err, ce.RetryAfter, f.requests())
	}
}

// TestMediaRetry: Messages.Media is retried until an answer starts (a 503
// then the bytes), never once its body is being read: a body cut off
// mid-stream is a read error of the caller's, after one request.
func TestMediaRetry(t *testing.T) {
	ctx := context.Background()
	sl := &sleeps{clock: testclock.New(t0)}
	f := newFaultServer(t, "the media bytes", fault{status: 503}, fault{drop: true})
	m, err := retryClient(t, f.srv.URL, sl, func() float64 { return 0.5 }, nil).Messages.Media(ctx, "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(m.Body)
	_ = m.Body.Close()
	if err != nil || string(b) != "the media bytes" || m.ContentLength != int64(len(b)) || f.requests() != 3 {
		t.Errorf("after a 503 and a dropped connection: %q (length %d) %v in %d requests, want the bytes in 3", b, m.ContentLength, err, f.requests())
	}

	var n sync.Mutex
	requests := 0
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Lock()
		requests++
		n.Unlock()
		w.Header().Set("Content-Type", "image/jpeg")
		w.Header().Set("Content-Length", "1000")
		w.Header().Set("Content-Disposition", `attachment; filename="scan.pdf"`)
		_, _ = io.WriteString(w, "the first bytes")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	t.Cleanup(cut.Close)
	m, err = retryClient(t, cut.URL, sl, func() float64 { return 0.5 }, nil).Messages.Media(ctx, "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	if m.ContentType != "image/jpeg" || m.ContentLength != 1000 || m.Filename != "scan.pdf" {
		t.Errorf("headers: %+v", m)
	}
	b, err = io.ReadAll(m.Body)
	_ = m.Body.Close()
	n.Lock()
	defer n.Unlock()
	if err == nil || requests != 1 {
		t.Errorf("a body cut off: %q, %v in %d requests, want a read error after 1", b, err, requests)
	}
}
