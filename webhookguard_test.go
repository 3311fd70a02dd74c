package messaging_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
)

// recordingStore keeps the outcome of every webhook delivery attempt.
type recordingStore struct {
	driver.Store
	mu      sync.Mutex
	records []driver.WebhookRecordParams
}

func (s *recordingStore) WebhookRecord(ctx context.Context, p *driver.WebhookRecordParams) error {
	s.mu.Lock()
	s.records = append(s.records, *p)
	s.mu.Unlock()
	return s.Store.WebhookRecord(ctx, p)
}

// guardedAttempt creates an endpoint at rawURL, makes one message event
// and one delivery attempt under opts, and returns the attempt's recorded
// error ("" when it was delivered).
func guardedAttempt(t *testing.T, rawURL string, opts messaging.WebhookOptions) string {
	t.Helper()
	ctx := context.Background()
	st := &recordingStore{Store: memstore.New()}
	svc, err := messaging.New(st, newScripted(), &messaging.Options{Clock: newFakeClock(t0).Now, SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: opts})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	// The URL may be one the guard refuses at creation too: it is created
	// through a service that allows every address, on the same store and
	// secret key, to test the guard at connect time.
	if _, _, err := createAnyWebhook(st, "acme", rawURL); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.DeliverWebhooksDue(ctx); err != nil || n != 1 {
		t.Fatalf("%s: %d attempts, %v", rawURL, n, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.records) != 1 {
		t.Fatalf("%s: %d outcomes recorded", rawURL, len(st.records))
	}
	r := st.records[0]
	if r.State == record.DeliveryDelivered {
		return ""
	}
	return r.LastError
}

// createAnyWebhook creates an endpoint in st at rawURL, whatever address
// it names, through a service with AllowPrivate and the zero secret key of
// the tests.
func createAnyWebhook(st driver.Store, ws, rawURL string) (*messaging.WebhookEndpoint, string, error) {
	svc, err := messaging.New(st, newScripted(), &messaging.Options{SecretKey: make([]byte, 32), Webhooks: messaging.WebhookOptions{AllowPrivate: true}})
	if err != nil {
		return nil, "", err
	}
	return svc.Workspace(ws).Webhooks.Create(context.Background(), &messaging.WebhookCreateParams{URL: rawURL})
}

const guardError = "webhook endpoint resolves to a loopback, private or link-local address"

// countingHandler counts requests and answers 200.
type countingHandler struct {
	mu sync.Mutex
	n  int
}

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
}

