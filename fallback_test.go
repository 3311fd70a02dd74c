package messaging_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// fallbackStore is a store of both services.
type fallbackStore interface {
	driver.Store
	sms.Store
}

const (
	fbPartner = "1234"
	// fbReachable is on WhatsApp; fbUndeliverable is not (the fake
	// provider fails its messages with 131026).
	fbReachable     = "+254712345678"
	fbUndeliverable = "+254712340000"
)

// fallbackEnv is a messaging service and an SMS service on one store, with
// an injected clock, the fake provider (delivered reports after
// deliveredAfter, negative: never) and the fake SMS gateway; the
// workspace acme has WhatsApp, the approved template hello and the SMS
// account 1234 (sender ACME) linked.
type fallbackEnv struct {
	ctx   context.Context
	clock *fakeClock
	store fallbackStore
	prov  *fakeprovider.Provider
	gw    *fakegateway.Gateway
	sms   *sms.SMS
	svc   *messaging.Service
	ws    *messaging.Workspace
}

func newFallbackEnv(t *testing.T, st fallbackStore, clock *fakeClock, deliveredAfter time.Duration, fresh bool) *fallbackEnv {
	t.Helper()
	e := &fallbackEnv{ctx: context.Background(), clock: clock, store: st}
	e.gw = fakegateway.New(&fakegateway.Options{Clock: clock.Now})
	var err error
	if e.sms, err = sms.New(st, e.gw, &sms.Options{Clock: clock.Now}); err != nil {
		t.Fatal(err)
	}
	e.prov = fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: clock.Now, DeliveredAfter: deliveredAfter, ReadAfter: -1})
	if e.svc, err = messaging.New(st, e.prov, &messaging.Options{Clock: clock.Now, CacheTTL: -1,
		SMSFallback: sms.NewFallback(e.sms), SMSFallbackSweep: -1}); err != nil {
		t.Fatal(err)
	}
	e.prov.SetSink(e.svc)
	e.ws = e.svc.Workspace("acme")
	if !fresh {
		return e
	}
	if _, _, err := e.sms.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: fbPartner, APIKey: "sms_0123456789abcdef0123456789abcdef",
		Senders: []string{"ACME"}, Credit: sms.Credits(10), TimeZone: "Africa/Nairobi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateWorkspace(e.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: []string{messaging.ChannelWhatsApp}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Templates.Create(e.ctx, approved("hello", body("Hello"))); err != nil {
		t.Fatal(err)
	}
	if linked, err := e.svc.LinkSMSAccount(e.ctx, "acme", fbPartner); err != nil || !linked {
		t.Fatalf("LinkSMSAccount = %v, %v", linked, err)
	}
	return e
}

// send sends the template hello to to with an SMS fallback.
func (e *fallbackEnv) send(t *testing.T, to string, after int) string {
	t.Helper()
	res, err := e.ws.Messages.SendTemplate(e.ctx, fbParams(to, after))
	if err != nil {
		t.Fatalf("SendTemplate: %v", err)
	}
	return res.MessageID
}

func fbParams(to string, after int) *messaging.SendTemplateParams {
	return &messaging.SendTemplateParams{To: to, TemplateName: "hello", Language: "en",
		Fallback: &messaging.FallbackParams{SMS: &messaging.SMSFallbackParams{Text: "Your code is 1234", PartnerID: fbPartner, Shortcode: "ACME", After: after}}}
}

