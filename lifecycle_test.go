package messaging_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// lifeFixture is a Service with a secret key (for credentials) on
// memstore, over prov, with the workspaces "acme" and "other".
type lifeFixture struct {
	ctx   context.Context
	svc   *messaging.Service
	store *memstore.Store
	clock *fakeClock
}

func newLifeFixture(t *testing.T, prov messaging.Provider) *lifeFixture {
	return newLifeFixtureAt(t, prov, newFakeClock(t0))
}

func newLifeFixtureAt(t *testing.T, prov messaging.Provider, clock *fakeClock) *lifeFixture {
	t.Helper()
	f := &lifeFixture{ctx: context.Background(), store: memstore.New(), clock: clock}
	svc, err := messaging.New(f.store, prov, &messaging.Options{Clock: f.clock.Now, SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	for _, ws := range []string{"acme", "other"} {
		if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: ws}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// connectedFixture is newLifeFixture with acme's WhatsApp connected:
// phone-number id 1234, WABA 5555, token EAAGtoken1.
func connectedFixture(t *testing.T, prov messaging.Provider) *lifeFixture {
	t.Helper()
	f := newLifeFixture(t, prov)
	if _, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGtoken1")); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestConnectValidation(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	tests := []struct {
		name  string
		p     *connectParams
		field string
	}{
		{"phone-number id not digits", waConnect("acme", "12a4", "99", "EAAGtoken1"), "phone_number_id"},
		{"phone-number id empty", waConnect("acme", "", "99", "EAAGtoken1"), "phone_number_id"},
		{"waba id missing", waConnect("acme", "1234", "", "EAAGtoken1"), "waba_id"},
		{"waba id not digits", waConnect("acme", "1234", "x9", "EAAGtoken1"), "waba_id"},
		{"empty token", waConnect("acme", "1234", "99", ""), "access_token"},
		{"short token", waConnect("acme", "1234", "99", "EAAG"), "access_token"},
		{"token with a space", waConnect("acme", "1234", "99", "EAAG token"), "access_token"},
		{"display number not E.164", &connectParams{WorkspaceID: "acme", Channel: "whatsapp", AccountID: "1", WABAID: "2", AccessToken: "EAAGtoken1", DisplayPhoneNumber: "07000"}, "display_phone_number"},
		{"page id not digits", &connectParams{WorkspaceID: "acme", Channel: "messenger", AccountID: "page", AccessToken: "EAAGtoken1"}, "page_id"},
		{"instagram id not digits", &connectParams{WorkspaceID: "acme", Channel: "instagram", AccountID: "-1", AccessToken: "EAAGtoken1"}, "instagram_account_id"},
		{"waba id on messenger", &connectParams{WorkspaceID: "acme", Channel: "messenger", AccountID: "5", WABAID: "6", AccessToken: "EAAGtoken1"}, "waba_id"},
	}
	for _, tc := range tests {
		_, err := connect(f.ctx, f.svc, tc.p)
		wantError(t, err, messaging.CodeValidation, tc.field)
	}
	_, err := connect(f.ctx, f.svc, &connectParams{WorkspaceID: "acme", Channel: "sms", AccountID: "1", AccessToken: "EAAGtoken1"})
	wantError(t, err, messaging.CodeNotFound, "")
	for _, ch := range f.svc.Channels() {
		if c, err := connection(f.ctx, f.svc, "acme", ch); messaging.ErrorCode(err) != messaging.CodeNotFound {
			t.Errorf("%s after refused connects = %+v, %v; want no connection", ch, c, err)
		}
	}
	if _, err := connect(f.ctx, f.svc, waConnect("nope", "1234", "99", "EAAGtoken1")); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("connect in an unknown workspace: %v, want not_found", err)
	}
}

func TestConnectSealsTheToken(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	const token = "EAAGsecret-token-ABCD"
	c, err := connect(f.ctx, f.svc, &connectParams{WorkspaceID: "acme", Channel: "whatsapp", AccountID: "1234567890",
		WABAID: "9876543210", AccessToken: token, DisplayPhoneNumber: "+254700000000"})
	if err != nil {
		t.Fatal(err)
	}
	want := &messaging.ChannelConnection{WorkspaceID: "acme", Channel: "whatsapp", AccountID: "1234567890", WABAID: "9876543210",
		DisplayPhoneNumber: "+254700000000", TokenHint: "ABCD", Status: record.ConnectionConnected, VerifiedAt: &t0, Generation: 1, CreatedAt: t0, UpdatedAt: t0,
		Throughput: record.DefaultThroughput, QualityRating: record.QualityGreen, QualityChangedAt: &t0, MessagingTier: record.Tier1K, TierChangedAt: &t0}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("Connect (-want +got):\n%s", d)
	}
	stored, err := f.store.ConnectionGet(f.ctx, "acme", "whatsapp")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.TokenSealed) == 0 || bytes.Contains(stored.TokenSealed, []byte("secret-token")) {
		t.Errorf("stored token %q is not sealed", stored.TokenSealed)
	}
	snd, err := f.svc.ChannelSender(f.ctx, "acme", "whatsapp")
	if err != nil || snd.AccessToken != token || snd.AccountID != "1234567890" || snd.WABAID != "9876543210" {
		t.Fatalf("ChannelSender = %+v, %v; want the unsealed token and ids", snd, err)
	}
	for _, s := range []string{snd.String(), snd.GoString()} {
		if strings.Contains(s, "secret") {
			t.Errorf("sender printed as %q shows the token", s)
		}
	}
	w, _ := f.svc.GetWorkspace(f.ctx, "acme")
	if !cmp.Equal(w.Channels, []string{"whatsapp"}) {
		t.Errorf("channels after Connect = %v, want [whatsapp]", w.Channels)
	}
	// Another workspace cannot take the same number or WABA.
	_, err = connect(f.ctx, f.svc, waConnect("other", "1234567890", "555", "EAAGtoken2"))
	wantError(t, err, messaging.CodeConflict, "phone_number_id")
	// A WABA clash names waba_id.
	_, err = connect(f.ctx, f.svc, waConnect("other", "777", "9876543210", "EAAGtoken2"))
	wantError(t, err, messaging.CodeConflict, "waba_id")
	// Reconnecting replaces the credentials.
	f.clock.Advance(time.Minute)
	c2, err := connect(f.ctx, f.svc, waConnect("acme", "1234567890", "9876543210", "EAAGnewtoken-WXYZ"))
	if err != nil || c2.TokenHint != "WXYZ" || c2.Generation != 2 || !c2.CreatedAt.Equal(t0) {
		t.Errorf("reconnect = %+v, %v; want hint WXYZ, generation 2, first CreatedAt", c2, err)
	}
	// Disconnecting keeps the record; sends then have no sender, and the
	// account is free for another workspace.
	if err := setChannel(f.ctx, f.svc, "acme", "whatsapp", false); err != nil {
		t.Fatal(err)
	}
	if c, err := connection(f.ctx, f.svc, "acme", "whatsapp"); err != nil || c.Status != record.ConnectionDisconnected {
		t.Errorf("connection after disconnect = %+v, %v; want kept, disconnected", c, err)
	}
	if _, err := f.svc.ChannelSender(f.ctx, "acme", "whatsapp"); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("sender of a disconnected channel: %v, want ErrNotFound", err)
	}
	if _, err := connect(f.ctx, f.svc, waConnect("other", "1234567890", "9876543210", "EAAGtoken2")); err != nil {
		t.Errorf("connecting a number disconnected elsewhere: %v", err)
	}
}

