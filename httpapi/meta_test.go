package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

const (
	metaSecret   = "app-secret-0123456789abcdef"
	metaVerify   = "verify-me-please"
	metaPNID     = "106540352242922"
	metaPageID   = "PAGE_1"
	metaIGID     = "17841405822304914"
	metaWS       = "ws_meta"
	metaCustomer = "+254712345678"
)

// metaStore counts created messages and can fail provider-id lookups and
// the saves of pending status reports.
type metaStore struct {
	messaging.Store
	created    atomic.Int64
	broken     atomic.Bool
	saveBroken atomic.Bool
}

func (s *metaStore) PendingReportSave(ctx context.Context, p *messaging.PendingReportSaveParams) (bool, error) {
	if s.saveBroken.Load() {
		return false, errors.New("disk I/O error")
	}
	return s.Store.PendingReportSave(ctx, p)
}

func (s *metaStore) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	stored, created, err := s.Store.MessageCreate(ctx, m)
	if err == nil && created {
		s.created.Add(1)
	}
	return stored, created, err
}

func (s *metaStore) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	if s.broken.Load() {
		return nil, errors.New("disk I/O error")
	}
	return s.Store.MessageGetByProviderID(ctx, id)
}

// metaLog collects log output safely.
type metaLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *metaLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *metaLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type metaEnv struct {
	svc   *messaging.Service
	store *metaStore
	h     http.Handler
	log   *metaLog
}

func metaSetup(t testing.TB, cfg *httpapi.MetaWebhook, opts ...func(*httpapi.Options)) *metaEnv {
	t.Helper()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	e := &metaEnv{store: &metaStore{Store: memstore.New()}, log: &metaLog{}}
	svc, err := messaging.New(e.store, fakeprovider.New(), &messaging.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	for _, ws := range []string{metaWS, "ws_other"} {
		if _, err := svc.CreateWorkspace(t.Context(), &messaging.CreateWorkspaceParams{ID: ws, Name: ws, Channels: messaging.Channels()}); err != nil {
			t.Fatal(err)
		}
	}
	if cfg == nil {
		cfg = &httpapi.MetaWebhook{VerifyToken: metaVerify, AppSecret: metaSecret,
			Accounts: map[string]string{metaPNID: metaWS, metaPageID: metaWS, metaIGID: metaWS}}
	}
	o := &httpapi.Options{Meta: cfg, Logger: slog.New(slog.NewTextHandler(e.log, nil))}
	for _, f := range opts {
		f(o)
	}
	e.h = httpapi.New(svc, o)
	return e
}

// sent creates an outbound message in metaWS and records it as sent with
// provider id pid, as the dispatcher would.
func (e *metaEnv) sent(t testing.TB, channel, to, pid string) *messaging.Message {
	t.Helper()
	ctx := t.Context()
	res, err := e.svc.Workspace(metaWS).Messages.Send(ctx, &messaging.SendParams{Channel: channel, To: to, Type: "text", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.UpdateStatus(ctx, &messaging.StatusUpdate{WorkspaceID: metaWS, MessageID: res.MessageID, Status: "sent", ProviderMessageID: pid}); err != nil {
		t.Fatal(err)
	}
	return e.get(t, res.MessageID)
}

func (e *metaEnv) get(t testing.TB, id string) *messaging.Message {
	t.Helper()
	m, err := e.svc.Workspace(metaWS).Messages.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func metaSign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends body to the receiver, signed with the app secret unless
// headers say otherwise (a nil value removes the signature).
func (e *metaEnv) post(t testing.TB, path, body string, sig ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if sig == nil {
		r.Header.Set("X-Hub-Signature-256", metaSign(metaSecret, body))
	}
	for _, s := range sig {
		r.Header.Add("X-Hub-Signature-256", s)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

type metaAnswer struct {
	Statuses int `json:"statuses"`
	Messages int `json:"messages"`
	Ignored  int `json:"ignored"`
}

func (e *metaEnv) postOK(t *testing.T, body string) metaAnswer {
	t.Helper()
	w := e.post(t, "/webhooks/meta", body)
	if w.Code != 200 {
		t.Fatalf("POST = %d %s, want 200", w.Code, w.Body)
	}
	var a metaAnswer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %s: %v", w.Body, err)
	}
	return a
}

// waStatuses is a WhatsApp notification carrying statuses.
func waStatuses(statuses ...string) string {
	return fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":%q},
		"statuses":[%s]},"field":"messages"}]}]}`, metaPNID, strings.Join(statuses, ","))
}

func waStatus(id, status string) string {
	return fmt.Sprintf(`{"id":%q,"status":%q,"timestamp":"1750263773","recipient_id":"254712345678",
		"pricing":{"billable":true,"pricing_model":"PMP","category":"utility"}}`, id, status)
}

func waFailed(id string, code int, title, details string) string {
	return fmt.Sprintf(`{"id":%q,"status":"failed","timestamp":"1750263773","recipient_id":"254712345678",
		"errors":[{"code":%d,"title":%q,"message":%q,"error_data":{"details":%q},"href":"https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"}]}`,
		id, code, title, title, details)
}

func waInbound(from, id, msg string) string {
	return fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":%q},
		"contacts":[{"profile":{"name":"Amina"},"wa_id":%q}],
		"messages":[%s]},"field":"messages"}]}]}`, metaPNID, from, strings.Replace(strings.Replace(msg, "FROM", from, 1), "ID", id, 1))
}