// step advances the clock by d, dispatches, applies the provider's due
// reports, sweeps the fallbacks and hands the due SMS to the gateway.
func (e *fallbackEnv) step(t *testing.T, d time.Duration) {
	t.Helper()
	e.clock.Advance(d)
	if _, err := e.svc.DispatchDue(e.ctx); err != nil {
		t.Fatalf("DispatchDue: %v", err)
	}
	if _, err := e.prov.Flush(e.ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if _, err := e.svc.RunFallbacks(e.ctx); err != nil {
		t.Fatalf("RunFallbacks: %v", err)
	}
	if _, err := e.sms.RunDue(e.ctx); err != nil {
		t.Fatalf("RunDue: %v", err)
	}
}

// smsSent returns the SMS the gateway was given.
func (e *fallbackEnv) smsSent() []sms.GatewayMessage { return e.gw.Sent() }

// fallbackOf returns the fallback of message id as Messages.Get shows it.
func (e *fallbackEnv) fallbackOf(t *testing.T, id string) *messaging.SMSFallbackRecord {
	t.Helper()
	m, err := e.ws.Messages.Get(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Fallback == nil {
		t.Fatalf("message %s has no fallback", id)
	}
	return m.Fallback
}

func TestFallbackUndeliverableSendsOneSMS(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), 2*time.Second, true)
	id := e.send(t, fbUndeliverable, 3600)
	if f := e.fallbackOf(t, id); f.Status != messaging.SMSFallbackPending || f.SMSMessageID != "" {
		t.Fatalf("fallback before the failure = %+v, want pending", f)
	}
	e.step(t, 0) // dispatched: no report yet
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS before the failure", n)
	}
	e.step(t, 2*time.Second) // failed with 131026: the SMS goes out at once, not after an hour
	m, err := e.ws.Messages.Get(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != messaging.StatusFailed || !strings.HasPrefix(m.FailureReason, "[131026]") {
		t.Fatalf("message = %s %q, want failed with 131026", m.Status, m.FailureReason)
	}
	sent := e.smsSent()
	if len(sent) != 1 || sent[0].Mobile != strings.TrimPrefix(fbUndeliverable, "+") || sent[0].Text != "Your code is 1234" || sent[0].Sender != "ACME" {
		t.Fatalf("SMS sent = %+v, want one to %s", sent, fbUndeliverable)
	}
	f := m.Fallback
	if f == nil || f.SMSMessageID == "" || f.SMSProviderMessageID == "" || (f.Status != messaging.SMSFallbackSent && f.Status != messaging.SMSFallbackQueued) {
		t.Fatalf("fallback = %+v, want the SMS, sent", f)
	}
	// The provider repeats its report; the sweeper runs past the wait:
	// still one SMS.
	if _, err := e.svc.ApplyProviderStatus(e.ctx, &messaging.ProviderStatus{ProviderMessageID: m.ProviderMessageID, Status: messaging.StatusFailed,
		Code: fakeprovider.CodeUndeliverable, Text: fakeprovider.TextUndeliverable}); err != nil {
		t.Fatal(err)
	}
	e.step(t, 2*time.Hour)
	if n := len(e.smsSent()); n != 1 {
		t.Fatalf("%d SMS after a repeated report, want 1", n)
	}
	list, _, err := e.sms.Messages(e.ctx, fbPartner, "", 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("SMS of the account = %d, %v; want 1", len(list), err)
	}
	if list[0].Segments != 1 || e.balance(t) != sms.Credits(10)-list[0].Cost || list[0].Cost <= 0 {
		t.Fatalf("SMS charged %s for %d segments, balance %s", list[0].Cost, list[0].Segments, e.balance(t))
	}
}

func (e *fallbackEnv) balance(t *testing.T) sms.Credit {
	t.Helper()
	a, err := e.sms.GetAccount(e.ctx, fbPartner)
	if err != nil {
		t.Fatal(err)
	}
	return a.Credit
}

func TestFallbackNotDeliveredInTimeSendsOneSMS(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true) // never delivered
	id := e.send(t, fbReachable, 60)
	e.step(t, 59*time.Second)
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS before the wait ended", n)
	}
	e.step(t, time.Second)
	if n := len(e.smsSent()); n != 1 {
		t.Fatalf("%d SMS once the wait ended, want 1", n)
	}
	e.step(t, time.Hour)
	if n := len(e.smsSent()); n != 1 {
		t.Fatalf("%d SMS later, want 1", n)
	}
	if f := e.fallbackOf(t, id); f.SMSMessageID == "" || f.Status != messaging.SMSFallbackSent {
		t.Fatalf("fallback = %+v, want the SMS sent", f)
	}
	// The gateway's delivery report reaches the fallback's status.
	e.step(t, time.Minute)
	if _, err := e.sms.DeliveryReport(e.ctx, &sms.ReportParams{APIKey: "sms_0123456789abcdef0123456789abcdef", PartnerID: fbPartner,
		MessageID: e.fallbackOf(t, id).SMSProviderMessageID}); err != nil {
		t.Fatal(err)
	}
	if f := e.fallbackOf(t, id); f.Status != messaging.SMSFallbackDelivered {
		t.Fatalf("fallback status = %s (%s), want delivered", f.Status, f.Reason)
	}
}

