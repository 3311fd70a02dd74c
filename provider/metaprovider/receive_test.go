package metaprovider_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

const (
	hookSecret   = "app-secret-0123456789abcdef"
	hookVerify   = "verify-me-please"
	hookPNID     = "106540352242922"
	hookPageID   = "PAGE_1"
	hookIGID     = "17841405822304914"
	hookWS       = "ws_meta"
	hookCustomer = "+254712345678"
)

// hookStore counts created messages and can fail provider-id lookups and
// the saves of pending status reports.
type hookStore struct {
	driver.Store
	created    atomic.Int64
	broken     atomic.Bool
	saveBroken atomic.Bool
}

func (s *hookStore) PendingReportSave(ctx context.Context, p *driver.PendingReportSaveParams) (bool, error) {
	if s.saveBroken.Load() {
		return false, errors.New("disk I/O error")
	}
	return s.Store.PendingReportSave(ctx, p)
}

func (s *hookStore) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	stored, created, err := s.Store.MessageCreate(ctx, m)
	if err == nil && created {
		s.created.Add(1)
	}
	return stored, created, err
}

func (s *hookStore) MessageReceive(ctx context.Context, p *driver.MessageReceiveParams) (*messaging.Message, bool, error) {
	stored, created, err := s.Store.MessageReceive(ctx, p)
	if err == nil && created {
		s.created.Add(1)
	}
	return stored, created, err
}

func (s *hookStore) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	if s.broken.Load() {
		return nil, errors.New("disk I/O error")
	}
	return s.Store.MessageGetByProviderID(ctx, id)
}

type hookEnv struct {
	svc   *messaging.Service
	store *hookStore
	rc    *metaprovider.Receiver
	log   *testlog.Buffer
}

// hookSetup returns a Receiver on a service with the workspaces ws_meta
// and ws_other. A nil opts receives for hookPNID, hookPageID and hookIGID
// in ws_meta; the logger is always the env's.
func hookSetup(t testing.TB, opts *metaprovider.ReceiverOptions) *hookEnv {
	t.Helper()
	e := &hookEnv{store: &hookStore{Store: memstore.New()}, log: &testlog.Buffer{}}
	svc, err := messaging.New(e.store, fakeprovider.New(), &messaging.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	for _, ws := range []string{hookWS, "ws_other"} {
		if _, err := svc.CreateWorkspace(t.Context(), &messaging.CreateWorkspaceParams{ID: ws, Name: ws, Channels: svc.Channels()}); err != nil {
			t.Fatal(err)
		}
	}
	if opts == nil {
		opts = &metaprovider.ReceiverOptions{VerifyToken: hookVerify, AppSecret: hookSecret,
			Accounts: map[string]string{hookPNID: hookWS, hookPageID: hookWS, hookIGID: hookWS}}
	}
	opts.Logger = slog.New(slog.NewTextHandler(e.log, nil))
	e.rc = metaprovider.NewReceiver(svc, opts)
	return e
}

// sent creates an outbound message in hookWS and records it as sent with
// provider id pid, as the dispatcher would.
func (e *hookEnv) sent(t testing.TB, channel, to, pid string) *messaging.Message {
	t.Helper()
	res, err := e.svc.Workspace(hookWS).Messages.Send(t.Context(), &messaging.SendParams{Channel: channel, To: to, Type: "text", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	e.recordSent(t, res.MessageID, pid)
	return e.get(t, res.MessageID)
}

// queued creates an outbound WhatsApp message in hookWS that the
// dispatcher has not handed to the provider yet.
func (e *hookEnv) queued(t *testing.T) string {
	t.Helper()
	res, err := e.svc.Workspace(hookWS).Messages.Send(t.Context(), &messaging.SendParams{Channel: "whatsapp", To: hookCustomer, Type: "text", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageID
}

// recordSent records message id as sent with provider id pid, as the
// dispatcher does when the provider answers the send.
func (e *hookEnv) recordSent(t testing.TB, id, pid string) {
	t.Helper()
	if _, err := e.svc.UpdateStatus(t.Context(), &messaging.StatusUpdate{WorkspaceID: hookWS, MessageID: id, Status: "sent", ProviderMessageID: pid}); err != nil {
		t.Fatal(err)
	}
}

func (e *hookEnv) get(t testing.TB, id string) *messaging.Message {
	t.Helper()
	m, err := e.svc.Workspace(hookWS).Messages.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func hookSign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends body to the receiver, signed with the app secret unless sig
// is given (an empty, non-nil sig sends no signature).
func (e *hookEnv) post(t testing.TB, body string, sig ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", "/webhooks/meta", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if sig == nil {
		r.Header.Set("X-Hub-Signature-256", hookSign(hookSecret, body))
	}
	for _, s := range sig {
		r.Header.Add("X-Hub-Signature-256", s)
	}
	w := httptest.NewRecorder()
	e.rc.ServeHTTP(w, r)
	return w
}

type hookAnswer struct {
	Statuses  int `json:"statuses"`
	Messages  int `json:"messages"`
	Templates int `json:"templates"`
	Accounts  int `json:"accounts"`
	Ignored   int `json:"ignored"`
}

func (e *hookEnv) postOK(t *testing.T, body string) hookAnswer {
	t.Helper()
	w := e.post(t, body)
	if w.Code != 200 {
		t.Fatalf("POST = %d %s, want 200", w.Code, w.Body)
	}
	var a hookAnswer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %s: %v", w.Body, err)
	}
	return a
}

// waStatuses is a WhatsApp notification carrying statuses.
func waStatuses(statuses ...string) string {
	return fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":%q},
		"statuses":[%s]},"field":"messages"}]}]}`, hookPNID, strings.Join(statuses, ","))
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
		"messages":[%s]},"field":"messages"}]}]}`, hookPNID, from, strings.Replace(strings.Replace(msg, "FROM", from, 1), "ID", id, 1))
}