func TestConnectNeedsSecretKey(t *testing.T) {
	t.Parallel()
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(ctx, svc, waConnect("acme", "1", "2", "EAAGtoken1")); messaging.ErrorCode(err) != messaging.CodeInternal {
		t.Errorf("Connect without a secret key: %v, want internal_error", err)
	}
}

// tokenRefuser refuses every send with Meta's 190 (expired token) and
// records the senders it was handed.
type tokenRefuser struct {
	verifies
	metaChannels
	mu      sync.Mutex
	senders []*messaging.ChannelSender
}

func (p *tokenRefuser) Send(ctx context.Context, s *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	p.mu.Lock()
	p.senders = append(p.senders, s)
	p.mu.Unlock()
	return nil, &messaging.SendError{Code: "190", Text: "Error validating access token: Session has expired", Credentials: true}
}

func TestRefusedTokenMarksTheConnection(t *testing.T) {
	t.Parallel()
	prov := &tokenRefuser{}
	f := newLifeFixture(t, prov)
	if _, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "99", "EAAGexpired1")); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	m, err := f.svc.Workspace("acme").Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+14155550123", Type: "text", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	if len(prov.senders) != 1 || prov.senders[0].AccessToken != "EAAGexpired1" || prov.senders[0].AccountID != "1234" {
		t.Fatalf("provider was handed %v, want the connection's sender", prov.senders)
	}
	got, _ := f.svc.Workspace("acme").Messages.Get(f.ctx, m.MessageID)
	if got.Status != messaging.StatusFailed || !strings.Contains(got.FailureReason, "[190]") {
		t.Errorf("message = %s %q, want failed with [190]", got.Status, got.FailureReason)
	}
	c, _ := connection(f.ctx, f.svc, "acme", "whatsapp")
	if c.Status != record.ConnectionError || !strings.Contains(c.StatusReason, "expired") {
		t.Errorf("connection = %s %q, want error naming the expired token", c.Status, c.StatusReason)
	}
	// New credentials clear the error.
	c, err = connect(f.ctx, f.svc, waConnect("acme", "1234", "99", "EAAGfresh-1"))
	if err != nil || c.Status != record.ConnectionConnected || c.StatusReason != "" {
		t.Errorf("reconnect = %+v, %v; want connected without reason", c, err)
	}
}

