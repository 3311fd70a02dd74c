package sms_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// base is 10:00 UTC, 13:00 in Nairobi.
var base = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

const (
	partner = "1234"
	apikey  = "sms_0123456789abcdef0123456789abcdef"
	kenya   = "254712345678"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// countingStore counts the calls that matter for bulk efficiency, and
// logs the account reads in order.
type countingStore struct {
	sms.Store
	accountGets atomic.Int64
	// accepts counts SMSAccept and SMSAcceptIdempotent calls.
	accepts atomic.Int64

	mu       sync.Mutex
	accounts []string // "SMSAccountKey" or "SMSAccountGet", in order
}

func (s *countingStore) logAccount(call string) {
	s.mu.Lock()
	s.accounts = append(s.accounts, call)
	s.mu.Unlock()
}

// accountReads returns the account reads logged since the last call.
func (s *countingStore) accountReads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.accounts
	s.accounts = nil
	return out
}

func (s *countingStore) SMSAccountGet(ctx context.Context, id string) (*sms.Account, error) {
	s.accountGets.Add(1)
	s.logAccount("SMSAccountGet")
	return s.Store.SMSAccountGet(ctx, id)
}

func (s *countingStore) SMSAccountKey(ctx context.Context, id string) ([]byte, error) {
	s.logAccount("SMSAccountKey")
	return s.Store.SMSAccountKey(ctx, id)
}

func (s *countingStore) SMSAccept(ctx context.Context, msgs []*sms.Message) ([]sms.AcceptResult, error) {
	s.accepts.Add(1)
	return s.Store.SMSAccept(ctx, msgs)
}

func (s *countingStore) SMSAcceptIdempotent(ctx context.Context, p *sms.AcceptIdempotentParams) ([]sms.AcceptResult, *sms.Idempotency, error) {
	s.accepts.Add(1)
	return s.Store.SMSAcceptIdempotent(ctx, p)
}

type env struct {
	ctx   context.Context
	clk   *clock
	store *countingStore
	gw    *fakegateway.Gateway
	svc   *sms.SMS
}

type setupOpts struct {
	store sms.Store
	gw    *fakegateway.Options
	sms   *sms.Options
	// wrap, when set, wraps the fake gateway the service is given.
	wrap func(sms.Gateway) sms.Gateway
	// direct gives the service o.store itself rather than the counting
	// wrapper of it (env.store still counts the test's own calls).
	direct bool
}

// setup returns a service on a fresh memstore (or o.store) with the fake
// gateway (delivery after 10 s), the clock at base, and account 1234 with
// 100 credits, sender ACME and the Nairobi time zone.
func setup(t *testing.T, o *setupOpts) *env {
	t.Helper()
	if o == nil {
		o = &setupOpts{}
	}
	e := &env{ctx: context.Background(), clk: &clock{t: base}}
	var st sms.Store = memstore.New()
	if o.store != nil {
		st = o.store
	}
	e.store = &countingStore{Store: st}
	gwo := fakegateway.Options{Delay: 10 * time.Second}
	if o.gw != nil {
		gwo = *o.gw
	}
	gwo.Clock = e.clk.Now
	e.gw = fakegateway.New(&gwo)
	so := sms.Options{}
	if o.sms != nil {
		so = *o.sms
	}
	so.Clock = e.clk.Now
	var gw sms.Gateway = e.gw
	if o.wrap != nil {
		gw = o.wrap(gw)
	}
	var svcStore sms.Store = e.store
	if o.direct && o.store != nil {
		svcStore = o.store
	}
	svc, err := sms.New(svcStore, gw, &so)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	if _, err := svc.GetAccount(e.ctx, partner); err != nil {
		if _, _, err := svc.CreateAccount(e.ctx, &sms.CreateAccountParams{
			PartnerID: partner, APIKey: apikey, Senders: []string{"ACME"}, Credit: sms.Credits(100), TimeZone: "Africa/Nairobi",
		}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) balance(t *testing.T) sms.Credit {
	t.Helper()
	a, err := e.svc.GetAccount(e.ctx, partner)
	if err != nil {
		t.Fatal(err)
	}
	return a.Credit
}

func (e *env) send(t *testing.T, p *sms.SendParams) *sms.SendResult {
	t.Helper()
	if p.PartnerID == "" {
		p.PartnerID = partner
	}
	if p.APIKey == "" {
		p.APIKey = apikey
	}
	if p.Mobile == "" {
		p.Mobile = kenya
	}
	if p.Shortcode == "" {
		p.Shortcode = "ACME"
	}
	if p.Message == "" {
		p.Message = "Hello"
	}
	res, err := e.svc.Send(e.ctx, p)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return res
}

func (e *env) runDue(t *testing.T) int {
	t.Helper()
	n, err := e.svc.RunDue(e.ctx)
	if err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	return n
}

func wantCode(t *testing.T, what string, err error, code int, field string) {
	t.Helper()
	e, ok := err.(*sms.Error)
	if !ok {
		t.Fatalf("%s: error %v (%T), want *sms.Error %d", what, err, err, code)
	}
	if e.Code != code || e.Field != field {
		t.Errorf("%s: got %d field %q (%s); want %d field %q", what, e.Code, e.Field, e.Description, code, field)
	}
	if !strings.HasPrefix(e.Description, sms.CodeText(code)) {
		t.Errorf("%s: description %q does not start with %q", what, e.Description, sms.CodeText(code))
	}
}