func TestMetaHandshake(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	noToken := metaSetup(t, &httpapi.MetaWebhook{AppSecret: metaSecret})
	for _, c := range []struct {
		name   string
		env    *metaEnv
		query  url.Values
		status int
	}{
		{"valid", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {metaVerify}, "hub.challenge": {"1158201444"}}, 200},
		{"wrong token", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {"verify-me-pleasE"}, "hub.challenge": {"1158201444"}}, 403},
		{"token prefix", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {"verify-me"}, "hub.challenge": {"1"}}, 403},
		{"no token", e, url.Values{"hub.mode": {"subscribe"}, "hub.challenge": {"1"}}, 403},
		{"wrong mode", e, url.Values{"hub.mode": {"unsubscribe"}, "hub.verify_token": {metaVerify}, "hub.challenge": {"1"}}, 403},
		{"no challenge", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {metaVerify}}, 403},
		{"huge challenge", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {metaVerify}, "hub.challenge": {strings.Repeat("9", 10000)}}, 403},
		{"no token configured", noToken, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {""}, "hub.challenge": {"1"}}, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c.env.h.ServeHTTP(w, httptest.NewRequest("GET", "/webhooks/meta?"+c.query.Encode(), nil))
			if w.Code != c.status {
				t.Fatalf("status = %d (%s), want %d", w.Code, w.Body, c.status)
			}
			if c.status == 200 {
				if w.Body.String() != "1158201444" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
					t.Errorf("answer = %q (%s), want the challenge as text/plain", w.Body, w.Header().Get("Content-Type"))
				}
				return
			}
			if strings.Contains(w.Body.String(), "1158201444") {
				t.Error("a refused handshake echoed the challenge")
			}
			var env struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Error.Code != "forbidden" {
				t.Errorf("body = %s, want the forbidden envelope", w.Body)
			}
		})
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, httptest.NewRequest("PUT", "/webhooks/meta", nil))
	if w.Code != 405 || w.Header().Get("Allow") != "GET, POST" {
		t.Errorf("PUT = %d Allow %q, want 405 with Allow GET, POST", w.Code, w.Header().Get("Allow"))
	}
}

