package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// pigeonProvider serves a channel that neither the library nor httpapi
// knows, "pigeon", entirely from this file: it declares the channel (its
// accounts are lofts, "loft-" and digits, named loft_id), verifies the
// credentials whose token starts with "coo", records every send with the
// sender it was handed, and receives the pigeons that come back at its
// own receiver, POST /webhooks/pigeon {"loft", "from", "id", "text"}.
type pigeonProvider struct {
	mu    sync.Mutex
	sends []pigeonSend
}

// pigeonSend is a send the pigeon provider was handed.
type pigeonSend struct {
	Sender messaging.ChannelSender
	To     string
	Text   string
}

var (
	_ messaging.ChannelProvider    = (*pigeonProvider)(nil)
	_ messaging.ConnectionVerifier = (*pigeonProvider)(nil)
	_ messaging.CallbackReceiver   = (*pigeonProvider)(nil)
)

func (p *pigeonProvider) Channels() []messaging.ChannelSpec {
	return []messaging.ChannelSpec{{
		Name: "pigeon", Label: "Carrier pigeon", MaxText: 140,
		Account: messaging.ChannelField{Name: "loft_id", Label: "Loft", Hint: "loft- and digits.", Check: func(v string) error {
			if rest, ok := strings.CutPrefix(v, "loft-"); !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
				return errors.New("must be loft- and digits")
			}
			return nil
		}},
	}}
}

func (p *pigeonProvider) VerifyConnection(_ context.Context, s *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	if !strings.HasPrefix(s.AccessToken, "coo") {
		return nil, &messaging.VerificationError{Field: "access_token", Code: "hawk", Text: "the loft does not know this token"}
	}
	return &messaging.VerifiedAccount{}, nil
}

func (p *pigeonProvider) Send(_ context.Context, s *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	if s == nil {
		return nil, &messaging.SendError{Code: "no_loft", Text: "no loft to fly from"}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sends = append(p.sends, pigeonSend{Sender: *s, To: m.To, Text: m.Text})
	return &messaging.SendReceipt{ProviderMessageID: fmt.Sprintf("pigeon-%d", len(p.sends))}, nil
}

func (p *pigeonProvider) sent() []pigeonSend {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pigeonSend(nil), p.sends...)
}

// Receiver records a pigeon that came back to a loft in the loft's
// workspace.
func (p *pigeonProvider) Receiver(svc *messaging.Service, _ *messaging.ReceiverHost) *messaging.Receiver {
	return &messaging.Receiver{Name: "pigeon receiver", Path: "/webhooks/pigeon", Serve: func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			return &messaging.ReceiverError{Status: http.StatusMethodNotAllowed, Message: "pigeons land with POST"}
		}
		var b struct{ Loft, From, ID, Text string }
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			return &messaging.Error{Code: messaging.CodeValidation, Field: "body", Message: "body: must be a pigeon"}
		}
		ws, err := svc.WorkspaceForAccount(r.Context(), "pigeon", b.Loft)
		if err != nil {
			return err
		}
		if _, err := svc.RecordInbound(r.Context(), &messaging.InboundMessage{WorkspaceID: ws, Channel: "pigeon", From: b.From,
			ProviderMessageID: b.ID, Text: b.Text}); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}}
}

