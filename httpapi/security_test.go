package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// TestIsolationEveryIDRoute derives the routes from Routes(): on every
// route with an {id}, on memstore and on SQLite, a key of workspace B on
// A's record (and A's key on B's) answers 404 not_found and changes
// nothing, while the owner's key reaches it. A new {id} route without a
// fixture record fails here.
func TestIsolationEveryIDRoute(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) driver.Store{
		"memstore":    func(t *testing.T) driver.Store { return memstore.New() },
		"sqlitestore": func(t *testing.T) driver.Store { return openSQLite(t) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setupOn(t, open(t), nil)
			routes := 0
			for _, rt := range httpapi.Routes() {
				if rt.Scopes == nil || !strings.Contains(rt.Pattern, "{id}") {
					continue
				}
				routes++
				for _, pair := range []struct{ owner, other *wsFixture }{{e.A, e.B}, {e.B, e.A}} {
					rq, ok := validRequest(t, rt, pair.owner, routes)
					if strings.HasSuffix(rq.path, "/") || strings.Contains(rq.path, "{") {
						t.Fatalf("%s: no fixture record for its {id}: add one to routePath", rt.Name())
					}
					contact, _ := e.svc.Workspace(pair.owner.ID).Contacts.Get(context.Background(), pair.owner.Contact.ID)
					rq.key = pair.other.Full
					r := e.do(t, rq)
					expect(t, r, 404, "not_found", "")
					for _, leak := range []string{pair.owner.ID, pair.owner.Contact.Email, pair.owner.Contact.Phone} {
						if strings.Contains(string(r.body), leak) {
							t.Errorf("%s: the 404 shows %q: %s", rt.Name(), leak, r.body)
						}
					}
					after, _ := e.svc.Workspace(pair.owner.ID).Contacts.Get(context.Background(), pair.owner.Contact.ID)
					if after.Version != contact.Version {
						t.Errorf("%s with %s's key changed %s's contact", rt.Name(), pair.other.ID, pair.owner.ID)
					}
					rq.key = pair.owner.Full
					expect(t, e.do(t, rq), ok, "", "")
				}
			}
			if routes < 4 {
				t.Errorf("only %d {id} routes found", routes)
			}
		})
	}
}

// hookCounter is a webhook endpoint that counts what it receives.
type hookCounter struct{ n atomic.Int64 }

func (h *hookCounter) ServeHTTP(http.ResponseWriter, *http.Request) { h.n.Add(1) }

func (h *hookCounter) count() int { return int(h.n.Load()) }