func TestFallbackDefaultWait(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true)
	e.send(t, fbReachable, 0)
	e.step(t, messaging.DefaultSMSFallbackAfter-time.Second)
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS before the default wait ended", n)
	}
	e.step(t, time.Second)
	if n := len(e.smsSent()); n != 1 {
		t.Fatalf("%d SMS after the default wait, want 1", n)
	}
}

func TestFallbackDeliveredInTimeSendsNone(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), 10*time.Second, true)
	id := e.send(t, fbReachable, 60)
	e.step(t, 0)
	e.step(t, 10*time.Second) // delivered
	e.step(t, time.Hour)
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS for a message delivered in time", n)
	}
	if f := e.fallbackOf(t, id); f.Status != messaging.SMSFallbackSkipped || f.SMSMessageID != "" {
		t.Fatalf("fallback = %+v, want skipped", f)
	}
}

func TestFallbackRefusedAtSend(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true)
	if _, _, err := e.sms.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: "5678", APIKey: "sms_1123456789abcdef0123456789abcdef",
		Senders: []string{"ACME"}, Credit: sms.Credits(10), TimeZone: "Africa/Nairobi"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		edit  func(p *messaging.SMSFallbackParams)
		field string
	}{
		{"account not linked", func(p *messaging.SMSFallbackParams) { p.PartnerID = "5678" }, "fallback.sms.partner_id"},
		{"unknown account", func(p *messaging.SMSFallbackParams) { p.PartnerID = "9999" }, "fallback.sms.partner_id"},
		{"blank text", func(p *messaging.SMSFallbackParams) { p.Text = "  " }, "fallback.sms.text"},
		{"text too long", func(p *messaging.SMSFallbackParams) { p.Text = strings.Repeat("a", 153*sms.DefaultMaxSegments+1) }, "fallback.sms.text"},
		{"sender not approved", func(p *messaging.SMSFallbackParams) { p.Shortcode = "OTHER" }, "fallback.sms.shortcode"},
		{"negative wait", func(p *messaging.SMSFallbackParams) { p.After = -1 }, "fallback.sms.after"},
		{"wait too long", func(p *messaging.SMSFallbackParams) { p.After = 8 * 24 * 3600 }, "fallback.sms.after"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := fbParams(fbReachable, 0)
			c.edit(p.Fallback.SMS)
			_, err := e.ws.Messages.SendTemplate(e.ctx, p)
			wantError(t, err, messaging.CodeValidation, c.field)
		})
	}
	p := fbParams(fbReachable, 0)
	p.Fallback.SMS = nil
	wantError(t, second(e.ws.Messages.SendTemplate(e.ctx, p)), messaging.CodeValidation, "fallback.sms")
	page, err := e.ws.Messages.List(e.ctx, nil)
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("messages stored after refusals: %d, %v", len(page.Items), err)
	}
}

func TestFallbackLinks(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true)
	if _, err := e.svc.LinkSMSAccount(e.ctx, "acme", "9999"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Fatalf("linking an unknown account: %v, want not_found", err)
	}
	if linked, err := e.svc.LinkSMSAccount(e.ctx, "acme", fbPartner); err != nil || linked {
		t.Fatalf("linking again = %v, %v; want false, nil", linked, err)
	}
	if _, err := e.svc.LinkSMSAccount(e.ctx, "nope", fbPartner); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Fatalf("linking to an unknown workspace: %v, want not_found", err)
	}
	id := e.send(t, fbReachable, 60)
	if ok, err := e.svc.UnlinkSMSAccount(e.ctx, "acme", fbPartner); err != nil || !ok {
		t.Fatalf("UnlinkSMSAccount = %v, %v", ok, err)
	}
	if list, err := e.svc.SMSAccounts(e.ctx, "acme"); err != nil || len(list) != 0 {
		t.Fatalf("SMSAccounts after unlinking = %v, %v", list, err)
	}
	e.step(t, time.Minute)
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS through an unlinked account", n)
	}
	if f := e.fallbackOf(t, id); f.Status != messaging.SMSFallbackNotSent || !strings.Contains(f.Reason, "no longer linked") {
		t.Fatalf("fallback = %+v, want not_sent: no longer linked", f)
	}
	events, _, err := e.svc.AuditEvents(e.ctx, "acme", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range events {
		if strings.HasPrefix(ev.Action, "sms_account.") {
			actions = append(actions, ev.Action+" "+ev.Target)
		}
	}
	if strings.Join(actions, ",") != "sms_account.unlinked 1234,sms_account.linked 1234" {
		t.Fatalf("audit = %v", actions)
	}
}

