package messaging_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/testclock"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// t0 is the fake clock's starting time.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// fakeClock is a controllable clock for messaging.Options.Clock.
type fakeClock = testclock.Clock

func newFakeClock(t time.Time) *fakeClock { return testclock.New(t) }

// countingStore wraps a store and counts the records actually created, so
// that tests can assert that a refused request stored nothing.
type countingStore struct {
	driver.Store
	messages  atomic.Int64
	contacts  atomic.Int64
	templates atomic.Int64
	keys      atomic.Int64
}

func (s *countingStore) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	stored, created, err := s.Store.MessageCreate(ctx, m)
	if err == nil && created {
		s.messages.Add(1)
	}
	return stored, created, err
}

func (s *countingStore) ContactCreate(ctx context.Context, c *messaging.Contact) error {
	err := s.Store.ContactCreate(ctx, c)
	if err == nil {
		s.contacts.Add(1)
	}
	return err
}

func (s *countingStore) TemplateCreate(ctx context.Context, t *messaging.Template) error {
	err := s.Store.TemplateCreate(ctx, t)
	if err == nil {
		s.templates.Add(1)
	}
	return err
}

func (s *countingStore) APIKeyCreate(ctx context.Context, k *messaging.APIKey) error {
	err := s.Store.APIKeyCreate(ctx, k)
	if err == nil {
		s.keys.Add(1)
	}
	return err
}

// counts is a snapshot of countingStore's counters.
type counts struct{ Messages, Contacts, Templates, Keys int64 }

func (s *countingStore) counts() counts {
	return counts{s.messages.Load(), s.contacts.Load(), s.templates.Load(), s.keys.Load()}
}

// eventLog records the events a Service publishes.
type eventLog struct {
	mu     sync.Mutex
	events []*messaging.Event
}

func (l *eventLog) add(_ context.Context, e *messaging.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) take() []*messaging.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// fixture is a Service on memstore with a fake clock, the workspace "acme"
// (all three channels connected) and the workspace "other" (whatsapp only).
type fixture struct {
	ctx      context.Context
	svc      *messaging.Service
	clock    *fakeClock
	store    *countingStore
	provider *fakeprovider.Provider
	events   *eventLog
	acme     *messaging.Workspace
	other    *messaging.Workspace
}

func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		ctx:      context.Background(),
		clock:    newFakeClock(t0),
		store:    &countingStore{Store: memstore.New()},
		provider: fakeprovider.New(),
		events:   &eventLog{},
	}
	svc, err := messaging.New(f.store, f.provider, &messaging.Options{Clock: f.clock.Now})
	if err != nil {
		t.Fatalf("messaging.New: %v", err)
	}
	t.Cleanup(func() { _ = f.store.Close() })
	f.svc = svc
	unsubscribe := svc.Subscribe(f.events.add)
	t.Cleanup(unsubscribe)
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme Ltd", Channels: svc.Channels()}); err != nil {
		t.Fatalf("CreateWorkspace(acme): %v", err)
	}
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "other", Name: "Other Ltd", Channels: []string{messaging.ChannelWhatsApp}}); err != nil {
		t.Fatalf("CreateWorkspace(other): %v", err)
	}
	f.acme = svc.Workspace("acme")
	f.other = svc.Workspace("other")
	return f
}

// errInfo is the part of a *messaging.Error that tests compare.
type errInfo struct {
	Code  messaging.Code
	Field string
}

// wantError fails the test unless err is a *messaging.Error with the given
// code and field, and returns it.
func wantError(t *testing.T, err error, code messaging.Code, field string) *messaging.Error {
	t.Helper()
	var e *messaging.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *messaging.Error{Code: %s, Field: %q}", err, err, code, field)
	}
	if d := cmp.Diff(errInfo{code, field}, errInfo{e.Code, e.Field}); d != "" {
		t.Fatalf("error %q mismatch (-want +got):\n%s", e.Error(), d)
	}
	if messaging.ErrorCode(err) != code {
		t.Fatalf("ErrorCode(%v) = %s, want %s", err, messaging.ErrorCode(err), code)
	}
	// Every error of the library that names a field has its path, from
	// which the field is rendered.
	if got := e.Path.String(); got != e.Field {
		t.Fatalf("error %q: Path %v renders %q, Field is %q", e.Error(), e.Path, got, e.Field)
	}
	return e
}

// mustSend sends p from ws and fails the test on error.
func (f *fixture) mustSend(t *testing.T, ws *messaging.Workspace, p *messaging.SendParams) *messaging.SendResult {
	t.Helper()
	res, err := ws.Messages.Send(f.ctx, p)
	if err != nil {
		t.Fatalf("Send(%+v): %v", p, err)
	}
	return res
}

// mustContact creates a contact in ws and fails the test on error.
func (f *fixture) mustContact(t *testing.T, ws *messaging.Workspace, p *messaging.ContactCreateParams) *messaging.Contact {
	t.Helper()
	c, err := ws.Contacts.Create(f.ctx, p)
	if err != nil {
		t.Fatalf("Contacts.Create(%+v): %v", p, err)
	}
	return c
}

// mustTemplate creates a template in ws and fails the test on error.
func (f *fixture) mustTemplate(t *testing.T, ws *messaging.Workspace, p *messaging.TemplateCreateParams) *messaging.Template {
	t.Helper()
	tpl, err := ws.Templates.Create(f.ctx, p)
	if err != nil {
		t.Fatalf("Templates.Create(%s): %v", p.Name, err)
	}
	return tpl
}