func TestMetaSignature(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	m := e.sent(t, "whatsapp", metaCustomer, "wamid.SIG")
	body := waStatuses(waStatus("wamid.SIG", "delivered"))
	good := metaSign(metaSecret, body)
	for _, c := range []struct {
		name string
		body string
		sig  []string
	}{
		{"missing", body, []string{}},
		{"empty", body, []string{""}},
		{"other secret", body, []string{metaSign("another-secret", body)}},
		{"sha1 form", body, []string{strings.Replace(good, "sha256=", "sha1=", 1)}},
		{"bare hex", body, []string{strings.TrimPrefix(good, "sha256=")}},
		{"truncated", body, []string{good[:len(good)-2]}},
		{"not hex", body, []string{"sha256=" + strings.Repeat("zz", 32)}},
		{"body changed after signing", strings.Replace(body, "delivered", "read", 1), []string{good}},
		{"two headers", body, []string{good, good}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := e.post(t, "/webhooks/meta", c.body, c.sig...)
			if w.Code != 401 {
				t.Fatalf("status = %d (%s), want 401", w.Code, w.Body)
			}
			var env struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Error.Code != "unauthorized" {
				t.Errorf("body = %s, want the unauthorized envelope", w.Body)
			}
			if got := e.get(t, m.ID).Status; got != "sent" {
				t.Errorf("status = %s after a refused notification, want sent", got)
			}
		})
	}

	// An empty AppSecret refuses everything, even a body "signed" with it.
	open := metaSetup(t, &httpapi.MetaWebhook{VerifyToken: metaVerify})
	om := open.sent(t, "whatsapp", metaCustomer, "wamid.SIG")
	if w := open.post(t, "/webhooks/meta", body, metaSign("", body)); w.Code != 401 {
		t.Errorf("empty AppSecret: status = %d, want 401", w.Code)
	}
	if got := open.get(t, om.ID).Status; got != "sent" {
		t.Errorf("empty AppSecret: status = %s, want sent", got)
	}

	// The valid signature applies it; upper-case hex is the same signature.
	upper := "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256="))
	if w := e.post(t, "/webhooks/meta", body, upper); w.Code != 200 {
		t.Fatalf("valid signature: status = %d (%s)", w.Code, w.Body)
	}
	if got := e.get(t, m.ID).Status; got != "delivered" {
		t.Errorf("status = %s, want delivered", got)
	}
}