// TestRegisteredChannel: a channel registered by a provider the library
// and httpapi know nothing of (pigeonProvider, beside the fake provider in
// a ProviderMux) is connected, sent on and received through the REST
// surface, under the rules its spec declares: its field names, its
// account rule, its text limit; the provider's Send is handed the
// connection as the sender, and its receiver is mounted.
func TestRegisteredChannel(t *testing.T) {
	t.Parallel()
	pigeon := &pigeonProvider{}
	mux, err := messaging.NewProviderMux(fakeprovider.New(), pigeon)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	svc, err := messaging.New(memstore.New(), mux, &messaging.Options{Clock: func() time.Time { return now }, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"whatsapp", "instagram", "messenger", "pigeon"}, svc.Channels()); d != "" {
		t.Errorf("channels (-want +got):\n%s", d)
	}
	ctx := t.Context()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "coop", Name: "Coop"}); err != nil {
		t.Fatal(err)
	}
	_, key, err := svc.Workspace("coop").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(svc, &httpapi.Options{Clock: func() time.Time { return now }, DisableRateLimits: true})
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("X-API-Key", key)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	wantError := func(method, path, body string, status int, code, message string) {
		t.Helper()
		got, out := call(method, path, body)
		e, _ := out["error"].(map[string]any)
		if got != status || e["code"] != code || e["message"] != message {
			t.Errorf("%s %s %s = %d %v; want %d %s %q", method, path, body, got, out, status, code, message)
		}
	}

	// Connecting: the spec's field names and rule; the verifier's verdict.
	wantError("PUT", "/v1/channels/pigeon", `{"phone_number_id":"1","loft_id":"loft-7","access_token":"coo-secret-token"}`,
		400, "validation_error", "phone_number_id: is only for whatsapp; pigeon takes loft_id")
	wantError("PUT", "/v1/channels/pigeon", `{"loft_id":"roof","access_token":"coo-secret-token"}`, 400, "validation_error", "loft_id: must be loft- and digits")
	wantError("PUT", "/v1/channels/pigeon", `{"loft_id":"loft-7","access_token":"hawk-token-1"}`, 400, "validation_error",
		"access_token: the channel provider refused the credentials: [hawk] the loft does not know this token")
	code, body := call("PUT", "/v1/channels/pigeon", `{"loft_id":"loft-7","access_token":"coo-secret-token"}`)
	if code != 200 || body["channel"] != "pigeon" || body["status"] != "connected" || body["sender_id"] != "loft-7" || body["credential_hint"] != "oken" {
		t.Fatalf("PUT /v1/channels/pigeon = %d %v; want 200, connected from loft-7", code, body)
	}

	// Sending: the spec's text limit; the provider is handed the
	// connection.
	wantError("POST", "/v1/messages", `{"channel":"pigeon","to":"bird_1","type":"text","text":"`+strings.Repeat("c", 141)+`"}`,
		400, "validation_error", "text: must be at most 140 characters (got 141)")
	code, body = call("POST", "/v1/messages", `{"channel":"pigeon","to":"bird_1","type":"text","text":"Coo!"}`)
	if code != 201 {
		t.Fatalf("POST /v1/messages on pigeon = %d %v", code, body)
	}
	id, _ := body["message_id"].(string)
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	want := []pigeonSend{{Sender: messaging.ChannelSender{WorkspaceID: "coop", Channel: "pigeon", AccountID: "loft-7", AccessToken: "coo-secret-token", Generation: 1},
		To: "bird_1", Text: "Coo!"}}
	if d := cmp.Diff(want, pigeon.sent()); d != "" {
		t.Errorf("the pigeon provider's sends (-want +got):\n%s", d)
	}
	if code, body := call("GET", "/v1/messages/"+id, ""); code != 200 || body["status"] != "sent" {
		t.Errorf("GET the pigeon message = %d %v; want sent", code, body)
	}

	// Receiving: the provider's receiver, mounted by httpapi, records
	// what comes back, and the message list shows it.
	land := func(method, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, "/webhooks/pigeon", strings.NewReader(body)))
		return w
	}
	if w := land("POST", `{"loft":"loft-7","from":"bird_1","id":"p-in-1","text":"Coo back"}`); w.Code != http.StatusNoContent {
		t.Fatalf("POST /webhooks/pigeon = %d %s", w.Code, w.Body)
	}
	if w := land("GET", ""); w.Code != http.StatusMethodNotAllowed || !strings.Contains(w.Body.String(), `"code":"method_not_allowed"`) || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET /webhooks/pigeon = %d %s (Allow %q); want 405 method_not_allowed in the envelope", w.Code, w.Body, w.Header().Get("Allow"))
	}
	code, body = call("GET", "/v1/messages?direction=inbound&channel=pigeon", "")
	list, _ := body["data"].([]any)
	if code != 200 || len(list) != 1 {
		t.Fatalf("GET inbound pigeon messages = %d %v; want one", code, body)
	}
	got, _ := list[0].(map[string]any)
	if got["channel"] != "pigeon" || got["from"] != "bird_1" || got["text"] != "Coo back" || got["direction"] != "inbound" {
		t.Errorf("inbound message = %v; want Coo back from bird_1 on pigeon", got)
	}
}