// textMsg is a valid WhatsApp text message to to.
func textMsg(to string) *messaging.SendParams {
	return &messaging.SendParams{Channel: messaging.ChannelWhatsApp, To: to, Type: record.TypeText, Text: "Hello"}
}

// body is a BODY component with text.
func body(text string) messaging.TemplateComponent {
	return messaging.TemplateComponent{Type: "BODY", Text: text}
}

// approved returns template create params of an approved UTILITY template in
// English with the given components.
func approved(name string, comps ...messaging.TemplateComponent) *messaging.TemplateCreateParams {
	return &messaging.TemplateCreateParams{Name: name, Category: record.CategoryUtility, Language: "en",
		Status: record.TemplateApproved, Components: comps}
}

func ptr[T any](v T) *T { return &v }

func intPtr(i int) *int { return &i }

// runes returns a string of n copies of r.
func runes(r rune, n int) string { return strings.Repeat(string(r), n) }

// msgView holds the fields of a message that callers see (the spec's
// Message resource and the request fields stored with it). Tests compare
// views rather than whole records so that internal bookkeeping fields
// (request hash, dispatcher state) stay free to change.
type msgView struct {
	ID, WorkspaceID, ConversationID, Channel, To, Direction, Status, FailureReason string
	Type, Text, MediaURL, Caption, Filename, TemplateName, Language                string
	Components                                                                     []messaging.SendComponent
	IdempotencyKey                                                                 string
	CreatedAt, UpdatedAt                                                           time.Time
}

func viewOf(m *messaging.Message) *msgView {
	return &msgView{
		ID: m.ID, WorkspaceID: m.WorkspaceID, ConversationID: m.ConversationID, Channel: m.Channel, To: m.To,
		Direction: m.Direction, Status: m.Status, FailureReason: m.FailureReason, Type: m.Type, Text: m.Text,
		MediaURL: m.MediaURL, Caption: m.Caption, Filename: m.Filename, TemplateName: m.TemplateName,
		Language: m.Language, Components: m.Components, IdempotencyKey: m.IdempotencyKey,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

// second returns the error of a call that also returns a value.
func second[T any](_ T, err error) error { return err }

// verifies proves every connection: test providers embed it to be
// ConnectionVerifiers (Service.Connect needs one).
type verifies struct{}

func (verifies) VerifyConnection(context.Context, *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	return &messaging.VerifiedAccount{}, nil
}

// metaChannels makes a test provider serve Meta's channels (a
// messaging.ChannelProvider), as the fake does.
type metaChannels struct{}

func (metaChannels) Channels() []messaging.ChannelSpec { return metaprovider.ChannelSpecs() }

// connectParams are a workspace's credentials for one channel as the tests
// give them: the account id, the owner id (waba_id) and the display
// number, named by Meta's channel specs when connecting.
type connectParams struct {
	WorkspaceID, Channel, AccountID, WABAID, DisplayPhoneNumber, AccessToken string
}

// waConnect is the WhatsApp credentials of ws.
func waConnect(ws, phoneID, waba, token string) *connectParams {
	return &connectParams{WorkspaceID: ws, Channel: messaging.ChannelWhatsApp, AccountID: phoneID, WABAID: waba, AccessToken: token}
}

// credentials returns p as the Channels handle takes them.
func (p *connectParams) credentials() *messaging.ChannelCredentials {
	creds := &messaging.ChannelCredentials{Fields: map[string]string{}, AccessToken: p.AccessToken}
	for _, spec := range metaprovider.ChannelSpecs() {
		if spec.Name != p.Channel {
			continue
		}
		for name, v := range map[string]string{spec.Account.Name: p.AccountID, spec.Owner.Name: p.WABAID, spec.Display.Name: p.DisplayPhoneNumber} {
			if v != "" {
				creds.Fields[name] = v
			}
		}
		if p.WABAID != "" && spec.Owner.Name == "" {
			creds.Fields[metaprovider.FieldWABAID] = p.WABAID
		}
	}
	return creds
}

// connect connects p through the workspace's Channels handle and returns
// the connection as stored.
func connect(ctx context.Context, svc *messaging.Service, p *connectParams) (*messaging.ChannelConnection, error) {
	st, err := svc.Workspace(p.WorkspaceID).Channels.Connect(ctx, p.Channel, p.credentials())
	if err != nil {
		return nil, err
	}
	return st.Connection, nil
}

// connection returns the connection record of ws on channel (without its
// token); not_found when the channel was never connected with
// credentials.
func connection(ctx context.Context, svc *messaging.Service, ws, channel string) (*messaging.ChannelConnection, error) {
	st, err := svc.Workspace(ws).Channels.Get(ctx, channel)
	if err != nil {
		return nil, err
	}
	if st.Connection == nil {
		return nil, &messaging.Error{Code: messaging.CodeNotFound, Message: "no connection of " + channel}
	}
	return st.Connection, nil
}

// setChannel connects channel in ws without credentials (on) or
// disconnects it.
func setChannel(ctx context.Context, svc *messaging.Service, ws, channel string, on bool) error {
	chans := svc.Workspace(ws).Channels
	if on {
		return second(chans.Connect(ctx, channel, nil))
	}
	return second(chans.Disconnect(ctx, channel))
}
