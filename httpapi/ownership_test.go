package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestSquatterCannotReadAnotherBusinessMessages is the squatting attack
// end to end through the REST surface and the Meta receiver, with the fake
// provider and with metaprovider against a Graph API on loopback: a
// workspace that names another business's phone-number id and WABA with a
// token of its own is refused and stored nothing; the owner connects; the
// customer's inbound message, signed by Meta for that number, reaches the
// owner and never the squatter.
func TestSquatterCannotReadAnotherBusinessMessages(t *testing.T) {
	t.Parallel()
	const (
		pnid     = "106540352242922"
		waba     = "102290129340398"
		ownerTok = "EAAGowner-token-1234"
	)
	for _, c := range []struct {
		name      string
		provider  func(t *testing.T) messaging.Provider
		wantField string
	}{
		{"fakeprovider", func(*testing.T) messaging.Provider {
			return fakeprovider.NewWithOptions(&fakeprovider.Options{Accounts: map[string]string{pnid: ownerTok}})
		}, "phone_number_id"},
		{"metaprovider", func(t *testing.T) messaging.Provider {
			graph := metatest.New()
			t.Cleanup(graph.Close)
			graph.AddPhoneNumber(waba, pnid, "+254 700 100200", ownerTok)
			p, err := metaprovider.New(&metaprovider.Options{BaseURL: graph.URL(), HTTPClient: graph.Client(), Webhook: ownershipHook})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, "waba_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := ownershipSetup(t, c.provider(t), "owner", "squatter")
			call := e.call
			put := func(ws, tok string) (int, map[string]any) {
				return call("PUT", "/v1/channels/whatsapp", ws, fmt.Sprintf(`{"phone_number_id":%q,"waba_id":%q,"access_token":%q}`, pnid, waba, tok))
			}

			code, body := put("squatter", "EAAGanything-5678")
			errObj, _ := body["error"].(map[string]any)
			if code != http.StatusBadRequest || errObj["code"] != "validation_error" || errObj["field"] != c.wantField {
				t.Fatalf("squatter's PUT = %d %v; want 400 validation_error naming %s", code, body, c.wantField)
			}
			if _, body := call("GET", "/v1/channels", "squatter", ""); strings.Contains(fmt.Sprint(body), pnid) {
				t.Errorf("the squatter's channels show the refused account: %v", body)
			}
			if code, body := put("owner", ownerTok); code != http.StatusOK || body["status"] != "connected" {
				t.Fatalf("owner's PUT = %d %v; want 200 connected", code, body)
			}
			if code, _ := put("squatter", "EAAGanything-5678"); code/100 != 4 {
				t.Errorf("squatter's PUT after the owner's = %d, want a 4xx", code)
			}

			inbound := fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"value":{
				"messaging_product":"whatsapp","metadata":{"display_phone_number":"254700100200","phone_number_id":%q},
				"contacts":[{"profile":{"name":"Amina"},"wa_id":"254712345678"}],
				"messages":[{"from":"254712345678","id":"wamid.SECRET1","timestamp":"1772355600","type":"text","text":{"body":"my account number is 4411"}}]},
				"field":"messages"}]}]}`, waba, pnid)
			if w := e.metaPost(inbound); w.Code != http.StatusOK {
				t.Fatalf("Meta's notification = %d %s", w.Code, w.Body)
			}
			for ws, want := range map[string]int{"owner": 1, "squatter": 0} {
				_, body := call("GET", "/v1/messages?direction=inbound", ws, "")
				data, _ := body["data"].([]any)
				if len(data) != want {
					t.Errorf("%s's inbound messages = %v; want %d", ws, body, want)
				}
			}
		})
	}
}

// TestInboundForAPendingClaimIsRetried: Meta's notification for an account
// whose only claim waits for the provider's verdict is neither applied nor
// dropped: the receiver answers an error, so that Meta delivers it again.
func TestInboundForAPendingClaimIsRetried(t *testing.T) {
	t.Parallel()
	e := ownershipSetup(t, fakeprovider.New(), "owner")
	c, err := e.svc.Workspace("owner").Channels.Connect(t.Context(), "whatsapp", &messaging.ChannelCredentials{
		Fields: map[string]string{"phone_number_id": "106540352242922", "waba_id": "102290129340398"}, AccessToken: fakeprovider.UnreachableTokenPrefix + "token-1234"})
	if err != nil || c.Status != record.ConnectionPending {
		t.Fatalf("connect while the provider is down: %+v, %v; want pending_verification", c, err)
	}
	inbound := `{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"254700100200","phone_number_id":"106540352242922"},
		"messages":[{"from":"254712345678","id":"wamid.WAIT1","timestamp":"1772355600","type":"text","text":{"body":"hello"}}]},
		"field":"messages"}]}]}`
	w := e.metaPost(inbound)
	if w.Code/100 != 5 {
		t.Errorf("Meta's notification for a pending claim = %d %s; want a 5xx so that Meta retries", w.Code, w.Body)
	}
}

// verdictProvider is the fake provider whose verification answers verdict.
type verdictProvider struct {
	*fakeprovider.Provider
	verdict func() error
}

func (p *verdictProvider) VerifyConnection(context.Context, *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	if err := p.verdict(); err != nil {
		return nil, err
	}
	return &messaging.VerifiedAccount{}, nil
}

// TestVerifyChannelRoute: POST /v1/channels/{channel}/verify asks the
// provider now: 503 while it cannot tell (nothing changes), then the
// channel connected once it proves the credentials, and error with the
// provider's reason once it refuses them.
func TestVerifyChannelRoute(t *testing.T) {
	t.Parallel()
	var verdict error = &messaging.SendError{Code: "unreachable", Text: "down", Retryable: true}
	prov := &verdictProvider{Provider: fakeprovider.New(), verdict: func() error { return verdict }}
	e := ownershipSetup(t, prov, "owner")
	call := func(method, path, body string) (int, map[string]any) { return e.call(method, path, "owner", body) }
	if code, body := call("PUT", "/v1/channels/messenger", `{"page_id":"5550001","access_token":"EAAGpage-token-1"}`); code != 200 || body["status"] != "pending_verification" {
		t.Fatalf("PUT while the provider is down = %d %v; want 200 pending_verification", code, body)
	}
	if code, body := call("POST", "/v1/channels/messenger/verify", ""); code != 503 {
		t.Errorf("verify while the provider is down = %d %v; want 503", code, body)
	}
	verdict = nil
	if code, body := call("POST", "/v1/channels/messenger/verify", ""); code != 200 || body["status"] != "connected" || body["error"] != nil {
		t.Errorf("verify once the provider answers = %d %v; want 200 connected", code, body)
	}
	verdict = &messaging.SendError{Code: "190", Text: "Error validating access token", Credentials: true}
	if code, body := call("POST", "/v1/channels/messenger/verify", "{}"); code != 200 || body["status"] != "error" || body["error"] != "[190] Error validating access token" {
		t.Errorf("verify of a revoked token = %d %v; want 200 error with the provider's reason", code, body)
	}
	if code, _ := call("POST", "/v1/channels/whatsapp/verify", ""); code != 404 {
		t.Errorf("verify of a channel without credentials = %d, want 404", code)
	}
}

// ownershipEnv is a service on memstore over a provider, with the Meta
// receiver mounted and an all-scope key for each of its workspaces.
type ownershipEnv struct {
	t    *testing.T
	svc  *messaging.Service
	h    http.Handler
	keys map[string]string
}

// ownershipHook is the receiver of Meta's webhooks of the ownership
// tests.
var ownershipHook = &metaprovider.WebhookOptions{VerifyToken: metaVerify, AppSecret: metaSecret}

// ownershipSetup serves a service over prov (given the Meta receiver of
// ownershipHook unless it is a metaprovider, which is built with it).
func ownershipSetup(t *testing.T, prov messaging.Provider, workspaces ...string) *ownershipEnv {
	t.Helper()
	if f, ok := prov.(fakeLike); ok {
		if _, meta := prov.(*metaprovider.Provider); !meta {
			prov = metaHooked(t, f, ownershipHook)
		}
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	svc, err := messaging.New(memstore.New(), prov, &messaging.Options{Clock: func() time.Time { return now },
		SecretKey: bytes.Repeat([]byte{3}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	e := &ownershipEnv{t: t, svc: svc, keys: map[string]string{}}
	for _, ws := range workspaces {
		if _, err := svc.CreateWorkspace(t.Context(), &messaging.CreateWorkspaceParams{ID: ws, Name: ws}); err != nil {
			t.Fatal(err)
		}
		_, plain, err := svc.Workspace(ws).APIKeys.Create(t.Context(), &messaging.KeyCreateParams{Scopes: record.AllScopes()})
		if err != nil {
			t.Fatal(err)
		}
		e.keys[ws] = plain
	}
	e.h = httpapi.New(svc, &httpapi.Options{Clock: func() time.Time { return now }})
	return e
}

// call makes a request with ws's key and decodes the JSON answer.
func (e *ownershipEnv) call(method, path, ws, body string) (int, map[string]any) {
	e.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("X-API-Key", e.keys[ws])
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

// metaPost posts Meta's notification body, signed with the app secret.
func (e *ownershipEnv) metaPost(body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/webhooks/meta", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Hub-Signature-256", metaSign(metaSecret, body))
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}