// TestReceiverAnswers checks the answers of the Receiver used on its own
// as an http.Handler: errors as text/plain with their status, never the
// text of an internal failure.
func TestReceiverAnswers(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, &metaprovider.ReceiverOptions{VerifyToken: hookVerify, AppSecret: hookSecret, MaxBodyBytes: 64})
	e.sent(t, "whatsapp", hookCustomer, "wamid.ANS")
	handshake := "/webhooks/meta?" + url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {hookVerify}, "hub.challenge": {"1158201444"}}.Encode()
	for _, c := range []struct {
		name, method, target, body string
		sig                        []string
		broken                     bool
		status                     int
		answer, allow              string
		ctype                      string
	}{
		{name: "handshake", method: "GET", target: handshake, status: 200, answer: "1158201444"},
		{name: "wrong token", method: "GET", target: strings.Replace(handshake, "please", "pleasE", 1), status: 403,
			answer: "webhook verification failed: hub.mode must be subscribe and hub.verify_token must match\n"},
		{name: "put", method: "PUT", target: "/webhooks/meta", status: 405, allow: "GET, POST",
			answer: "method PUT is not allowed on the Meta webhook; allowed: GET, POST\n"},
		{name: "unsigned", method: "POST", target: "/webhooks/meta", body: `{}`, sig: []string{}, status: 401,
			answer: "missing or invalid X-Hub-Signature-256: it must be sha256= and the hex HMAC-SHA256 of the body under the app secret\n"},
		{name: "not JSON", method: "POST", target: "/webhooks/meta", body: `{"object":`, status: 400,
			answer: "body: must be a Meta webhook notification (a JSON object)\n"},
		{name: "too large", method: "POST", target: "/webhooks/meta", body: `{"pad":"` + strings.Repeat("x", 64) + `"}`, status: 413,
			answer: "body: must be at most 64 bytes\n"},
		{name: "applied", method: "POST", target: "/webhooks/meta", body: `{"object":"user"}`, status: 200,
			answer: `{"statuses":0,"messages":0,"templates":0,"accounts":0,"ignored":1}` + "\n", ctype: "application/json; charset=utf-8"},
		{name: "store failure", method: "POST", target: "/webhooks/meta", body: `{"object":"page","entry":[{"messaging":[{"read":{"mid":"m"}}]}]}`,
			broken: true, status: 500, answer: "internal error; retry later\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
			if c.sig == nil {
				r.Header.Set("X-Hub-Signature-256", hookSign(hookSecret, c.body))
			}
			e.store.broken.Store(c.broken)
			defer e.store.broken.Store(false)
			w := httptest.NewRecorder()
			e.rc.ServeHTTP(w, r)
			if w.Code != c.status || w.Body.String() != c.answer || w.Header().Get("Allow") != c.allow {
				t.Errorf("answer = %d %q (Allow %q), want %d %q (Allow %q)", w.Code, w.Body, w.Header().Get("Allow"), c.status, c.answer, c.allow)
			}
			ctype := c.ctype
			if ctype == "" {
				ctype = "text/plain; charset=utf-8"
			}
			if got := w.Header().Get("Content-Type"); got != ctype {
				t.Errorf("Content-Type = %q, want %q", got, ctype)
			}
		})
	}
}