// senderRecorder accepts every send and records the sender it was
// handed; it verifies every connection, unless it is down.
type senderRecorder struct {
	metaChannels
	mu      sync.Mutex
	senders []*messaging.ChannelSender
	n       int
	down    bool
}

func (p *senderRecorder) VerifyConnection(context.Context, *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil, errDown
	}
	return &messaging.VerifiedAccount{}, nil
}

func (p *senderRecorder) Send(_ context.Context, s *messaging.ChannelSender, _ *messaging.Message) (*messaging.SendReceipt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.senders = append(p.senders, s)
	p.n++
	return &messaging.SendReceipt{ProviderMessageID: fmt.Sprintf("wamid.%d", p.n)}, nil
}

func (p *senderRecorder) handed() []*messaging.ChannelSender {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.senders)
}

// TestDispatcherHandsTheSender: the dispatcher resolves the workspace's
// connection and hands it to Provider.Send (account, WABA, unsealed
// token, generation); a channel connected without credentials is handed
// no sender; a message whose channel got credentials the provider has not
// verified yet waits for them ([pending_verification], retried) and
// reaches no provider.
func TestDispatcherHandsTheSender(t *testing.T) {
	t.Parallel()
	prov := &senderRecorder{}
	f := connectedFixture(t, prov)
	send := func(ws, channel, to string) string {
		t.Helper()
		res, err := f.svc.Workspace(ws).Messages.Send(f.ctx, &messaging.SendParams{Channel: channel, To: to, Type: "text", Text: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		return res.MessageID
	}
	dispatch := func() {
		t.Helper()
		if _, err := f.svc.DispatchDue(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	send("acme", "whatsapp", "+14155550123")
	if err := setChannel(f.ctx, f.svc, "other", "messenger", true); err != nil {
		t.Fatal(err)
	}
	send("other", "messenger", "psid_1")
	dispatch()
	byWS := map[string]*messaging.ChannelSender{}
	for _, s := range prov.handed() {
		if s == nil {
			byWS["other"] = nil
			continue
		}
		byWS[s.WorkspaceID] = s
	}
	want := map[string]*messaging.ChannelSender{
		"acme":  {WorkspaceID: "acme", Channel: "whatsapp", AccountID: "1234", WABAID: "5555", AccessToken: "EAAGtoken1", Generation: 1},
		"other": nil,
	}
	if d := cmp.Diff(want, byWS); d != "" || len(prov.handed()) != 2 {
		t.Errorf("senders handed (-want +got):\n%s(%d sends)", d, len(prov.handed()))
	}

	queued := send("other", "messenger", "psid_1")
	prov.mu.Lock()
	prov.down = true
	prov.mu.Unlock()
	c, err := connect(f.ctx, f.svc, &connectParams{WorkspaceID: "other", Channel: "messenger", AccountID: "777", AccessToken: "EAAGpending"})
	if err != nil || c.Status != record.ConnectionPending {
		t.Fatalf("connect while the provider is down = %+v, %v; want pending", c, err)
	}
	dispatch()
	got, _ := f.store.MessageGet(f.ctx, "other", queued)
	if want := "[pending_verification] the messenger connection's credentials are not verified with the provider yet"; got.Status != messaging.StatusQueued || got.LastError != want {
		t.Errorf("message of a pending connection = %s %q, want queued for a retry after %q", got.Status, got.LastError, want)
	}
	if n := len(prov.handed()); n != 2 {
		t.Errorf("%d sends reached the provider, want 2: none with unverified credentials", n)
	}
}

func TestTemplateDraftLifecycle(t *testing.T) {
	t.Parallel()
	f, _ := reviewFixture(t)
	ts := f.svc.Workspace("acme").Templates
	d, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "welcome", Category: "UTILITY", Language: "en", Status: record.TemplateDraft,
		Components: []messaging.TemplateComponent{body("Hi {{1}}")}})
	if err != nil || d.Status != record.TemplateDraft || d.ProviderTemplateID != "" {
		t.Fatalf("draft = %+v, %v", d, err)
	}
	// A draft is edited under every authoring rule.
	_, err = ts.Update(f.ctx, d.ID, &messaging.TemplateCreateParams{Name: "welcome", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Hi {{2}}")}})
	wantError(t, err, messaging.CodeValidation, "components[0].text")
	d, err = ts.Update(f.ctx, d.ID, &messaging.TemplateCreateParams{Name: "welcome_v2", Category: "MARKETING", Language: "en",
		Components: []messaging.TemplateComponent{body("Hello {{1}}")}})
	if err != nil || d.Name != "welcome_v2" || d.Category != "MARKETING" || d.Status != record.TemplateDraft {
		t.Fatalf("edited draft = %+v, %v", d, err)
	}
	if list, _ := ts.List(f.ctx, nil); len(list) != 0 {
		t.Errorf("approved list holds a draft: %v", list)
	}
	sub, err := ts.Submit(f.ctx, d.ID)
	if err != nil || sub.Status != record.TemplatePending || sub.ProviderTemplateID == "" {
		t.Fatalf("submitted = %+v, %v; want pending with the provider's id", sub, err)
	}
	_, err = ts.Update(f.ctx, d.ID, &messaging.TemplateCreateParams{Name: "welcome_v3", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Hello")}})
	if e := wantError(t, err, messaging.CodeConflict, "status"); e != nil && !strings.Contains(e.Message, "pending") {
		t.Errorf("edit after submission: %q does not name the state", e.Message)
	}
	_, err = ts.Submit(f.ctx, d.ID)
	wantError(t, err, messaging.CodeConflict, "status")
}

// reviewFixture is a Service whose fake provider reviews templates after 2 s
// of the test clock.
func reviewFixture(t *testing.T) (*lifeFixture, *fakeprovider.Provider) {
	t.Helper()
	clock := newFakeClock(t0)
	prov := fakeprovider.NewWithOptions(&fakeprovider.Options{ReviewAfter: 2 * time.Second, Clock: clock.Now})
	f := newLifeFixtureAt(t, prov, clock)
	svc := f.svc
	prov.SetSink(svc)
	if err := setChannel(f.ctx, svc, "acme", "whatsapp", true); err != nil {
		t.Fatal(err)
	}
	return f, prov
}

func TestFakeReviewApprovesAndRejects(t *testing.T) {
	t.Parallel()
	f, prov := reviewFixture(t)
	ts := f.svc.Workspace("acme").Templates
	ok, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "order_shipped", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Order {{1}} shipped")}})
	if err != nil || ok.Status != record.TemplatePending {
		t.Fatalf("create = %+v, %v", ok, err)
	}
	bad, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "reject_me", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Hello")}})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(1999 * time.Millisecond)
	if _, err := prov.Flush(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := ts.Get(f.ctx, ok.ID); got.Status != record.TemplatePending {
		t.Errorf("before ReviewAfter: %s, want pending", got.Status)
	}
	f.clock.Advance(time.Millisecond)
	if _, err := prov.Flush(f.ctx); err != nil {
		t.Fatal(err)
	}
	list, err := ts.List(f.ctx, nil)
	if err != nil || len(list) != 1 || list[0].ID != ok.ID {
		t.Fatalf("approved list = %v, %v; want order_shipped", list, err)
	}
	got, _ := ts.Get(f.ctx, bad.ID)
	if got.Status != record.TemplateRejected || got.StatusReason != fakeprovider.ReasonInvalidFormat {
		t.Errorf("reject_me = %s %q, want rejected INVALID_FORMAT", got.Status, got.StatusReason)
	}
	// A pause from the provider takes it out of the approved list.
	prov.TemplateEvent("acme", "order_shipped", "en", record.ProviderTemplatePaused, "LOW_QUALITY")
	if _, err := prov.Flush(f.ctx); err != nil {
		t.Fatal(err)
	}
	got, _ = ts.Get(f.ctx, ok.ID)
	if got.Status != record.TemplatePaused || got.StatusReason != "LOW_QUALITY" {
		t.Errorf("after PAUSED: %s %q", got.Status, got.StatusReason)
	}
	// Deleting removes it here (and at the provider).
	if err := ts.Delete(f.ctx, ok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Get(f.ctx, ok.ID); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("get after delete: %v, want not_found", err)
	}
}

func TestApplyTemplateEventMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		event, reason, quality string
		wantStatus, wantReason string
		wantQuality            string
	}{
		{event: "APPROVED", wantStatus: "approved"},
		{event: "REJECTED", reason: "INVALID_FORMAT", wantStatus: "rejected", wantReason: "INVALID_FORMAT"},
		{event: "PAUSED", reason: "LOW_QUALITY", wantStatus: "paused", wantReason: "LOW_QUALITY"},
		{event: "DISABLED", reason: "POLICY", wantStatus: "disabled", wantReason: "POLICY"},
		{event: "FLAGGED", reason: "LOW_QUALITY", wantStatus: "approved", wantReason: "flagged LOW_QUALITY"},
		{event: "REINSTATED", reason: "NONE", wantStatus: "approved"},
		{event: "ARCHIVED", wantStatus: "paused", wantReason: "archived"},
		{event: "UNARCHIVED", wantStatus: "approved"},
		{event: "IN_APPEAL", wantStatus: "pending"},
		{event: "LIMIT_EXCEEDED", wantStatus: "disabled"},
		{event: "QUALITY", quality: "red", wantStatus: "approved", wantQuality: "RED"},
		{event: "approved", wantStatus: "approved"},
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			t.Parallel()
			f := connectedFixture(t, &tokenRefuser{})
			tpl, err := f.svc.Workspace("acme").Templates.Create(f.ctx, approved("greeting", body("Hi")))
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "5555", Name: "greeting", Language: "en",
				ProviderTemplateID: "77", Event: tc.event, Reason: tc.reason, Quality: tc.quality})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tpl.ID || got.Status != tc.wantStatus || got.StatusReason != tc.wantReason || got.Quality != tc.wantQuality || got.ProviderTemplateID != "77" {
				t.Errorf("after %s: %s %q quality %q id %q; want %s %q %q 77", tc.event, got.Status, got.StatusReason, got.Quality, got.ProviderTemplateID, tc.wantStatus, tc.wantReason, tc.wantQuality)
			}
			stored, _ := f.svc.Workspace("acme").Templates.Get(f.ctx, tpl.ID)
			if stored.Status != tc.wantStatus {
				t.Errorf("stored status %s, want %s", stored.Status, tc.wantStatus)
			}
		})
	}
}

func TestApplyTemplateEventRefusals(t *testing.T) {
	t.Parallel()
	f := connectedFixture(t, &tokenRefuser{})
	ts := f.svc.Workspace("acme").Templates
	tpl, err := ts.Create(f.ctx, approved("greeting", body("Hi")))
	if err != nil {
		t.Fatal(err)
	}
	draft, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "later", Category: "UTILITY", Language: "en", Status: "draft",
		Components: []messaging.TemplateComponent{body("Hi")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "5555", Name: "greeting", Language: "en", Event: "EXPLODED"})
	wantError(t, err, messaging.CodeValidation, "event")
	// An event for an account no workspace has is never applied elsewhere.
	_, err = f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "1234", Name: "greeting", Language: "en", Event: "PAUSED"})
	if messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("event for a phone-number id as WABA: %v, want not_found", err)
	}
	_, err = f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "999", Name: "greeting", Language: "en", Event: "PAUSED"})
	if messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("event for an unknown WABA: %v, want not_found", err)
	}
	_, err = f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "5555", Name: "later", Language: "en", Event: "APPROVED"})
	wantError(t, err, messaging.CodeConflict, "status")
	if got, _ := ts.Get(f.ctx, tpl.ID); got.Status != record.TemplateApproved {
		t.Errorf("greeting moved to %s by refused events", got.Status)
	}
	if got, _ := ts.Get(f.ctx, draft.ID); got.Status != record.TemplateDraft {
		t.Errorf("draft moved to %s", got.Status)
	}
	// DELETED removes the template.
	got, err := f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "5555", Name: "greeting", Language: "en", Event: "DELETED"})
	if err != nil || got != nil {
		t.Fatalf("DELETED = %v, %v", got, err)
	}
	if _, err := ts.Get(f.ctx, tpl.ID); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("after DELETED: %v, want not_found", err)
	}
}