func TestFallbackCreditExhausted(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true)
	if err := e.sms.SetCostPerSegment(e.ctx, fbPartner, sms.Credits(50)); err != nil {
		t.Fatal(err)
	}
	id := e.send(t, fbUndeliverable, 60)
	e.step(t, 0)
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS without credit", n)
	}
	f := e.fallbackOf(t, id)
	if f.Status != messaging.SMSFallbackNotSent || !strings.Contains(f.Reason, "insufficient credit") || f.SMSMessageID != "" {
		t.Fatalf("fallback = %+v, want not_sent for insufficient credit", f)
	}
	if e.balance(t) != sms.Credits(10) {
		t.Fatalf("balance = %s, want nothing charged", e.balance(t))
	}
}

func TestFallbackIdempotentSendKeepsFallback(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true)
	p := fbParams(fbReachable, 60)
	p.IdempotencyKey = "k1"
	first, err := e.ws.Messages.SendTemplate(e.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.ws.Messages.SendTemplate(e.ctx, withKey(fbParams(fbReachable, 60), "k1"))
	if err != nil || !again.Replayed || again.MessageID != first.MessageID {
		t.Fatalf("repeat = %+v, %v", again, err)
	}
	other := withKey(fbParams(fbReachable, 61), "k1")
	wantError(t, second(e.ws.Messages.SendTemplate(e.ctx, other)), messaging.CodeConflict, "idempotency_key")
	noFallback := withKey(fbParams(fbReachable, 60), "k1")
	noFallback.Fallback = nil
	wantError(t, second(e.ws.Messages.SendTemplate(e.ctx, noFallback)), messaging.CodeConflict, "idempotency_key")
	// A repeat after the account was unlinked answers as the first did.
	if _, err := e.svc.UnlinkSMSAccount(e.ctx, "acme", fbPartner); err != nil {
		t.Fatal(err)
	}
	again, err = e.ws.Messages.SendTemplate(e.ctx, withKey(fbParams(fbReachable, 60), "k1"))
	if err != nil || !again.Replayed || again.MessageID != first.MessageID {
		t.Fatalf("repeat after unlinking = %+v, %v; want the first answer", again, err)
	}
	wantError(t, second(e.ws.Messages.SendTemplate(e.ctx, withKey(fbParams(fbReachable, 60), "k2"))), messaging.CodeValidation, "fallback.sms.partner_id")
}

// withKey sets the idempotency key of p.
func withKey(p *messaging.SendTemplateParams, key string) *messaging.SendTemplateParams {
	p.IdempotencyKey = key
	return p
}

func TestFallbackRestartSendsNoSecondSMS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	clock := newFakeClock(t0)
	open := func() *sqlitestore.Store {
		st, err := sqlitestore.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st1 := open()
	e1 := newFallbackEnv(t, st1, clock, -1, true)
	id := e1.send(t, fbReachable, 60)
	e1.step(t, 0)
	// The first instance claims the fallback and dies after the SMS
	// service accepted the SMS, before it recorded the outcome: the SMS
	// is accepted under the fallback's key, the fallback stays leased.
	clock.Advance(time.Minute)
	now := clock.Now()
	claims, err := st1.MessageFallbackClaim(e1.ctx, &driver.MessageFallbackClaimParams{Now: now, Owner: "dead", LeaseUntil: now.Add(time.Minute), Limit: 10})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim = %d, %v", len(claims), err)
	}
	if _, err := sms.NewFallback(e1.sms).Send(e1.ctx, "acme", &messaging.SMSFallbackSend{PartnerID: fbPartner, Shortcode: "ACME",
		Text: "Your code is 1234", To: fbReachable, IdempotencyKey: messaging.FallbackIdempotencyKey(id)}); err != nil {
		t.Fatal(err)
	}
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}
	// A new instance on the same file: the lease holds it off, then it
	// takes the fallback over and the SMS service answers with the SMS
	// accepted before.
	st2 := open()
	t.Cleanup(func() { _ = st2.Close() })
	e2 := newFallbackEnv(t, st2, clock, -1, false)
	e2.step(t, 30*time.Second)
	if f := e2.fallbackOf(t, id); f.Status != messaging.SMSFallbackPending {
		t.Fatalf("fallback while leased = %+v, want pending", f)
	}
	e2.step(t, 31*time.Second)
	if n := len(e2.smsSent()); n != 1 {
		t.Fatalf("%d SMS given to the gateway, want 1", n)
	}
	list, _, err := e2.sms.Messages(e2.ctx, fbPartner, "", 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("SMS of the account = %d, %v; want 1", len(list), err)
	}
	f := e2.fallbackOf(t, id)
	if f.SMSMessageID != list[0].ID || f.Status != messaging.SMSFallbackSent {
		t.Fatalf("fallback = %+v, want the SMS %s, sent", f, list[0].ID)
	}
	// And a third instance sends nothing more.
	e3 := newFallbackEnv(t, st2, clock, -1, false)
	e3.step(t, time.Hour)
	if list, _, _ := e3.sms.Messages(e3.ctx, fbPartner, "", 10); len(list) != 1 {
		t.Fatalf("%d SMS after another instance ran", len(list))
	}
}