func TestMetaStatusesInOrder(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	m := e.sent(t, "whatsapp", metaCustomer, "wamid.ORDER")
	var events []string
	unsubscribe := e.svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		events = append(events, ev.Data.PreviousStatus+">"+ev.Data.Status)
	})
	defer unsubscribe()
	for _, st := range []string{"sent", "delivered", "read"} {
		a := e.postOK(t, waStatuses(waStatus("wamid.ORDER", st)))
		if a.Statuses != 1 || a.Ignored != 0 {
			t.Errorf("%s: answer = %+v, want 1 status applied", st, a)
		}
		want := st
		if got := e.get(t, m.ID).Status; got != want {
			t.Errorf("after %s: status = %s, want %s", st, got, want)
		}
	}
	if diff := cmp.Diff([]string{"sent>delivered", "delivered>read"}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestMetaStatusesOutOfOrder(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	m := e.sent(t, "whatsapp", metaCustomer, "wamid.OOO")
	// read arrives before delivered, in one notification and in two.
	e.postOK(t, waStatuses(waStatus("wamid.OOO", "read"), waStatus("wamid.OOO", "delivered")))
	e.postOK(t, waStatuses(waStatus("wamid.OOO", "delivered")))
	e.postOK(t, waStatuses(waStatus("wamid.OOO", "sent")))
	e.postOK(t, waStatuses(waFailed("wamid.OOO", 131026, "Message undeliverable", "")))
	got := e.get(t, m.ID)
	if got.Status != "read" || got.FailureReason != "" {
		t.Errorf("status = %s (%q), want read: statuses never move back", got.Status, got.FailureReason)
	}
}

func TestMetaFailed(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	for _, c := range []struct {
		pid, status, reason string
	}{
		{"wamid.F1", waFailed("wamid.F1", 131026, "Message undeliverable", ""), "[131026] Message undeliverable"},
		{"wamid.F2", waFailed("wamid.F2", 131026, "Message undeliverable", "Message Undeliverable."), "[131026] Message undeliverable"},
		{"wamid.F3", waFailed("wamid.F3", 131049, "This message was not delivered to maintain healthy ecosystem engagement.", "In order to maintain a healthy ecosystem engagement, the message failed to be delivered."),
			"[131049] This message was not delivered to maintain healthy ecosystem engagement.: In order to maintain a healthy ecosystem engagement, the message failed to be delivered."},
		{"wamid.F4", `{"id":"wamid.F4","status":"failed","errors":[{"code":"131047","message":"Re-engagement message"}]}`, "[131047] Re-engagement message"},
		{"wamid.F5", `{"id":"wamid.F5","status":"failed"}`, "[unknown] Message failed"},
	} {
		m := e.sent(t, "whatsapp", metaCustomer, c.pid)
		e.postOK(t, waStatuses(c.status))
		got := e.get(t, m.ID)
		if got.Status != "failed" || got.FailureReason != c.reason {
			t.Errorf("%s: status %s, failure_reason %q; want failed, %q", c.pid, got.Status, got.FailureReason, c.reason)
		}
	}
}

func TestMetaUnknownItemsAreIgnoredAndLogged(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	m := e.sent(t, "whatsapp", metaCustomer, "wamid.KNOWN")
	a := e.postOK(t, waStatuses(
		waStatus("wamid.KNOWN", "delivered"),
		waStatus("wamid.KNOWN", "deleted"),
		waStatus("wamid.UNKNOWN", "deleted"),
		`{"status":"read"}`,
	))
	if diff := cmp.Diff(metaAnswer{Statuses: 1, Ignored: 3}, a); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if got := e.get(t, m.ID).Status; got != "delivered" {
		t.Errorf("status = %s, want delivered", got)
	}
	if !strings.Contains(e.log.String(), "wamid.UNKNOWN") {
		t.Errorf("the ignored status was not logged:\n%s", e.log)
	}
	if strings.Contains(e.log.String(), metaSecret) {
		t.Error("the app secret was logged")
	}
	// Unknown objects and fields are ignored too.
	if a := e.postOK(t, `{"object":"user","entry":[]}`); a.Ignored != 1 {
		t.Errorf("unknown object: answer = %+v", a)
	}
	if a := e.postOK(t, `{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"message_template_status_update","value":{}}]}]}`); a.Ignored != 1 {
		t.Errorf("unknown field: answer = %+v", a)
	}
}

func TestMetaInboundWhatsApp(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	out := e.sent(t, "whatsapp", metaCustomer, "wamid.OUT")
	body := waInbound("254712345678", "wamid.IN1", `{"from":"FROM","id":"ID","timestamp":"1750263773","type":"text","text":{"body":"Habari, nimepokea"}}`)
	before := e.store.created.Load()
	for range 2 { // Meta delivers at least once
		if a := e.postOK(t, body); a.Messages != 1 {
			t.Fatalf("answer = %+v, want 1 message", a)
		}
	}
	if n := e.store.created.Load() - before; n != 1 {
		t.Errorf("%d messages created, want 1", n)
	}
	in, err := e.store.MessageGetByProviderID(t.Context(), "wamid.IN1")
	if err != nil {
		t.Fatal(err)
	}
	want := &messaging.Message{WorkspaceID: metaWS, ConversationID: out.ConversationID, Channel: "whatsapp", To: metaCustomer,
		Direction: "inbound", Status: "delivered", Type: "text", Text: "Habari, nimepokea", ProviderMessageID: "wamid.IN1"}
	got := &messaging.Message{WorkspaceID: in.WorkspaceID, ConversationID: in.ConversationID, Channel: in.Channel, To: in.To,
		Direction: in.Direction, Status: in.Status, Type: in.Type, Text: in.Text, ProviderMessageID: in.ProviderMessageID}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inbound message (-want +got):\n%s", diff)
	}

	// Buttons, interactive replies and media are recorded; stickers and
	// reactions are not.
	for _, c := range []struct {
		msg      string
		typ, txt string
	}{
		{`{"from":"FROM","id":"ID","type":"button","button":{"payload":"STOP","text":"Stop promotions"}}`, "text", "Stop promotions"},
		{`{"from":"FROM","id":"ID","type":"interactive","interactive":{"type":"button_reply","button_reply":{"id":"b1","title":"Yes"}}}`, "text", "Yes"},
		{`{"from":"FROM","id":"ID","type":"interactive","interactive":{"type":"list_reply","list_reply":{"id":"l1","title":"Option 2"}}}`, "text", "Option 2"},
		{`{"from":"FROM","id":"ID","type":"image","image":{"id":"1479537139650973","mime_type":"image/jpeg","caption":"receipt"}}`, "image", ""},
		{`{"from":"FROM","id":"ID","type":"sticker","sticker":{"id":"1"}}`, "", ""},
		{`{"from":"FROM","id":"ID","type":"reaction","reaction":{"message_id":"wamid.OUT","emoji":"👍"}}`, "", ""},
		{`{"from":"FROM","id":"ID","type":"interactive","interactive":{"type":"nfm_reply"}}`, "", ""},
		{`{"from":"not-a-number","id":"ID","type":"text","text":{"body":"x"}}`, "", ""},
		{`{"from":"FROM","id":"","type":"text","text":{"body":"x"}}`, "", ""},
	} {
		id := fmt.Sprintf("wamid.IN.%d", len(c.msg))
		a := e.postOK(t, waInbound("254712345678", id, c.msg))
		if c.typ == "" {
			if a.Messages != 0 || a.Ignored != 1 {
				t.Errorf("%s: answer = %+v, want ignored", c.msg, a)
			}
			continue
		}
		got, err := e.store.MessageGetByProviderID(t.Context(), id)
		if err != nil {
			t.Errorf("%s: not recorded: %v", c.msg, err)
			continue
		}
		if got.Type != c.typ || got.Text != c.txt || got.ConversationID != out.ConversationID {
			t.Errorf("%s: recorded %s %q in %s", c.msg, got.Type, got.Text, got.ConversationID)
		}
		if c.typ == "image" && got.Caption != "receipt" {
			t.Errorf("caption = %q, want receipt", got.Caption)
		}
	}
}