func (h *countingHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// TestWebhookGuardAddresses: with the defaults, a webhook never reaches a
// loopback, private, link-local, unspecified or multicast address, however
// the URL names it (a DNS name that resolves to loopback, an IPv4-mapped
// IPv6 address, 0.0.0.0); the guard runs on the address actually dialled,
// after resolution, so it refuses before any byte is sent. AllowLoopback
// lets loopback through and nothing else; AllowPrivate lets all through.
func TestWebhookGuardAddresses(t *testing.T) {
	t.Parallel()
	rcv := &countingHandler{}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	at := func(host string) string { return "http://" + net.JoinHostPort(host, port) + "/hook" }
	if addrs, err := net.LookupHost("localhost"); err != nil || len(addrs) == 0 {
		t.Skipf("localhost does not resolve here: %v", err)
	}
	tests := []struct {
		name string
		url  string
		opts messaging.WebhookOptions
		want string // the recorded error; "" for delivered
	}{
		{"loopback by IP", at("127.0.0.1"), messaging.WebhookOptions{}, guardError},
		{"loopback by DNS name", at("localhost"), messaging.WebhookOptions{}, guardError},
		{"loopback by IPv4-mapped IPv6", at("::ffff:127.0.0.1"), messaging.WebhookOptions{}, guardError},
		{"loopback elsewhere in 127/8", at("127.10.20.30"), messaging.WebhookOptions{}, guardError},
		{"IPv6 loopback", at("::1"), messaging.WebhookOptions{}, guardError},
		{"unspecified 0.0.0.0", at("0.0.0.0"), messaging.WebhookOptions{}, guardError},
		{"unspecified ::", at("::"), messaging.WebhookOptions{AllowLoopback: true}, guardError},
		{"private 10/8", "http://10.1.2.3:9/hook", messaging.WebhookOptions{}, guardError},
		{"private 192.168/16", "http://192.168.1.1/hook", messaging.WebhookOptions{AllowLoopback: true}, guardError},
		{"private 172.16/12", "https://172.20.0.1/hook", messaging.WebhookOptions{}, guardError},
		{"cloud metadata (link-local)", "http://169.254.169.254/latest/meta-data/", messaging.WebhookOptions{AllowLoopback: true}, guardError},
		{"IPv6 unique local", "http://[fd00::1]/hook", messaging.WebhookOptions{}, guardError},
		{"IPv6 link-local", "http://[fe80::1]/hook", messaging.WebhookOptions{}, guardError},
		{"multicast", "http://224.0.0.1/hook", messaging.WebhookOptions{}, guardError},
		{"carrier-grade NAT 100.64/10", "http://100.100.100.200/hook", messaging.WebhookOptions{AllowLoopback: true}, guardError},
		{"NAT64 of a private IPv4", "http://[64:ff9b::a00:1]/hook", messaging.WebhookOptions{}, guardError},
		{"loopback by DNS name, loopback allowed", at("localhost"), messaging.WebhookOptions{AllowLoopback: true}, ""},
		{"loopback by IP, private allowed", at("127.0.0.1"), messaging.WebhookOptions{AllowPrivate: true}, ""},
	}
	delivered := 0
	for _, tc := range tests {
		before := rcv.count()
		got := guardedAttempt(t, tc.url, tc.opts)
		if got != tc.want {
			t.Errorf("%s (%s): outcome %q, want %q", tc.name, tc.url, got, tc.want)
		}
		if tc.want == "" {
			delivered++
		} else if rcv.count() != before {
			t.Errorf("%s: the receiver was reached", tc.name)
		}
	}
	if rcv.count() != delivered {
		t.Errorf("receiver saw %d requests, want %d", rcv.count(), delivered)
	}
}

// TestWebhookGuardSpecialPurposeRanges: every range of the IANA IPv4 and
// IPv6 Special-Purpose Address Registries (and multicast) is refused
// before a connection is made, not only the well-known private ones;
// IPv4-mapped, IPv4-compatible and 6to4 addresses are judged by the IPv4
// address they carry. AllowLoopback opens none of them.
func TestWebhookGuardSpecialPurposeRanges(t *testing.T) {
	t.Parallel()
	for _, host := range []string{
		"0.1.2.3", "0.255.255.255", // 0.0.0.0/8
		"192.0.0.8", "192.0.0.170", // 192.0.0.0/24
		"192.0.2.10", "198.51.100.7", "203.0.113.200", // documentation
		"198.18.0.1", "198.19.255.254", // benchmarking
		"192.31.196.1", "192.52.193.1", "192.88.99.1", "192.175.48.1",
		"240.0.0.1", "250.1.2.3", "255.255.255.255", // reserved, broadcast
		"239.255.255.250",                                        // multicast
		"::ffff:0.1.2.3", "::ffff:198.18.0.1", "::ffff:10.0.0.1", // IPv4-mapped
		"::10.0.0.1", "::127.0.0.1", "::192.0.2.1", // IPv4-compatible
		"2002:a00:1::", "2002:7f00:1::1", "2002:c000:201::", // 6to4 of 10.0.0.1, 127.0.0.1, 192.0.2.1
		"100::1", "100::ffff:ffff:ffff:ffff", "100:0:0:1::1", // discard-only, dummy
		"2001::1", "2001:2::1", "2001:20::1", "2001:1ff:ffff::1", // 2001::/23
		"2001:db8::1", "2001:db8:ffff::1", // documentation
		"3fff::1", "3fff:fff:ffff::1", // documentation
		"5f00::1",                          // SRv6 SIDs
		"64:ff9b:1::1", "64:ff9b::808:808", // NAT64
		"fc00::1", "fdff::1", "fe80::1", "febf::1", "fec0::1", // local
		"ff02::1", "ff0e::1", // multicast
	} {
		u := "http://" + net.JoinHostPort(host, "9") + "/hook"
		if got := guardedAttempt(t, u, messaging.WebhookOptions{AllowLoopback: true}); got != guardError {
			t.Errorf("%s: outcome %q, want %q", host, got, guardError)
		}
	}
}

// TestWebhookAddressAllowed: the guard's decision per address and option,
// including the public addresses it must let through.
func TestWebhookAddressAllowed(t *testing.T) {
	t.Parallel()
	none, loop, priv := messaging.WebhookOptions{}, messaging.WebhookOptions{AllowLoopback: true}, messaging.WebhookOptions{AllowPrivate: true}
	for _, tc := range []struct {
		host             string
		none, loop, priv bool
	}{
		{"8.8.8.8", true, true, true},
		{"1.1.1.1", true, true, true},
		{"192.0.3.1", true, true, true},  // just past TEST-NET-1
		{"198.20.0.1", true, true, true}, // just past 198.18/15
		{"223.255.255.255", true, true, true},
		{"2606:4700:4700::1111", true, true, true},
		{"2001:200::1", true, true, true}, // just past 2001::/23
		{"::ffff:8.8.8.8", true, true, true},
		{"2002:808:808::1", true, true, true}, // 6to4 of 8.8.8.8
		{"127.0.0.1", false, true, true},
		{"::1", false, true, true},
		{"::ffff:127.0.0.1", false, true, true},
		{"2002:7f00:1::1", false, false, true}, // embeds loopback, is not loopback
		{"0.0.0.0", false, false, true},
		{"0.1.2.3", false, false, true},
		{"::", false, false, true},
		{"fe80::1%eth0", false, false, true},
		{"240.0.0.1", false, false, true},
		{"not-an-ip", false, false, false},
		{"", false, false, false},
	} {
		for _, c := range []struct {
			name string
			o    messaging.WebhookOptions
			want bool
		}{{"defaults", none, tc.none}, {"AllowLoopback", loop, tc.loop}, {"AllowPrivate", priv, tc.priv}} {
			if got := messaging.WebhookAddressAllowed(tc.host, c.o); got != c.want {
				t.Errorf("%q with %s: allowed %v, want %v", tc.host, c.name, got, c.want)
			}
		}
	}
}

// TestWebhookRedirectToAnotherHost: a 307 to another host is not followed
// (a redirect could otherwise lead past the guard); the attempt counts as
// failed and is retried at the endpoint itself.
func TestWebhookRedirectToAnotherHost(t *testing.T) {
	t.Parallel()
	other := &countingHandler{}
	otherSrv := httptest.NewServer(other)
	t.Cleanup(otherSrv.Close)
	var hits countingHandler
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.ServeHTTP(w, r)
		u, _ := url.Parse(otherSrv.URL + "/stolen")
		http.Redirect(w, r, u.String(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(first.Close)
	got := guardedAttempt(t, first.URL+"/hook", messaging.WebhookOptions{AllowLoopback: true})
	if got != "endpoint answered 307" {
		t.Errorf("outcome %q, want the 307 recorded as a failure", got)
	}
	if hits.count() != 1 || other.count() != 0 {
		t.Errorf("endpoint saw %d requests, the redirect target %d; want 1 and 0", hits.count(), other.count())
	}
}