// TestReceiverServeErrors checks the errors Serve returns for the host to
// answer: refusals of verification wrap ErrUnverified, 405 and 413 are
// StatusErrors, and nothing but the Allow header is written.
func TestReceiverServeErrors(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, &metaprovider.ReceiverOptions{VerifyToken: hookVerify, AppSecret: hookSecret, MaxBodyBytes: 8})
	for _, c := range []struct {
		name, method, target, body string
		unverified                 bool
		code                       messaging.Code
		status                     int
	}{
		{"wrong token", "GET", "/webhooks/meta?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1", "", true, messaging.CodeForbidden, 0},
		{"unsigned", "POST", "/webhooks/meta", "{}", true, messaging.CodeUnauthorized, 0},
		{"delete", "DELETE", "/webhooks/meta", "", false, "", 405},
		{"too large", "POST", "/webhooks/meta", "123456789", false, "", 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			err := e.rc.Serve(w, httptest.NewRequest(c.method, c.target, strings.NewReader(c.body)))
			if errors.Is(err, metaprovider.ErrUnverified) != c.unverified {
				t.Errorf("err = %v, want ErrUnverified %v", err, c.unverified)
			}
			var se *metaprovider.StatusError
			if c.status != 0 && (!errors.As(err, &se) || se.Status != c.status) {
				t.Errorf("err = %v, want a StatusError %d", err, c.status)
			}
			if c.code != "" && messaging.ErrorCode(err) != c.code {
				t.Errorf("err = %v, want code %s", err, c.code)
			}
			if w.Body.Len() != 0 || w.Code != 200 || len(w.Header()) > 1 {
				t.Errorf("Serve wrote %d %v %q", w.Code, w.Header(), w.Body)
			}
		})
	}
}

// TestReceiverEmptyAppSecretWarns: NewReceiver warns that every
// notification will be refused.
func TestReceiverEmptyAppSecretWarns(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, &metaprovider.ReceiverOptions{VerifyToken: hookVerify})
	if !strings.Contains(e.log.String(), "AppSecret is empty") {
		t.Errorf("no warning logged:\n%s", e.log)
	}
}