func TestMetaInboundUnknownAccount(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, &httpapi.MetaWebhook{VerifyToken: metaVerify, AppSecret: metaSecret, Accounts: map[string]string{"999": "ws_other"}})
	before := e.store.created.Load()
	a := e.postOK(t, waInbound("254712345678", "wamid.LOST", `{"from":"FROM","id":"ID","type":"text","text":{"body":"hi"}}`))
	if a.Messages != 0 || a.Ignored != 1 {
		t.Errorf("answer = %+v, want the message ignored", a)
	}
	if e.store.created.Load() != before {
		t.Error("a message was recorded for an unknown account")
	}
	if !strings.Contains(e.log.String(), metaPNID) {
		t.Errorf("the unknown account was not logged:\n%s", e.log)
	}
}

func TestMetaMessengerAndInstagram(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	fb := e.sent(t, "messenger", "6543210987654321", "m_OUT1")
	ig := e.sent(t, "instagram", "17841400000000001", "aWdf_OUT1")
	a := e.postOK(t, `{"object":"page","entry":[{"id":"PAGE_1","time":1750263773000,"messaging":[
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"timestamp":1750263773000,"message":{"mid":"m_IN1","text":"Hi page"}},
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"timestamp":1750263773000,"message":{"mid":"m_IN2","attachments":[{"type":"file","payload":{"url":"https://cdn.example.com/f.pdf"}}]}},
		{"sender":{"id":"PAGE_1"},"recipient":{"id":"6543210987654321"},"timestamp":1750263773000,"message":{"mid":"m_OUT1","is_echo":true,"text":"hello"}},
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"delivery":{"mids":["m_OUT1"],"watermark":1750263773000}},
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"read":{"watermark":1750263773000}}
	]}]}`)
	if diff := cmp.Diff(metaAnswer{Statuses: 1, Messages: 2, Ignored: 2}, a); diff != "" {
		t.Errorf("messenger answer (-want +got):\n%s", diff)
	}
	if got := e.get(t, fb.ID).Status; got != "delivered" {
		t.Errorf("messenger status = %s, want delivered", got)
	}
	in, err := e.store.MessageGetByProviderID(t.Context(), "m_IN1")
	if err != nil || in.Text != "Hi page" || in.ConversationID != fb.ConversationID || in.Channel != "messenger" {
		t.Errorf("messenger inbound = %+v, %v", in, err)
	}
	file, err := e.store.MessageGetByProviderID(t.Context(), "m_IN2")
	if err != nil || file.Type != "document" || file.MediaURL != "https://cdn.example.com/f.pdf" {
		t.Errorf("messenger attachment = %+v, %v", file, err)
	}

	a = e.postOK(t, `{"object":"instagram","entry":[{"id":"17841405822304914","time":1750263773000,"messaging":[
		{"sender":{"id":"17841400000000001"},"recipient":{"id":"17841405822304914"},"timestamp":1750263773000,"message":{"mid":"aWdf_IN1","text":"Hi IG"}},
		{"sender":{"id":"17841400000000001"},"recipient":{"id":"17841405822304914"},"timestamp":1750263773000,"read":{"mid":"aWdf_OUT1"}}
	]}]}`)
	if diff := cmp.Diff(metaAnswer{Statuses: 1, Messages: 1}, a); diff != "" {
		t.Errorf("instagram answer (-want +got):\n%s", diff)
	}
	if got := e.get(t, ig.ID).Status; got != "read" {
		t.Errorf("instagram status = %s, want read", got)
	}
	in, err = e.store.MessageGetByProviderID(t.Context(), "aWdf_IN1")
	if err != nil || in.Text != "Hi IG" || in.ConversationID != ig.ConversationID || in.WorkspaceID != metaWS {
		t.Errorf("instagram inbound = %+v, %v", in, err)
	}
}