func TestFallbackStoredInSQLite(t *testing.T) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newFallbackEnv(t, st, newFakeClock(t0), 2*time.Second, true)
	id := e.send(t, fbUndeliverable, 60)
	want := record.SMSFallback{Text: "Your code is 1234", PartnerID: fbPartner, Shortcode: "ACME", After: time.Minute,
		Status: messaging.SMSFallbackPending, DueAt: t0.Add(time.Minute), UpdatedAt: t0}
	if f := e.fallbackOf(t, id); *f != want {
		t.Fatalf("stored fallback = %+v, want %+v", *f, want)
	}
	e.step(t, 0)
	e.step(t, 2*time.Second)
	if n := len(e.smsSent()); n != 1 {
		t.Fatalf("%d SMS, want 1", n)
	}
}

// TestFallbackSweeperRunsOnStart: the sweeper Start runs sends the
// fallbacks whose wait ended, then waits Options.SMSFallbackSweep.
func TestFallbackSweeperRunsOnStart(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true)
	e.send(t, fbReachable, 60)
	e.clock.Advance(time.Minute)
	const every = 7 * time.Second
	swept := make(chan struct{}, 1)
	svc, err := messaging.New(e.store, e.prov, &messaging.Options{Clock: e.clock.Now, CacheTTL: -1, SMSFallback: sms.NewFallback(e.sms),
		SMSFallbackSweep: every, Sleep: func(ctx context.Context, d time.Duration) error {
			if d == every {
				select {
				case swept <- struct{}{}:
				default:
				}
			}
			<-ctx.Done()
			return ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("the sweeper never waited for its next sweep")
	}
	cancel()
	_ = svc.Close(e.ctx)
	list, _, err := e.sms.Messages(e.ctx, fbPartner, "", 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("SMS of the account after the sweep = %d, %v; want 1", len(list), err)
	}
}

// TestFallbackOfScheduledSendWaitsFromSendAt: a template scheduled an hour
// ahead with a fallback after 60 s sends no SMS while it waits for its
// send_at: the fallback's wait starts when the message may be sent.
func TestFallbackOfScheduledSendWaitsFromSendAt(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true) // never delivered
	p := fbParams(fbReachable, 60)
	at := e.clock.Now().Add(time.Hour)
	p.SendAt = &at
	if _, err := e.ws.Messages.SendTemplate(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	e.step(t, 30*time.Minute)
	e.step(t, 30*time.Minute)
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS by send_at, want none: the wait starts then", n)
	}
	e.step(t, time.Minute)
	if n := len(e.smsSent()); n != 1 {
		t.Fatalf("%d SMS a minute after send_at, want 1", n)
	}
}

// TestFallbackOfCanceledSendIsSkipped: a scheduled template with a
// fallback, canceled before its send_at, sends no SMS when the wait ends.
func TestFallbackOfCanceledSendIsSkipped(t *testing.T) {
	e := newFallbackEnv(t, memstore.New(), newFakeClock(t0), -1, true)
	p := fbParams(fbReachable, 60)
	at := e.clock.Now().Add(time.Hour)
	p.SendAt = &at
	res, err := e.ws.Messages.SendTemplate(e.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ws.Messages.Cancel(e.ctx, res.MessageID); err != nil {
		t.Fatal(err)
	}
	e.step(t, 2*time.Hour)
	if n := len(e.smsSent()); n != 0 {
		t.Fatalf("%d SMS for a canceled message, want none", n)
	}
	if f := e.fallbackOf(t, res.MessageID); f.Status != messaging.SMSFallbackSkipped {
		t.Fatalf("fallback = %+v, want skipped", f)
	}
}