// dbBytes reads the SQLite database file and its -wal and -shm files.
func dbBytes(t *testing.T, path string) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// TestSecretsNeverStoredOrLogged runs a full session on SQLite (every
// route, the SMS API, Meta's webhook, dispatch, webhook deliveries, and
// near-miss guesses of every credential) with every logger at debug level,
// then searches the database files (with -wal and -shm, before and after
// the checkpoint of Close) and the logs for every API key, SMS apikey,
// webhook signing secret (as text, base64, hex and raw bytes), Meta app
// secret and verify token, channel access token, and every guess. None may appear, nor the first
// or last 16 characters of a key (keys are stored under a hash).
func TestSecretsNeverStoredOrLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "secrets.db")
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var sealKey [32]byte
	_, _ = rand.Read(sealKey[:])
	const appSecret, verifyToken = "meta-app-secret-5f0c2a9e7d", "meta-verify-token-81be"
	prov := metaHooked(t, fakeprovider.New(), &metaprovider.WebhookOptions{AppSecret: appSecret, VerifyToken: verifyToken,
		Accounts: map[string]string{"106540352242922": "ws_a"}})
	e := setupWith(t, st, prov, &messaging.Options{Logger: log, SecretKey: sealKey[:],
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: messaging.WebhookOptions{AllowLoopback: true}})
	smsSvc, err := sms.New(st, fakegateway.New(nil), &sms.Options{Clock: e.clock.Now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	const smsText = "Your one-time code is 918273"
	if _, _, err := smsSvc.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: smsPartner, APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(100)}); err != nil {
		t.Fatal(err)
	}
	const operatorToken = "op_secret_token_5b1e0c9d7a3f2e64"
	o := &httpapi.Options{Clock: e.clock.Now, SMS: smsSvc, Logger: log, OperatorToken: operatorToken}
	unlimited(o)
	e.h = httpapi.New(e.svc, o)

	explicit := "acme_live_0123456789abcdef0123456789abcdef"
	if _, _, err := e.svc.Workspace(e.A.ID).APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes(), Key: explicit}); err != nil {
		t.Fatal(err)
	}
	rcv := &hookCounter{}
	hook := httptest.NewServer(rcv)
	t.Cleanup(hook.Close)
	rawSecret := make([]byte, 32)
	_, _ = rand.Read(rawSecret)
	hookSecret := "whsec_" + base64.StdEncoding.EncodeToString(rawSecret)
	if _, _, err := e.svc.Workspace(e.A.ID).Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: hook.URL + "/hook", Secret: hookSecret}); err != nil {
		t.Fatal(err)
	}

	// The session.
	var keys []string
	for _, f := range []*wsFixture{e.A, e.B} {
		keys = append(keys, f.Full, f.Revoked, f.Expired)
		for _, s := range record.AllScopes() {
			keys = append(keys, f.Only[s], f.Without[s])
		}
	}
	keys = append(keys, explicit)
	for i, rt := range httpapi.Routes() {
		for j, key := range []string{e.A.Full, explicit} {
			rq, want := validRequest(t, rt, e.A, 100+2*i+j)
			rq.key = key
			if r := e.doRaw(rq); r.status != want {
				t.Fatalf("%s: %d %s", rt.Name(), r.status, r.body)
			}
		}
	}
	guesses := []string{e.A.Full[:len(e.A.Full)-1] + "x", explicit + "0", explicit[:30], smsKey[:len(smsKey)-1] + "X"}
	for _, g := range guesses[:3] {
		if r := e.doRaw(request{method: "GET", path: "/v1/contacts", key: g}); r.status != 401 {
			t.Fatalf("guess %q: %d", g, r.status)
		}
	}
	e.doRaw(request{method: "GET", path: "/v1/contacts", headers: hdr("Authorization", "Bearer "+e.B.Full)})
	e.doRaw(request{method: "GET", path: "/v1/contacts", key: e.A.Revoked})
	for _, b := range []string{
		`{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345678","message":"` + smsText + `","shortcode":"ACME"}`,
		`{"apikey":"` + guesses[3] + `","partnerID":"1234","mobile":"254712345678","message":"` + smsText + `","shortcode":"ACME"}`,
		`{"apikey":"` + smsKey + `","partnerID":"9999","mobile":"254712345678","message":"` + smsText + `","shortcode":"ACME"}`,
	} {
		e.doRaw(request{method: "POST", path: "/sms/v1/messages", body: b})
	}
	e.doRaw(request{method: "POST", path: "/sms/v1/messages/bulk", body: `{"count":1,"smslist":[{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345678","message":"` + smsText + `","shortcode":"ACME"}]}`})
	e.doRaw(request{method: "POST", path: "/sms/v1/account/balance", body: `{"apikey":"` + smsKey + `","partnerID":"1234"}`})
	e.doRaw(request{method: "POST", path: "/sms/v1/messages/delivery-report", body: `{"apikey":"` + guesses[3] + `","partnerID":"1234","messageID":"1"}`})
	// The operator routes: a first key, an SMS account with a generated
	// apikey and one with a given apikey, and wrong tokens.
	opHdr := hdr("Authorization", "Bearer "+operatorToken)
	secretOf := func(r *response, member string) string {
		t.Helper()
		var v map[string]any
		if err := json.Unmarshal(r.body, &v); err != nil || r.status != 201 {
			t.Fatalf("operator route: %d %s", r.status, r.body)
		}
		s, _ := v[member].(string)
		return s
	}
	opKey := secretOf(e.doRaw(request{method: "POST", path: "/admin/v1/workspaces/" + e.B.ID + "/api-keys", headers: opHdr, body: `{"scopes":["manage:keys"]}`}), "key")
	keys = append(keys, opKey)
	genSMSKey := secretOf(e.doRaw(request{method: "POST", path: "/admin/v1/sms/accounts", headers: opHdr, body: `{"partnerID":"op-gen","shortcodes":["ACME"],"credit":5}`}), "apikey")
	givenSMSKey := "given_sms_apikey_3c9e51d07f2b8a64"
	secretOf(e.doRaw(request{method: "POST", path: "/admin/v1/sms/accounts", headers: opHdr, body: `{"partnerID":"op-given","apikey":"` + givenSMSKey + `"}`}), "partnerID")
	e.doRaw(request{method: "POST", path: "/admin/v1/sms/accounts/op-gen/top-ups", headers: opHdr, body: `{"amount":1,"reference":"inv-7"}`})
	e.doRaw(request{method: "GET", path: "/admin/v1/sms/accounts/op-gen/ledger", headers: opHdr})
	for _, tok := range []string{operatorToken + "x", operatorToken[:20]} {
		if r := e.doRaw(request{method: "GET", path: "/admin/v1/workspaces", headers: hdr("Authorization", "Bearer "+tok)}); r.status != 401 {
			t.Fatalf("a wrong operator token: %d", r.status)
		}
	}
	if _, err := smsSvc.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{verifyToken, verifyToken + "x"} {
		e.doRaw(request{method: "GET", path: "/webhooks/meta?hub.mode=subscribe&hub.challenge=42&hub.verify_token=" + tok})
	}
	body := `{"object":"whatsapp_business_account","entry":[]}`
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write([]byte(body))
	goodSig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	for _, sig := range []string{goodSig, goodSig[:len(goodSig)-1] + "0"} {
		e.doRaw(request{method: "POST", path: "/webhooks/meta", body: body, headers: hdr("X-Hub-Signature-256", sig)})
	}
	// Webhook secrets made by the API: at creation and by a rotation.
	var apiHookSecrets []string
	created := e.doRaw(request{method: "POST", path: "/v1/webhooks", key: e.A.Full, body: `{"url":"` + hook.URL + `/api"}`})
	var hk struct{ ID, Secret string }
	if err := json.Unmarshal(created.body, &hk); err != nil || created.status != 201 || hk.Secret == "" {
		t.Fatalf("create webhook: %d %s", created.status, created.body)
	}
	rotated := e.doRaw(request{method: "POST", path: "/v1/webhooks/" + hk.ID + "/rotate-secret", key: e.A.Full})
	var rk struct{ Secret string }
	if err := json.Unmarshal(rotated.body, &rk); err != nil || rotated.status != 200 || rk.Secret == "" {
		t.Fatalf("rotate webhook secret: %d %s", rotated.status, rotated.body)
	}
	apiHookSecrets = append(apiHookSecrets, hk.Secret, rk.Secret)
	if _, err := e.svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.DeliverWebhooksDue(ctx); err != nil || n == 0 || rcv.count() == 0 {
		t.Fatalf("webhooks: %d attempted, %d received, %v", n, rcv.count(), err)
	}

	// What must never be found.
	type secret struct {
		what string
		b    []byte
	}
	var secrets []secret
	for _, k := range keys {
		secrets = append(secrets, secret{"an API key", []byte(k)}, secret{"an API key's head", []byte(k[:16])}, secret{"an API key's tail", []byte(k[len(k)-16:])})
	}
	for _, g := range guesses {
		secrets = append(secrets, secret{"a guessed key", []byte(g)})
	}
	secrets = append(secrets,
		secret{"the SMS apikey", []byte(smsKey)}, secret{"the SMS apikey's head", []byte(smsKey[:16])}, secret{"the SMS apikey's tail", []byte(smsKey[len(smsKey)-16:])},
		secret{"the webhook secret", []byte(hookSecret)}, secret{"the webhook secret's base64", []byte(hookSecret[len("whsec_"):])},
		secret{"the webhook secret's bytes", rawSecret}, secret{"the webhook secret's hex", []byte(hex.EncodeToString(rawSecret))},
		secret{"the sealing key", sealKey[:]}, secret{"the sealing key's hex", []byte(hex.EncodeToString(sealKey[:]))},
		secret{"the Meta app secret", []byte(appSecret)}, secret{"the Meta verify token", []byte(verifyToken)},
		// PUT /v1/channels/whatsapp stored it (sealed); only its last 4
		// characters may show.
		secret{"a channel access token", []byte(channelToken)}, secret{"a channel access token's head", []byte(channelToken[:len(channelToken)-4])},
		secret{"the operator token", []byte(operatorToken)}, secret{"the operator token's head", []byte(operatorToken[:16])},
		secret{"a generated SMS apikey", []byte(genSMSKey)}, secret{"a generated SMS apikey's tail", []byte(genSMSKey[len(genSMSKey)-16:])},
		secret{"a given SMS apikey", []byte(givenSMSKey)},
	)
	for _, hs := range apiHookSecrets {
		raw, _ := base64.StdEncoding.DecodeString(hs[len("whsec_"):])
		secrets = append(secrets, secret{"a webhook secret made by the API", []byte(hs)}, secret{"its base64", []byte(hs[len("whsec_"):])},
			secret{"its bytes", raw}, secret{"its hex", []byte(hex.EncodeToString(raw))})
	}
	search := func(where string, hay []byte, also ...secret) {
		t.Helper()
		for _, s := range append(secrets, also...) {
			if bytes.Contains(hay, s.b) {
				t.Errorf("%s holds %s (%q)", where, s.what, s.b)
			}
		}
	}
	// The searches look at the right bytes: the database holds the
	// workspace ids and the logs the requests.
	if db := dbBytes(t, path); !bytes.Contains(db, []byte(e.A.ID)) || !bytes.Contains(db, []byte(e.A.Contact.Email)) {
		t.Fatalf("the database files do not hold the fixture: wrong files?")
	}
	if !strings.Contains(logs.String(), "/sms/v1/messages") || !strings.Contains(logs.String(), "/webhooks/meta") {
		t.Fatalf("the logs lack the session's requests:\n%s", logs.String())
	}
	search("the database (with -wal)", dbBytes(t, path))
	search("the logs", []byte(logs.String()), secret{"an SMS text", []byte(smsText)})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	search("the database after its checkpoint", dbBytes(t, path))
}