func TestMetaBadBodies(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil, func(o *httpapi.Options) { o.MaxBodyBytes = 2048 })
	for _, c := range []struct {
		name   string
		body   string
		status int
	}{
		{"not JSON", `{"object":`, 400},
		{"array", `[1,2]`, 400},
		{"wrong types", `{"object":"whatsapp_business_account","entry":{"id":1}}`, 400},
		{"empty object", `{}`, 200},
		{"null entry", `{"object":"page","entry":null}`, 200},
		{"null items", `{"object":"whatsapp_business_account","entry":[null,{"changes":[null,{"value":{"statuses":[null],"messages":[null]}}]}]}`, 200},
		{"over the size limit", `{"object":"page","pad":"` + strings.Repeat("x", 4096) + `"}`, 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := e.post(t, "/webhooks/meta", c.body)
			if w.Code != c.status {
				t.Errorf("status = %d (%s), want %d", w.Code, w.Body, c.status)
			}
		})
	}
}

func TestMetaStoreFailureAsksForRetry(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	m := e.sent(t, "whatsapp", metaCustomer, "wamid.RETRY")
	body := waStatuses(waStatus("wamid.RETRY", "delivered"))
	e.store.broken.Store(true)
	w := e.post(t, "/webhooks/meta", body)
	if w.Code != 500 || strings.Contains(w.Body.String(), "disk I/O") {
		t.Fatalf("status = %d (%s), want 500 without internal detail", w.Code, w.Body)
	}
	e.store.broken.Store(false)
	e.postOK(t, body) // Meta's retry
	if got := e.get(t, m.ID).Status; got != "delivered" {
		t.Errorf("status = %s, want delivered", got)
	}
}

