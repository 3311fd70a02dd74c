package messaging_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestDispatchDefaults: the defaults DispatchOptions documents.
func TestDispatchDefaults(t *testing.T) {
	t.Parallel()
	got := messaging.DispatchDefaults(messaging.DispatchOptions{})
	want := messaging.DispatchOptions{Workers: 8, BatchSize: 16, SendTimeout: 30 * time.Second, Lease: 60 * time.Second,
		PollInterval: 200 * time.Millisecond, MaxAttempts: 10, MaxAge: 24 * time.Hour, InitialBackoff: time.Second,
		MaxBackoff: 10 * time.Minute, PerSenderRate: 80}
	if d := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".PerSenderBurst" }, cmp.Ignore())); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	// The batch follows the workers; a lease shorter than a send grows.
	got = messaging.DispatchDefaults(messaging.DispatchOptions{Workers: 3, Lease: 10 * time.Second, SendTimeout: 30 * time.Second})
	if got.BatchSize != 6 || got.Lease != 40*time.Second {
		t.Errorf("Workers 3, Lease 10s, SendTimeout 30s: BatchSize %d, Lease %v; want 6 and 40s", got.BatchSize, got.Lease)
	}
	got = messaging.DispatchDefaults(messaging.DispatchOptions{Lease: 30 * time.Second, SendTimeout: 30 * time.Second})
	if got.Lease != 40*time.Second {
		t.Errorf("a lease equal to the send timeout: %v, want 40s", got.Lease)
	}
}

// TestDispatchMaxAgeIsExclusive: an attempt exactly MaxAge after the
// message was accepted is too late: the message fails instead of being
// retried.
func TestDispatchMaxAgeIsExclusive(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{MaxAge: time.Hour, InitialBackoff: time.Second, MaxBackoff: time.Second})
	f.prov.script["+254712345678"] = []error{errors.New("connection reset"), errors.New("connection reset")}
	id := f.send(t, "+254712345678")
	f.dispatch(t) // attempt 1 at t0: retry in about 1 s
	f.clock.Advance(time.Hour)
	f.dispatch(t) // attempt 2 at exactly MaxAge: failed
	if m := f.get(t, id); m.Status != "failed" {
		t.Fatalf("status %q after an attempt at exactly MaxAge, want failed", m.Status)
	}
}

// TestConnectLimits: the edges of the credential rules.
func TestConnectLimits(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	digits := func(n int) string { return strings.Repeat("7", n) }
	for _, tc := range []struct {
		name  string
		p     *messaging.ConnectParams
		field string // "" = accepted
	}{
		{"32-digit ids", waConnect("acme", digits(32), digits(31)+"1", "EAAGtoken1"), ""},
		{"33-digit phone-number id", waConnect("acme", digits(33), "99", "EAAGtoken1"), "phone_number_id"},
		{"33-digit WABA id", waConnect("acme", "12", digits(33), "EAAGtoken1"), "waba_id"},
		{"8-character token", waConnect("acme", "13", "98", "EAAG1234"), ""},
		{"7-character token", waConnect("acme", "14", "97", "EAAG123"), "access_token"},
		{"longest token", waConnect("acme", "15", "96", "E"+strings.Repeat("x", messaging.MaxAccessToken-1)), ""},
		{"token one too long", waConnect("acme", "16", "95", "E"+strings.Repeat("x", messaging.MaxAccessToken)), "access_token"},
		{"token with DEL", waConnect("acme", "17", "94", "EAAG\x7ftoken"), "access_token"},
		{"token with ~", waConnect("acme", "18", "93", "EAAG~token"), ""},
		{"token with !", waConnect("acme", "19", "92", "EAAG!token"), ""},
	} {
		_, err := f.svc.Connect(f.ctx, tc.p)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.name, err)
			}
			continue
		}
		wantError(t, err, messaging.CodeValidation, tc.field)
	}
}