func TestReceiverStatusesInOrder(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	m := e.sent(t, "whatsapp", hookCustomer, "wamid.ORDER")
	var events []string
	unsubscribe := e.svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		events = append(events, ev.Data.(messaging.StatusEventData).PreviousStatus+">"+ev.Data.(messaging.StatusEventData).Status)
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

func TestReceiverStatusesOutOfOrder(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	m := e.sent(t, "whatsapp", hookCustomer, "wamid.OOO")
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

func TestReceiverFailed(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
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
		m := e.sent(t, "whatsapp", hookCustomer, c.pid)
		e.postOK(t, waStatuses(c.status))
		got := e.get(t, m.ID)
		if got.Status != "failed" || got.FailureReason != c.reason {
			t.Errorf("%s: status %s, failure_reason %q; want failed, %q", c.pid, got.Status, got.FailureReason, c.reason)
		}
	}
}

func TestReceiverUnknownItemsAreIgnoredAndLogged(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	m := e.sent(t, "whatsapp", hookCustomer, "wamid.KNOWN")
	a := e.postOK(t, waStatuses(
		waStatus("wamid.KNOWN", "delivered"),
		waStatus("wamid.KNOWN", "deleted"),
		waStatus("wamid.UNKNOWN", "deleted"),
		`{"status":"read"}`,
	))
	if diff := cmp.Diff(hookAnswer{Statuses: 1, Ignored: 3}, a); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if got := e.get(t, m.ID).Status; got != "delivered" {
		t.Errorf("status = %s, want delivered", got)
	}
	if !strings.Contains(e.log.String(), "wamid.UNKNOWN") {
		t.Errorf("the ignored status was not logged:\n%s", e.log)
	}
	if strings.Contains(e.log.String(), hookSecret) {
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

func TestReceiverInboundWhatsApp(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	out := e.sent(t, "whatsapp", hookCustomer, "wamid.OUT")
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
	want := &messaging.Message{WorkspaceID: hookWS, ConversationID: out.ConversationID, Channel: "whatsapp", To: hookCustomer,
		Direction: "inbound", Status: "delivered", Type: "text", Text: "Habari, nimepokea", ProviderMessageID: "wamid.IN1"}
	got := &messaging.Message{WorkspaceID: in.WorkspaceID, ConversationID: in.ConversationID, Channel: in.Channel, To: in.To,
		Direction: in.Direction, Status: in.Status, Type: in.Type, Text: in.Text, ProviderMessageID: in.ProviderMessageID}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inbound message (-want +got):\n%s", diff)
	}

	// A message that cannot be recorded (a sender that is no number, no
	// provider id) is ignored.
	for _, msg := range []string{
		`{"from":"not-a-number","id":"ID","type":"text","text":{"body":"x"}}`,
		`{"from":"FROM","id":"","type":"text","text":{"body":"x"}}`,
	} {
		if a := e.postOK(t, waInbound("254712345678", fmt.Sprintf("wamid.BAD.%d", len(msg)), msg)); a.Messages != 0 || a.Ignored != 1 {
			t.Errorf("%s: answer = %+v, want ignored", msg, a)
		}
	}
}

// TestReceiverInboundTypes records each type of WhatsApp inbound message,
// in the shape of Meta's webhook reference, with its content: media with
// the provider's media id, location, contacts, replies, reactions and the
// quoted message (mapped to our id when it is one of ours); an unknown or
// unsupported type is recorded as unsupported with its raw type.
func TestReceiverInboundTypes(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	out := e.sent(t, "whatsapp", hookCustomer, "wamid.OUT")
	ctxOurs := &messaging.ReplyContext{MessageID: out.ID, ProviderMessageID: "wamid.OUT"}
	for _, c := range []struct {
		name, msg string
		typ, text string
		content   *messaging.InboundContent
	}{
		{"text", `{"from":"FROM","id":"ID","timestamp":"1750263773","text":{"body":"hello"},"type":"text"}`, "text", "hello", nil},
		{"text replying to ours", `{"context":{"from":"15550783881","id":"wamid.OUT"},"from":"FROM","id":"ID","timestamp":"1750263773","text":{"body":"yes"},"type":"text"}`,
			"text", "yes", &messaging.InboundContent{Context: ctxOurs}},
		{"text replying to an unknown message", `{"context":{"from":"15550783881","id":"wamid.ELSEWHERE"},"from":"FROM","id":"ID","text":{"body":"?"},"type":"text"}`,
			"text", "?", &messaging.InboundContent{Context: &messaging.ReplyContext{ProviderMessageID: "wamid.ELSEWHERE"}}},
		{"image", `{"from":"FROM","id":"ID","timestamp":"1750263773","type":"image","image":{"caption":"receipt","mime_type":"image/jpeg","sha256":"IMAGE_HASH","id":"1479537139650973"}}`,
			"image", "", &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "1479537139650973", MimeType: "image/jpeg", SHA256: "IMAGE_HASH", Caption: "receipt"}}},
		{"video", `{"from":"FROM","id":"ID","type":"video","video":{"mime_type":"video/mp4","sha256":"VIDEO_HASH","id":"2001"}}`,
			"video", "", &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "2001", MimeType: "video/mp4", SHA256: "VIDEO_HASH"}}},
		{"voice note", `{"from":"FROM","id":"ID","type":"audio","audio":{"mime_type":"audio/ogg; codecs=opus","sha256":"AUDIO_HASH","id":"2002","voice":true}}`,
			"audio", "", &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "2002", MimeType: "audio/ogg; codecs=opus", SHA256: "AUDIO_HASH"}}},
		{"document", `{"from":"FROM","id":"ID","type":"document","document":{"caption":"invoice","filename":"invoice.pdf","mime_type":"application/pdf","sha256":"DOC_HASH","id":"2003"}}`,
			"document", "", &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "2003", MimeType: "application/pdf", SHA256: "DOC_HASH", Caption: "invoice", Filename: "invoice.pdf"}}},
		{"sticker", `{"from":"FROM","id":"ID","type":"sticker","sticker":{"mime_type":"image/webp","sha256":"STICKER_HASH","id":"2004","animated":true}}`,
			"sticker", "", &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "2004", MimeType: "image/webp", SHA256: "STICKER_HASH", Animated: true}}},
		{"location", `{"from":"FROM","id":"ID","type":"location","location":{"address":"Kenyatta Ave","latitude":-1.2864,"longitude":36.8172,"name":"Office","url":"https://example.com/office"}}`,
			"location", "", &messaging.InboundContent{Location: &record.Location{Latitude: -1.2864, Longitude: 36.8172, Name: "Office", Address: "Kenyatta Ave", URL: "https://example.com/office"}}},
		{"contacts", `{"from":"FROM","id":"ID","type":"contacts","contacts":[{"addresses":[{"city":"Nairobi","country":"Kenya","type":"HOME"}],"birthday":"1990-01-02",
			"emails":[{"email":"wanjiru@example.com","type":"WORK"}],"name":{"formatted_name":"Wanjiru Kamau","first_name":"Wanjiru","last_name":"Kamau"},
			"org":{"company":"Acme","department":"Sales","title":"Lead"},"phones":[{"phone":"+254 700 000001","wa_id":"254700000001","type":"CELL"},{"phone":"+254 20 000002","type":"WORK"}],
			"urls":[{"url":"https://example.com","type":"WORK"}]}]}`,
			"contacts", "", &messaging.InboundContent{Contacts: []record.SharedContact{{FormattedName: "Wanjiru Kamau", FirstName: "Wanjiru", LastName: "Kamau", Organization: "Acme",
				Phones: []record.ContactPhone{{Phone: "+254 700 000001", WaID: "254700000001", Type: "CELL"}, {Phone: "+254 20 000002", Type: "WORK"}},
				Emails: []record.ContactEmail{{Email: "wanjiru@example.com", Type: "WORK"}}}}}},
		{"quick-reply button", `{"context":{"from":"15550783881","id":"wamid.OUT"},"from":"FROM","id":"ID","type":"button","button":{"payload":"STOP","text":"Stop promotions"}}`,
			"button", "Stop promotions", &messaging.InboundContent{Reply: &record.InteractiveReply{Kind: "quick_reply", ID: "STOP", Title: "Stop promotions"}, Context: ctxOurs}},
		{"button reply", `{"context":{"from":"15550783881","id":"wamid.OUT"},"from":"FROM","id":"ID","type":"interactive","interactive":{"type":"button_reply","button_reply":{"id":"b1","title":"Yes"}}}`,
			"interactive", "Yes", &messaging.InboundContent{Reply: &record.InteractiveReply{Kind: "button_reply", ID: "b1", Title: "Yes"}, Context: ctxOurs}},
		{"list reply", `{"from":"FROM","id":"ID","type":"interactive","interactive":{"type":"list_reply","list_reply":{"id":"l2","title":"Option 2","description":"The second"}}}`,
			"interactive", "Option 2", &messaging.InboundContent{Reply: &record.InteractiveReply{Kind: "list_reply", ID: "l2", Title: "Option 2", Description: "The second"}}},
		{"reaction", `{"from":"FROM","id":"ID","type":"reaction","reaction":{"message_id":"wamid.OUT","emoji":"\ud83d\udc4d"}}`,
			"reaction", "", &messaging.InboundContent{Reaction: &record.Reaction{MessageID: out.ID, ProviderMessageID: "wamid.OUT", Emoji: "👍"}}},
		{"reaction removed", `{"from":"FROM","id":"ID","type":"reaction","reaction":{"message_id":"wamid.OUT"}}`,
			"reaction", "", &messaging.InboundContent{Reaction: &record.Reaction{MessageID: out.ID, ProviderMessageID: "wamid.OUT"}}},
		{"unsupported", `{"from":"FROM","id":"ID","type":"unsupported","errors":[{"code":131051,"details":"Message type is not currently supported","title":"Unsupported message type"}]}`,
			"unsupported", "", &messaging.InboundContent{RawType: "unsupported"}},
		{"unsupported with its kind", `{"from":"FROM","id":"ID","type":"unsupported","unsupported":{"type":"poll_creation"},"errors":[{"code":131051,"title":"Message type unknown"}]}`,
			"unsupported", "", &messaging.InboundContent{RawType: "poll_creation"}},
		{"unknown type", `{"from":"FROM","id":"ID","type":"order","order":{"catalog_id":"1","product_items":[]}}`,
			"unsupported", "", &messaging.InboundContent{RawType: "order"}},
		{"flow reply", `{"from":"FROM","id":"ID","type":"interactive","interactive":{"type":"nfm_reply","nfm_reply":{"name":"flow","response_json":"{}"}}}`,
			"unsupported", "", &messaging.InboundContent{RawType: "interactive.nfm_reply"}},
		{"image without its member", `{"from":"FROM","id":"ID","type":"image"}`,
			"unsupported", "", &messaging.InboundContent{RawType: "image"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "wamid.IN." + strings.ReplaceAll(c.name, " ", "_")
			for range 2 { // Meta delivers at least once: recorded once
				if a := e.postOK(t, waInbound("254712345678", id, c.msg)); a.Messages != 1 || a.Ignored != 0 {
					t.Fatalf("answer = %+v, want 1 message", a)
				}
			}
			got, err := e.store.MessageGetByProviderID(t.Context(), id)
			if err != nil {
				t.Fatalf("not recorded: %v", err)
			}
			if got.Type != c.typ || got.Text != c.text || got.ConversationID != out.ConversationID || got.Direction != "inbound" {
				t.Errorf("recorded %s %s %q in %s; want inbound %s %q in %s", got.Direction, got.Type, got.Text, got.ConversationID, c.typ, c.text, out.ConversationID)
			}
			if d := cmp.Diff(c.content, got.Content); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
		})
	}
}

