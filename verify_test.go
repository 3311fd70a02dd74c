package messaging_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// switchProvider is the fake provider whose verification answers what
// verify says (the fake's own when verify is nil), and counts the calls.
type switchProvider struct {
	*fakeprovider.Provider
	mu     sync.Mutex
	verify func(s *messaging.ChannelSender) (*messaging.VerifiedAccount, error)
	calls  int
}

func (p *switchProvider) set(verify func(s *messaging.ChannelSender) (*messaging.VerifiedAccount, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.verify = verify
}

func (p *switchProvider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

func (p *switchProvider) VerifyConnection(ctx context.Context, s *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	p.mu.Lock()
	p.calls++
	v := p.verify
	p.mu.Unlock()
	if v != nil {
		return v(s)
	}
	return p.Provider.VerifyConnection(ctx, s)
}

var errDown = &messaging.SendError{Code: "unreachable", Text: "The channel provider could not be reached", Retryable: true}

func down(*messaging.ChannelSender) (*messaging.VerifiedAccount, error) { return nil, errDown }

// auditActions are the actions of ws's audit events, oldest first.
func auditActions(t *testing.T, f *lifeFixture, ws string) []string {
	t.Helper()
	events, _, err := f.svc.AuditEvents(f.ctx, ws, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(events) - 1; i >= 0; i-- {
		out = append(out, events[i].Action)
	}
	return out
}

// channelEvents are the channel.status_updated events published, as
// "workspace status reason".
func channelEvents(l *eventLog) []messaging.ChannelEventData {
	var out []messaging.ChannelEventData
	for _, e := range l.take() {
		if e.Type == messaging.EventChannelStatusUpdated {
			out = append(out, e.Data.(messaging.ChannelEventData))
		}
	}
	return out
}

// TestSquatterCannotConnectAnotherBusinessAccount: a workspace that names
// another business's phone-number id and WABA with a token that does not
// control them is refused, with the provider's answer and nothing stored;
// the owner connects, and inbound events of the account reach the owner.
func TestSquatterCannotConnectAnotherBusinessAccount(t *testing.T) {
	t.Parallel()
	prov := fakeprovider.NewWithOptions(&fakeprovider.Options{Accounts: map[string]string{"1234": "EAAGowner-token"}})
	f := newLifeFixture(t, prov)

	_, err := connect(f.ctx, f.svc, waConnect("other", "1234", "5555", "EAAGanything"))
	e := wantError(t, err, messaging.CodeValidation, "phone_number_id")
	if want := "phone_number_id: the channel provider refused the credentials: [100] Unsupported get request"; len(e.Message) < len(want) || e.Message[:len(want)] != want {
		t.Errorf("message %q, want it to start %q", e.Message, want)
	}
	if _, err := connection(f.ctx, f.svc, "other", messaging.ChannelWhatsApp); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("the refused connection: %v, want not_found (nothing stored)", err)
	}
	_, err = connect(f.ctx, f.svc, waConnect("other", "1234", "5555", "deny_revoked-token"))
	wantError(t, err, messaging.CodeValidation, "access_token")

	c, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGowner-token"))
	if err != nil {
		t.Fatalf("the owner's connect: %v", err)
	}
	if c.Status != record.ConnectionConnected || c.VerifiedAt == nil || !c.VerifiedAt.Equal(t0) {
		t.Errorf("owner's connection: status %s, verified %v; want connected, verified at %v", c.Status, c.VerifiedAt, t0)
	}
	if ws, err := f.svc.WorkspaceForAccount(f.ctx, messaging.ChannelWhatsApp, "1234"); err != nil || ws != "acme" {
		t.Errorf("WorkspaceForAccount = %q, %v; want acme", ws, err)
	}
	// The squatter still cannot take it, with a valid token of its own:
	// the account is held (409 naming the account; a WABA clash names
	// waba_id).
	prov.SetAccountToken("1234", "")
	_, err = connect(f.ctx, f.svc, waConnect("other", "1234", "7777", "EAAGother-token"))
	wantError(t, err, messaging.CodeConflict, "phone_number_id")
	_, err = connect(f.ctx, f.svc, waConnect("other", "9999", "5555", "EAAGother-token"))
	wantError(t, err, messaging.CodeConflict, "waba_id")
	if ws, err := f.svc.WorkspaceForOwner(f.ctx, messaging.ChannelWhatsApp, "5555"); err != nil || ws != "acme" {
		t.Errorf("WorkspaceForOwner = %q, %v; want acme", ws, err)
	}
}

// TestUnverifiedClaimNeverBlocksTheOwner: a connection the provider could
// not verify is pending: it sends nothing, receives nothing and reserves
// nothing; the owner's verified connection supersedes it, and the loser's
// workspace gets an audit event and a channel.status_updated event.
func TestUnverifiedClaimNeverBlocksTheOwner(t *testing.T) {
	t.Parallel()
	prov := &switchProvider{Provider: fakeprovider.New()}
	f := newLifeFixture(t, prov)
	events := &eventLog{}
	t.Cleanup(f.svc.Subscribe(events.add))

	prov.set(down)
	c, err := connect(f.ctx, f.svc, waConnect("other", "1234", "5555", "EAAGsquatter"))
	if err != nil {
		t.Fatalf("connect while the provider is down: %v", err)
	}
	if c.Status != record.ConnectionPending || c.VerifiedAt != nil || c.StatusReason == "" {
		t.Errorf("connection = %s (%q), verified %v; want pending_verification with a reason, unverified", c.Status, c.StatusReason, c.VerifiedAt)
	}
	_, err = f.svc.Workspace("other").Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"})
	wantError(t, err, messaging.CodeChannelUnavailable, "channel")
	// Its inbound events are not routed, nor dropped: the receiver asks
	// the provider to deliver them again.
	if ws, err := f.svc.WorkspaceForAccount(f.ctx, messaging.ChannelWhatsApp, "1234"); messaging.ErrorCode(err) != messaging.CodeServiceUnavailable {
		t.Errorf("WorkspaceForAccount of a pending claim: %q, %v; want service_unavailable", ws, err)
	}
	var se *messaging.SendError
	if _, err := f.svc.ChannelSender(f.ctx, "other", "whatsapp"); !errors.As(err, &se) || se.Code != record.CodeUnverified || !se.Retryable {
		t.Errorf("ChannelSender of an unverified connection: %v; want a retryable %s SendError", err, record.CodeUnverified)
	}

	prov.set(nil)
	f.clock.Advance(time.Minute)
	if _, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGowner")); err != nil {
		t.Fatalf("the owner's connect: %v", err)
	}
	if ws, err := f.svc.WorkspaceForAccount(f.ctx, messaging.ChannelWhatsApp, "1234"); err != nil || ws != "acme" {
		t.Errorf("WorkspaceForAccount = %q, %v; want acme", ws, err)
	}
	lost, err := connection(f.ctx, f.svc, "other", "whatsapp")
	if err != nil || lost.Status != record.ConnectionError || lost.StatusReason != record.ReasonSuperseded {
		t.Errorf("the squatter's connection = %+v, %v; want error, %q", lost, err, record.ReasonSuperseded)
	}
	if got := auditActions(t, f, "other"); len(got) == 0 || got[len(got)-1] != record.AuditChannelSuperseded {
		t.Errorf("other's audit = %v; want it to end with %s", got, record.AuditChannelSuperseded)
	}
	got := channelEvents(events)
	if len(got) != 1 || got[0].Status != record.ConnectionError || got[0].PreviousStatus != record.ConnectionPending ||
		got[0].Reason != record.ReasonSuperseded || got[0].AccountID != "1234" {
		t.Errorf("channel events = %+v; want one: pending -> error, superseded", got)
	}
	// Superseded, it sends nothing, and waiting does not help.
	if _, err := f.svc.ChannelSender(f.ctx, "other", "whatsapp"); !errors.As(err, &se) || se.Code != record.CodeUnverified || se.Retryable {
		t.Errorf("ChannelSender of a superseded connection: %v; want a permanent %s SendError", err, record.CodeUnverified)
	}
	// Its later verification cannot take the account back.
	if st, err := f.svc.Workspace("other").Channels.Verify(f.ctx, "whatsapp"); err != nil || st.Status != record.ConnectionError || st.Connection.Holds() {
		t.Errorf("verifying the superseded claim: %+v, %v; want error, not holding", st, err)
	}
}

// TestConnectionChecks: the periodic checks verify a pending connection
// once the provider answers, leave a verified one alone until its proof is
// older than Recheck, and then mark a revoked token as error with the
// provider's reason.
func TestConnectionChecks(t *testing.T) {
	t.Parallel()
	prov := &switchProvider{Provider: fakeprovider.New()}
	f := newLifeFixture(t, prov)
	events := &eventLog{}
	t.Cleanup(f.svc.Subscribe(events.add))
	ws := f.svc.Workspace("acme")
	send := func() error {
		_, err := ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"})
		return err
	}

	prov.set(down)
	if _, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGtoken1")); err != nil {
		t.Fatal(err)
	}
	messaging.CheckConnections(f.ctx, f.svc)
	if c, _ := connection(f.ctx, f.svc, "acme", "whatsapp"); c.Status != record.ConnectionPending {
		t.Errorf("after a check while the provider is down: %s, want pending_verification", c.Status)
	}
	if err := send(); messaging.ErrorCode(err) != messaging.CodeChannelUnavailable {
		t.Errorf("send through a pending connection: %v, want channel_unavailable", err)
	}

	prov.set(func(*messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
		return &messaging.VerifiedAccount{DisplayPhoneNumber: "+254700111222"}, nil
	})
	f.clock.Advance(time.Minute)
	messaging.CheckConnections(f.ctx, f.svc)
	c, _ := connection(f.ctx, f.svc, "acme", "whatsapp")
	if c.Status != record.ConnectionConnected || c.DisplayPhoneNumber != "+254700111222" || c.VerifiedAt == nil || !c.VerifiedAt.Equal(f.clock.Now()) {
		t.Errorf("after the provider answered: %+v; want connected with the provider's number, verified now", c)
	}
	if err := send(); err != nil {
		t.Errorf("send through the verified connection: %v", err)
	}
	if got := channelEvents(events); len(got) != 1 || got[0].Status != record.ConnectionConnected || got[0].PreviousStatus != record.ConnectionPending {
		t.Errorf("channel events = %+v; want pending -> connected", got)
	}

	// Not due: a proof younger than Recheck is not asked again.
	calls := prov.count()
	f.clock.Advance(defaults.DefaultConnectionRecheck - time.Minute)
	messaging.CheckConnections(f.ctx, f.svc)
	if prov.count() != calls {
		t.Errorf("a check before Recheck asked the provider %d times, want 0", prov.count()-calls)
	}
	// Due: the token was revoked.
	prov.set(func(*messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
		return nil, &messaging.SendError{Code: "190", Text: "Error validating access token: The user has not authorized application", Credentials: true}
	})
	f.clock.Advance(2 * time.Minute)
	messaging.CheckConnections(f.ctx, f.svc)
	c, _ = connection(f.ctx, f.svc, "acme", "whatsapp")
	if c.Status != record.ConnectionError || c.StatusReason != "[190] Error validating access token: The user has not authorized application" || !c.Holds() {
		t.Errorf("after the revoked token's check: %+v; want error with the provider's reason, still holding the account", c)
	}
	if got := channelEvents(events); len(got) != 1 || got[0].Status != record.ConnectionError || got[0].Reason != c.StatusReason {
		t.Errorf("channel events = %+v; want connected -> error", got)
	}
	if got := auditActions(t, f, "acme"); len(got) < 2 || got[len(got)-1] != record.AuditChannelRefused {
		t.Errorf("acme's audit = %v; want it to end with %s", got, record.AuditChannelRefused)
	}
}