// TestSecretsNotInErrorAnswers: credentials sent in a request never come
// back in its error answer.
func TestSecretsNotInErrorAnswers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s := smsSetup(t)
	guess := e.A.Full[:len(e.A.Full)-2] + "zz"
	for _, r := range []*response{
		e.doRaw(request{method: "GET", path: "/v1/contacts", key: guess}),
		e.doRaw(request{method: "GET", path: "/v1/contacts", key: e.A.Revoked}),
		e.doRaw(request{method: "GET", path: "/v1/contacts", headers: hdr("X-API-Key", e.A.Full, "X-API-Key", e.B.Full)}),
		e.doRaw(request{method: "GET", path: "/v1/contacts", key: e.A.Only[record.ScopeReadMessages]}),
	} {
		for _, k := range []string{guess, e.A.Revoked, e.A.Full, e.B.Full, e.A.Only[record.ScopeReadMessages]} {
			if strings.Contains(string(r.body), k) || strings.Contains(string(r.body), k[len(k)-16:]) {
				t.Errorf("the %d answer shows a key: %s", r.status, r.body)
			}
		}
	}
	for _, b := range []string{
		`{"apikey":"` + smsKey + `x","partnerID":"1234"}`,
		`{"apikey":"` + smsKey + `","partnerID":"1234","extra":"` + smsKey + `"}`,
		`{"apikey":["` + smsKey + `"],"partnerID":"1234"}`,
	} {
		r := s.do(t, http.MethodPost, "/sms/v1/account/balance", "application/json", b)
		if strings.Contains(r.raw, smsKey) {
			t.Errorf("the %d answer shows the apikey: %s", r.status, r.raw)
		}
	}
}