func TestReceiverInboundUnknownAccount(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, &metaprovider.ReceiverOptions{VerifyToken: hookVerify, AppSecret: hookSecret, Accounts: map[string]string{"999": "ws_other"}})
	before := e.store.created.Load()
	a := e.postOK(t, waInbound("254712345678", "wamid.LOST", `{"from":"FROM","id":"ID","type":"text","text":{"body":"hi"}}`))
	if a.Messages != 0 || a.Ignored != 1 {
		t.Errorf("answer = %+v, want the message ignored", a)
	}
	if e.store.created.Load() != before {
		t.Error("a message was recorded for an unknown account")
	}
	if !strings.Contains(e.log.String(), hookPNID) {
		t.Errorf("the unknown account was not logged:\n%s", e.log)
	}
}

func TestReceiverMessengerAndInstagram(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	fb := e.sent(t, "messenger", "6543210987654321", "m_OUT1")
	ig := e.sent(t, "instagram", "17841400000000001", "aWdf_OUT1")
	a := e.postOK(t, `{"object":"page","entry":[{"id":"PAGE_1","time":1750263773000,"messaging":[
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"timestamp":1750263773000,"message":{"mid":"m_IN1","text":"Hi page"}},
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"timestamp":1750263773000,"message":{"mid":"m_IN2","attachments":[{"type":"file","payload":{"url":"https://cdn.example.com/f.pdf"}}]}},
		{"sender":{"id":"PAGE_1"},"recipient":{"id":"6543210987654321"},"timestamp":1750263773000,"message":{"mid":"m_OUT1","is_echo":true,"text":"hello"}},
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"delivery":{"mids":["m_OUT1"],"watermark":1750263773000}},
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"read":{"watermark":1750263773000}}
	]}]}`)
	if diff := cmp.Diff(hookAnswer{Statuses: 1, Messages: 2, Ignored: 2}, a); diff != "" {
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
	if diff := cmp.Diff(hookAnswer{Statuses: 1, Messages: 1}, a); diff != "" {
		t.Errorf("instagram answer (-want +got):\n%s", diff)
	}
	if got := e.get(t, ig.ID).Status; got != "read" {
		t.Errorf("instagram status = %s, want read", got)
	}
	in, err = e.store.MessageGetByProviderID(t.Context(), "aWdf_IN1")
	if err != nil || in.Text != "Hi IG" || in.ConversationID != ig.ConversationID || in.WorkspaceID != hookWS {
		t.Errorf("instagram inbound = %+v, %v", in, err)
	}
}

// TestReceiverStatusBeforeTheProviderIDIsKept: Meta reports delivered and
// read before the dispatcher has recorded the message's wamid. The
// receiver answers 200 and the reports are applied when the wamid is
// recorded.
func TestReceiverStatusBeforeTheProviderIDIsKept(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	id := e.queued(t)
	var events []string
	unsubscribe := e.svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		events = append(events, ev.Data.(messaging.StatusEventData).PreviousStatus+">"+ev.Data.(messaging.StatusEventData).Status)
	})
	defer unsubscribe()
	a := e.postOK(t, waStatuses(waStatus("wamid.EARLY", "delivered")))
	a2 := e.postOK(t, waStatuses(waStatus("wamid.EARLY", "read")))
	if diff := cmp.Diff([]hookAnswer{{Statuses: 1}, {Statuses: 1}}, []hookAnswer{a, a2}); diff != "" {
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

// TestReceiverStatusThatCannotBeKeptAsksForRetry: when the report of a
// wamid not recorded yet cannot be kept, the receiver answers 500 so that
// Meta delivers it again.
func TestReceiverStatusThatCannotBeKeptAsksForRetry(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	id := e.queued(t)
	body := waStatuses(waStatus("wamid.LATE", "delivered"))
	e.store.saveBroken.Store(true)
	w := e.post(t, body)
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

// FuzzReceiverNotification checks that no signed body, however malformed,
// makes the receiver fail: it answers 200 or 400, never 500 or a panic.
func FuzzReceiverNotification(f *testing.F) {
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
	e := hookSetup(f, nil)
	e.sent(f, "whatsapp", hookCustomer, "wamid.X")
	f.Fuzz(func(t *testing.T, body string) {
		w := e.post(t, body)
		if w.Code != 200 && w.Code != 400 && w.Code != 413 {
			t.Fatalf("status %d (%s) for %q", w.Code, w.Body, body)
		}
	})
}

// TestReceiverMessengerUnsupported: a Messenger or Instagram message with
// neither text nor a media attachment (a location, a sticker's fallback,
// nothing at all) is recorded as unsupported with the attachment's type,
// never dropped.
func TestReceiverMessengerUnsupported(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	e.sent(t, "messenger", "6543210987654321", "m_OUT9")
	a := e.postOK(t, `{"object":"page","entry":[{"id":"PAGE_1","time":1750263773000,"messaging":[
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"timestamp":1750263773000,"message":{"mid":"m_LOC","attachments":[{"type":"location","payload":{"coordinates":{"lat":-1.28,"long":36.82}}}]}},
		{"sender":{"id":"6543210987654321"},"recipient":{"id":"PAGE_1"},"timestamp":1750263773000,"message":{"mid":"m_EMPTY"}}
	]}]}`)
	if a.Messages != 2 || a.Ignored != 0 {
		t.Fatalf("answer = %+v, want 2 messages", a)
	}
	for mid, raw := range map[string]string{"m_LOC": "location", "m_EMPTY": "message"} {
		m, err := e.store.MessageGetByProviderID(t.Context(), mid)
		if err != nil || m.Type != "unsupported" || m.Content == nil || m.Content.RawType != raw {
			t.Errorf("%s = %+v, %v; want unsupported %s", mid, m, err, raw)
		}
	}
}
