package client_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/ujumbe/messaging/client"
)

// countingTransport counts the requests made through it and keeps the
// last one's headers.
type countingTransport struct {
	n    atomic.Int64
	last atomic.Pointer[http.Header]
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	h := r.Header.Clone()
	c.last.Store(&h)
	return http.DefaultTransport.RoundTrip(r)
}

// TestOptions: the given *http.Client makes the requests, with the given
// User-Agent (or the default), the API key and JSON headers.
func TestOptions(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	for _, tt := range []struct{ ua, want string }{{"", client.DefaultUserAgent}, {"billing/2.1", "billing/2.1"}} {
		rt := &countingTransport{}
		c, err := client.New(e.srv.URL+"/", e.A.Key, &client.Options{HTTPClient: &http.Client{Transport: rt}, UserAgent: tt.ua})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Messages.Get(ctx, e.A.Message.MessageID); err != nil {
			t.Fatal(err)
		}
		h := *rt.last.Load()
		if rt.n.Load() != 1 || h.Get("User-Agent") != tt.want || h.Get("X-API-Key") != e.A.Key || h.Get("Accept") != "application/json" {
			t.Errorf("%d requests, headers %v; want 1 with User-Agent %q and the key", rt.n.Load(), h, tt.want)
		}
	}
}

// TestNilContextIsRefused: every client answers a nil context with an
// error, without a request and without a panic.
func TestNilContextIsRefused(t *testing.T) {
	var rt countingTransport
	opts := &client.Options{HTTPClient: &http.Client{Transport: &rt}}
	c, err := client.New("http://127.0.0.1:1", "mk_test", opts)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.NewAdmin("http://127.0.0.1:1", "op_test", opts)
	if err != nil {
		t.Fatal(err)
	}
	smsc, err := client.NewSMS("http://127.0.0.1:1", "1234", "key", opts)
	if err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context
	for name, call := range map[string]func() error{
		"Messages.Get": func() error { _, err := c.Messages.Get(nilCtx, "msg_1"); return err },
		"GetWorkspace": func() error { _, err := admin.GetWorkspace(nilCtx, "acme"); return err },
		"SMS Balance":  func() error { _, err := smsc.Balance(nilCtx); return err },
	} {
		if err := call(); err == nil || err.Error() != "client: a nil context" {
			t.Errorf("%s with a nil context: %v, want client: a nil context", name, err)
		}
	}
	if n := rt.n.Load(); n != 0 {
		t.Errorf("%d requests made with a nil context, want none", n)
	}
}