// TestConnectNeedsAVerifier: a provider that cannot verify credentials
// cannot connect with them.
func TestConnectNeedsAVerifier(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, &plainProvider{})
	_, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGtoken1"))
	wantError(t, err, messaging.CodeChannelUnavailable, "channel")
	if _, err := connection(f.ctx, f.svc, "acme", messaging.ChannelWhatsApp); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("connection after the refusal: %v, want not_found", err)
	}
}

// plainProvider sends and can do nothing else.
type plainProvider struct{ metaChannels }

func (plainProvider) Send(context.Context, *messaging.ChannelSender, *messaging.Message) (*messaging.SendReceipt, error) {
	return &messaging.SendReceipt{ProviderMessageID: "p1"}, nil
}

// TestHolderKeepsItsConnectionWhenTheProviderIsDown: new credentials that
// the provider cannot verify never replace a connection that holds its
// account: the answer is service_unavailable and the channel keeps
// sending with the proven credentials.
func TestHolderKeepsItsConnectionWhenTheProviderIsDown(t *testing.T) {
	t.Parallel()
	prov := &switchProvider{Provider: fakeprovider.New()}
	f := newLifeFixture(t, prov)
	if _, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGproven-1")); err != nil {
		t.Fatal(err)
	}
	prov.set(down)
	_, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGrotated-2"))
	wantError(t, err, messaging.CodeServiceUnavailable, "")
	c, err := connection(f.ctx, f.svc, "acme", "whatsapp")
	if err != nil || c.Status != record.ConnectionConnected || c.TokenHint != "en-1" || !c.Holds() {
		t.Errorf("connection after the unverifiable replacement = %+v, %v; want the proven one, connected", c, err)
	}
	if _, err := f.svc.Workspace("acme").Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
		t.Errorf("send after the unverifiable replacement: %v", err)
	}
}