// queued creates an outbound WhatsApp message in metaWS that the dispatcher
// has not handed to the provider yet.
func (e *metaEnv) queued(t *testing.T) string {
	t.Helper()
	res, err := e.svc.Workspace(metaWS).Messages.Send(t.Context(), &messaging.SendParams{Channel: "whatsapp", To: metaCustomer, Type: "text", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageID
}

// recordSent records message id as sent with provider id pid, as the
// dispatcher does when the provider answers the send.
func (e *metaEnv) recordSent(t *testing.T, id, pid string) {
	t.Helper()
	if _, err := e.svc.UpdateStatus(t.Context(), &messaging.StatusUpdate{WorkspaceID: metaWS, MessageID: id, Status: "sent", ProviderMessageID: pid}); err != nil {
		t.Fatal(err)
	}
}

// TestMetaStatusBeforeTheProviderIDIsKept: Meta reports delivered and read
// before the dispatcher has recorded the message's wamid. The receiver
// answers 200 and the reports are applied when the wamid is recorded.
func TestMetaStatusBeforeTheProviderIDIsKept(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	id := e.queued(t)
	var events []string
	unsubscribe := e.svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		events = append(events, ev.Data.PreviousStatus+">"+ev.Data.Status)
	})
	defer unsubscribe()
	a := e.postOK(t, waStatuses(waStatus("wamid.EARLY", "delivered")))
	a2 := e.postOK(t, waStatuses(waStatus("wamid.EARLY", "read")))
	if diff := cmp.Diff([]metaAnswer{{Statuses: 1}, {Statuses: 1}}, []metaAnswer{a, a2}); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if got := e.get(t, id).Status; got != "queued" {
		t.Fatalf("status = %s before the wamid is recorded, want queued", got)
	}
	e.recordSent(t, id, "wamid.EARLY")
	if got := e.get(t, id).Status; got != "read" {
		t.Errorf("status = %s, want read", got)
	}
	if diff := cmp.Diff([]string{"queued>sent", "sent>delivered", "delivered>read"}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestMetaStatusThatCannotBeKeptAsksForRetry: when the report of a wamid
// not recorded yet cannot be kept, the receiver answers 500 so that Meta
// delivers it again.
func TestMetaStatusThatCannotBeKeptAsksForRetry(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	id := e.queued(t)
	body := waStatuses(waStatus("wamid.LATE", "delivered"))
	e.store.saveBroken.Store(true)
	w := e.post(t, "/webhooks/meta", body)
	if w.Code != 500 || strings.Contains(w.Body.String(), "disk I/O") {
		t.Fatalf("status = %d (%s), want 500 without internal detail", w.Code, w.Body)
	}
	e.store.saveBroken.Store(false)
	if a := e.postOK(t, body); a.Statuses != 1 { // Meta's retry
		t.Errorf("retry: answer = %+v, want 1 status", a)
	}
	e.recordSent(t, id, "wamid.LATE")
	if got := e.get(t, id).Status; got != "delivered" {
		t.Errorf("status = %s, want delivered", got)
	}
}

func TestMetaMounting(t *testing.T) {
	t.Parallel()
	// Without Options.Meta there is no receiver.
	plain := metaSetup(t, nil, func(o *httpapi.Options) { o.Meta = nil })
	w := httptest.NewRecorder()
	plain.h.ServeHTTP(w, httptest.NewRequest("GET", "/webhooks/meta?hub.mode=subscribe&hub.verify_token="+metaVerify+"&hub.challenge=1", nil))
	if w.Code != 404 {
		t.Errorf("without Meta: status = %d, want 404", w.Code)
	}

	custom := metaSetup(t, &httpapi.MetaWebhook{Path: "/hooks/facebook", VerifyToken: metaVerify, AppSecret: metaSecret})
	w = httptest.NewRecorder()
	custom.h.ServeHTTP(w, httptest.NewRequest("GET", "/hooks/facebook?hub.mode=subscribe&hub.verify_token="+metaVerify+"&hub.challenge=42", nil))
	if w.Code != 200 || w.Body.String() != "42" {
		t.Errorf("custom path: %d %s", w.Code, w.Body)
	}

	// A path colliding with the API is refused without panicking, and the
	// API keeps working.
	for _, p := range []string{"/v1/messages", "/", "/v1/messages/{id}", "webhooks", "/a/../b", "/x y"} {
		bad := metaSetup(t, &httpapi.MetaWebhook{Path: p, VerifyToken: metaVerify, AppSecret: metaSecret})
		w = httptest.NewRecorder()
		bad.h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`{}`)))
		if w.Code != 401 {
			t.Errorf("Path %q: POST /v1/messages = %d, want 401 (the API untouched)", p, w.Code)
		}
		if !strings.Contains(bad.log.String(), "not mounted") {
			t.Errorf("Path %q: refusal not logged", p)
		}
	}
}

// FuzzMetaNotification checks that no signed body, however malformed,
// makes the receiver fail: it answers 200 or 400, never 500 or a panic.
func FuzzMetaNotification(f *testing.F) {
	for _, s := range []string{
		waStatuses(waStatus("wamid.X", "delivered"), waFailed("wamid.X", 131026, "Message undeliverable", "d")),
		waInbound("254712345678", "wamid.IN", `{"from":"FROM","id":"ID","type":"text","text":{"body":"hi"}}`),
		`{"object":"page","entry":[{"id":"PAGE_1","messaging":[{"sender":{"id":"1"},"recipient":{"id":"PAGE_1"},"message":{"mid":"m","text":"x"}},{"delivery":{"mids":["m"]}}]}]}`,
		`{"object":"instagram","entry":[{"messaging":[{"read":{"mid":""}}]}]}`,
		`{"object":"whatsapp_business_account","entry":[{"changes":[{"value":{"statuses":[{"id":"x","status":"failed","errors":[{"code":"abc"}]}]}}]}]}`,
		`{}`, `null`, `[]`, `"x"`,
	} {
		f.Add(s)
	}
	e := metaSetup(f, nil)
	e.sent(f, "whatsapp", metaCustomer, "wamid.X")
	f.Fuzz(func(t *testing.T, body string) {
		w := e.post(t, "/webhooks/meta", body)
		if w.Code != 200 && w.Code != 400 && w.Code != 413 {
			t.Fatalf("status %d (%s) for %q", w.Code, w.Body, body)
		}
	})
}