// TestRefusedConnectionsAreNotAskedEveryPass: a connection in error
// without a proof (refused, superseded) is verified again only after
// Recheck without a change, not at every pass.
func TestRefusedConnectionsAreNotAskedEveryPass(t *testing.T) {
	t.Parallel()
	prov := &switchProvider{Provider: fakeprovider.New()}
	f := newLifeFixture(t, prov)
	prov.set(down)
	if _, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGtoken1")); err != nil {
		t.Fatal(err)
	}
	prov.set(func(*messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
		return nil, &messaging.VerificationError{Field: "waba_id", Code: "100", Text: "cannot be loaded"}
	})
	messaging.CheckConnections(f.ctx, f.svc)
	if c, _ := connection(f.ctx, f.svc, "acme", "whatsapp"); c.Status != record.ConnectionError || c.StatusReason != "[100] cannot be loaded" {
		t.Fatalf("after the refusal: %s %q; want error [100] cannot be loaded", c.Status, c.StatusReason)
	}
	calls := prov.count()
	f.clock.Advance(time.Hour)
	messaging.CheckConnections(f.ctx, f.svc)
	if prov.count() != calls {
		t.Errorf("a pass an hour after the refusal asked the provider %d times, want 0", prov.count()-calls)
	}
	f.clock.Advance(defaults.DefaultConnectionRecheck)
	messaging.CheckConnections(f.ctx, f.svc)
	if prov.count() != calls+1 {
		t.Errorf("a pass after Recheck asked the provider %d times, want 1", prov.count()-calls)
	}
}
