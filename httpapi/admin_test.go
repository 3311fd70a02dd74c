package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

const opToken = "op_test_0123456789abcdef0123456789"

// opEnv is a handler with the operator routes open (token opToken), the
// SMS API, a workspace "acme" with a key of every scope, and its logs.
type opEnv struct {
	svc    *messaging.Service
	sms    *sms.SMS
	h      http.Handler
	logs   *syncBuffer
	acmeKy string
}

func opSetup(t *testing.T, opts ...func(*httpapi.Options)) *opEnv {
	t.Helper()
	ctx := context.Background()
	clk := testclock.New(t0)
	st := memstore.New()
	e := &opEnv{logs: &syncBuffer{}}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{Clock: clk.Now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	if e.sms, err = sms.New(st, fakegateway.New(nil), &sms.Options{Clock: clk.Now, Logger: log}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if _, e.acmeKy, err = svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()}); err != nil {
		t.Fatal(err)
	}
	o := &httpapi.Options{Clock: clk.Now, SMS: e.sms, Logger: log, OperatorToken: opToken}
	for _, f := range opts {
		f(o)
	}
	e.h = httpapi.New(svc, o)
	return e
}

// opCall makes a request with the given headers ("op" means the operator
// token, "key" acme's API key, "op+key" both) and returns the status, the headers and
// the decoded body.
func (e *opEnv) opCall(t *testing.T, method, path, auth, body string) (int, http.Header, map[string]any, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.RemoteAddr = "192.0.2.77:1234"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	switch auth {
	case "op":
		req.Header.Set("Authorization", "Bearer "+opToken)
	case "key":
		req.Header.Set("X-API-Key", e.acmeKy)
	case "op+key":
		req.Header.Set("Authorization", "Bearer "+opToken)
		req.Header.Set("X-API-Key", e.acmeKy)
	case "":
	default:
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	var v map[string]any
	raw := rec.Body.String()
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %q", method, path, raw)
	}
	return rec.Code, rec.Header(), v, raw
}

// opExpect checks the status, and for errors the code and the field.
func opExpect(t *testing.T, what string, status int, v map[string]any, wantStatus int, code, field string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("%s: status %d, want %d; body %v", what, status, wantStatus, v)
	}
	if code == "" {
		return
	}
	env, _ := v["error"].(map[string]any)
	if env["code"] != code || (field != "" && env["field"] != field) {
		t.Errorf("%s: error %v, want code %s field %q", what, env, code, field)
	}
}

// TestOperatorAuth: without a configured token every operator route is
// absent (404); with one, a missing, malformed or wrong token and an API
// key (even beside the right token) are 401 unauthorized, charged to the client address; the operator
// token does not open a workspace route.
func TestOperatorAuth(t *testing.T) {
	t.Parallel()
	off := opSetup(t, func(o *httpapi.Options) { o.OperatorToken = "" })
	for _, rt := range httpapi.OperatorRoutes() {
		path := strings.NewReplacer("{id}", "acme", "{partnerID}", "p1").Replace(rt.Pattern)
		body := ""
		if rt.Method == "POST" {
			body = "{}"
		}
		st, _, v, _ := off.opCall(t, rt.Method, path, "op", body)
		opExpect(t, rt.Name()+" without a configured token", st, v, 404, "not_found", "")
	}

	e := opSetup(t)
	for _, tc := range []struct{ name, auth string }{
		{"no token", ""},
		{"API key", "key"},
		{"API key beside the operator token", "op+key"},
		{"wrong token", "Bearer " + opToken + "x"},
		{"token prefix", "Bearer " + opToken[:10]},
		{"basic scheme", "Basic " + opToken},
		{"no scheme", opToken},
	} {
		st, _, v, _ := e.opCall(t, "GET", "/admin/v1/workspaces", tc.auth, "")
		opExpect(t, tc.name, st, v, 401, "unauthorized", "")
	}
	st, _, v, _ := e.opCall(t, "GET", "/admin/v1/workspaces", "key", "")
	if msg, _ := v["error"].(map[string]any)["message"].(string); st != 401 || !strings.Contains(msg, "API key does not open the operator routes") {
		t.Errorf("API key on an operator route: %d %q", st, msg)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces", "bearer "+opToken, "")
	opExpect(t, "lower-case scheme", st, v, 200, "", "")
	// The operator token is not an API key.
	st, _, v, _ = e.opCall(t, "GET", "/v1/templates", "op", "")
	opExpect(t, "operator token on a workspace route", st, v, 401, "unauthorized", "")
	if msg, _ := v["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "not a bearer token") {
		t.Errorf("operator token on a workspace route: message %q", msg)
	}

	// Refusals spend the client address's unauthenticated bucket.
	lim := opSetup(t, func(o *httpapi.Options) { o.RateLimits = map[string]int{"unauthenticated": 2} })
	for i, want := range []int{401, 401, 429} {
		st, _, v, _ := lim.opCall(t, "GET", "/admin/v1/workspaces", "Bearer wrong-token-000000000000", "")
		opExpect(t, "wrong token "+string(rune('1'+i)), st, v, want, "", "")
	}
	st, _, v, _ = lim.opCall(t, "GET", "/admin/v1/workspaces", "op", "")
	opExpect(t, "the right token after the address's refusals", st, v, 200, "", "")
	st, _, v, _ = lim.opCall(t, "GET", "/v1/contacts", "", "")
	opExpect(t, "the address's bucket is spent for keyless requests", st, v, 429, "rate_limit_exceeded", "")
}

// TestOperatorWorkspaces: create, list (paged), get, give a first key
// (any scopes); bad input names the field; unknown workspaces are 404;
// the changes are audited as the operator's.
func TestOperatorWorkspaces(t *testing.T) {
	t.Parallel()
	e := opSetup(t)
	st, _, v, _ := e.opCall(t, "POST", "/admin/v1/workspaces", "op", `{"id":"beta","name":"Beta Ltd"}`)
	opExpect(t, "create", st, v, 201, "", "")
	if v["id"] != "beta" || v["name"] != "Beta Ltd" || v["created_at"] == nil {
		t.Errorf("created %v", v)
	}
	for _, tc := range []struct{ name, body, code, field string }{
		{"duplicate", `{"id":"beta","name":"Again"}`, "conflict", ""},
		{"bad id", `{"id":"no spaces","name":"X"}`, "validation_error", "id"},
		{"unknown field", `{"id":"x1","name":"X","plan":"gold"}`, "validation_error", "plan"},
		{"name too long", `{"id":"x2","name":"` + strings.Repeat("n", 201) + `"}`, "validation_error", "name"},
	} {
		st, _, v, _ := e.opCall(t, "POST", "/admin/v1/workspaces", "op", tc.body)
		opExpect(t, tc.name, st, v, map[string]int{"conflict": 409, "validation_error": 400}[tc.code], tc.code, tc.field)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces?limit=1", "op", "")
	opExpect(t, "list page 1", st, v, 200, "", "")
	items, _ := v["data"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != "acme" || v["next_cursor"] != "acme" {
		t.Fatalf("page 1: %v", v)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces?cursor=acme", "op", "")
	if items, _ := v["data"].([]any); st != 200 || len(items) != 1 || items[0].(map[string]any)["id"] != "beta" || v["next_cursor"] != nil {
		t.Errorf("page 2: %d %v", st, v)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces?limit=0", "op", "")
	opExpect(t, "limit 0", st, v, 400, "validation_error", "limit")
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces?order=id", "op", "")
	opExpect(t, "unknown query", st, v, 400, "validation_error", "order")
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces/beta", "op", "")
	if opExpect(t, "get", st, v, 200, "", ""); v["name"] != "Beta Ltd" {
		t.Errorf("get: %v", v)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces/nope", "op", "")
	opExpect(t, "get unknown", st, v, 404, "not_found", "")

	st, _, v, raw := e.opCall(t, "POST", "/admin/v1/workspaces/beta/api-keys", "op", `{"name":"first","scopes":["manage:keys","write:messages"]}`)
	opExpect(t, "first key", st, v, 201, "", "")
	key, _ := v["key"].(string)
	if !strings.HasPrefix(key, "mk_") || v["id"] == nil || v["prefix"] == nil || v["revoked_at"] != nil {
		t.Fatalf("first key answer %s", raw)
	}
	p, err := e.svc.Authenticate(context.Background(), key)
	if err != nil || p.WorkspaceID != "beta" || !p.HasScope(record.ScopeManageKeys) {
		t.Errorf("the first key authenticates as %+v, %v", p, err)
	}
	for _, tc := range []struct{ name, path, body string }{
		{"unknown scope", "/admin/v1/workspaces/beta/api-keys", `{"scopes":["admin:all"]}`},
		{"no scopes", "/admin/v1/workspaces/beta/api-keys", `{"scopes":[]}`},
	} {
		st, _, v, _ := e.opCall(t, "POST", tc.path, "op", tc.body)
		opExpect(t, tc.name, st, v, 400, "validation_error", "scopes")
	}
	st, _, v, _ = e.opCall(t, "POST", "/admin/v1/workspaces/nope/api-keys", "op", `{"scopes":["read:messages"]}`)
	opExpect(t, "key of an unknown workspace", st, v, 404, "not_found", "")

	events, _, err := e.svc.AuditEvents(context.Background(), "beta", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Actor != httpapi.ActorOperator || events[1].Actor != httpapi.ActorOperator {
		t.Errorf("audit events of beta: %+v; want the creation and the key, by the operator", events)
	}
	// The key is in one answer only: not in the list, the workspace, the
	// audit events or the logs.
	_, _, _, list := e.opCall(t, "GET", "/admin/v1/workspaces", "op", "")
	_, _, _, ws := e.opCall(t, "GET", "/admin/v1/workspaces/beta", "op", "")
	for what, s := range map[string]string{"list": list, "workspace": ws, "logs": e.logs.String()} {
		if strings.Contains(s, key) || strings.Contains(s, opToken) {
			t.Errorf("the %s holds the first key or the operator token", what)
		}
	}
}

// TestOperatorSMSAccounts: create an account (apikey generated and shown
// once, or given and never shown), read it, approve a sender, top up once
// per reference, read the ledger; bad input names the field; unknown
// accounts are 404.
func TestOperatorSMSAccounts(t *testing.T) {
	t.Parallel()
	e := opSetup(t)
	st, _, v, raw := e.opCall(t, "POST", "/admin/v1/sms/accounts", "op",
		`{"partnerID":"p1","shortcodes":["ACME"],"credit":"10.50","timezone":"Africa/Nairobi","cost_per_segment":0.8}`)
	opExpect(t, "create", st, v, 201, "", "")
	gen, _ := v["apikey"].(string)
	if !strings.HasPrefix(gen, "smsk_") || v["credit"] != "10.50" || v["cost_per_segment"] != "0.80" || v["timezone"] != "Africa/Nairobi" {
		t.Fatalf("created %s", raw)
	}
	if _, err := e.sms.Authenticate(context.Background(), "p1", gen); err != nil {
		t.Errorf("the generated apikey does not authenticate: %v", err)
	}
	given := "given-apikey-0123456789abcdef"
	st, _, v, raw = e.opCall(t, "POST", "/admin/v1/sms/accounts", "op", `{"partnerID":"p2","apikey":"`+given+`","shortcodes":[]}`)
	if opExpect(t, "create with an apikey", st, v, 201, "", ""); strings.Contains(raw, given) || v["apikey"] != nil {
		t.Errorf("a given apikey is echoed: %s", raw)
	}
	for _, tc := range []struct{ name, body, code, field string }{
		{"duplicate", `{"partnerID":"p1"}`, "conflict", "partnerID"},
		{"no partnerID", `{"shortcodes":["ACME"]}`, "validation_error", "partnerID"},
		{"bad partnerID", `{"partnerID":"a b"}`, "validation_error", "partnerID"},
		{"short apikey", `{"partnerID":"p3","apikey":"short"}`, "validation_error", "apikey"},
		{"bad shortcode", `{"partnerID":"p3","shortcodes":["WAY-TOO-LONG-SENDER"]}`, "validation_error", "shortcodes"},
		{"bad credit", `{"partnerID":"p3","credit":"1.234"}`, "validation_error", "credit"},
		{"negative credit", `{"partnerID":"p3","credit":-1}`, "validation_error", "credit"},
		{"bad zone", `{"partnerID":"p3","timezone":"Mars/Olympus"}`, "validation_error", "timezone"},
		{"bad cost", `{"partnerID":"p3","cost_per_segment":"x"}`, "validation_error", "cost_per_segment"},
		{"zero cost", `{"partnerID":"p3","cost_per_segment":0}`, "validation_error", "cost_per_segment"},
		{"zero cost as a string", `{"partnerID":"p3","cost_per_segment":"0.00"}`, "validation_error", "cost_per_segment"},
		{"unknown field", `{"partnerID":"p3","owner":"x"}`, "validation_error", "owner"},
	} {
		st, _, v, _ := e.opCall(t, "POST", "/admin/v1/sms/accounts", "op", tc.body)
		opExpect(t, tc.name, st, v, map[string]int{"conflict": 409, "validation_error": 400}[tc.code], tc.code, tc.field)
	}

	// The refusals stored nothing; an explicit 0 says why; a null cost is
	// the default.
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/sms/accounts/p3", "op", "")
	opExpect(t, "get a refused account", st, v, 404, "not_found", "")
	st, _, v, _ = e.opCall(t, "POST", "/admin/v1/sms/accounts", "op", `{"partnerID":"p3","cost_per_segment":"0"}`)
	if msg, _ := v["error"].(map[string]any)["message"].(string); st != 400 || !strings.Contains(msg, "from 0.01") {
		t.Errorf("zero cost: %d %q", st, msg)
	}
	st, _, v, _ = e.opCall(t, "POST", "/admin/v1/sms/accounts", "op", `{"partnerID":"p4","cost_per_segment":null}`)
	if opExpect(t, "null cost", st, v, 201, "", ""); v["cost_per_segment"] != "1.00" {
		t.Errorf("null cost: %v", v)
	}

	st, _, v, raw = e.opCall(t, "GET", "/admin/v1/sms/accounts/p1", "op", "")
	if opExpect(t, "get", st, v, 200, "", ""); v["credit"] != "10.50" || strings.Contains(raw, gen) || strings.Contains(raw, "apikey") {
		t.Errorf("get: %s", raw)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/sms/accounts/nope", "op", "")
	opExpect(t, "get unknown", st, v, 404, "not_found", "")

	st, _, v, _ = e.opCall(t, "POST", "/admin/v1/sms/accounts/p1/senders", "op", `{"shortcode":"NEWCO"}`)
	if opExpect(t, "approve", st, v, 200, "", ""); len(v["shortcodes"].([]any)) != 2 {
		t.Errorf("after approving NEWCO: %v", v)
	}
	st, _, v, _ = e.opCall(t, "POST", "/admin/v1/sms/accounts/p1/senders", "op", `{"shortcode":""}`)
	opExpect(t, "approve empty", st, v, 400, "validation_error", "shortcode")
	st, _, v, _ = e.opCall(t, "POST", "/admin/v1/sms/accounts/nope/senders", "op", `{"shortcode":"X"}`)
	opExpect(t, "approve unknown", st, v, 404, "not_found", "")

	st, h, v, _ := e.opCall(t, "POST", "/admin/v1/sms/accounts/p1/top-ups", "op", `{"amount":"100","reference":"inv-1"}`)
	if opExpect(t, "top-up", st, v, 201, "", ""); v["balance"] != "110.50" || v["amount"] != "100.00" || v["kind"] != "top_up" || h.Get("Idempotent-Replayed") != "" {
		t.Errorf("top-up: %v %v", v, h)
	}
	st, h, v, _ = e.opCall(t, "POST", "/admin/v1/sms/accounts/p1/top-ups", "op", `{"amount":100,"reference":"inv-1"}`)
	if opExpect(t, "top-up repeat", st, v, 201, "", ""); v["balance"] != "110.50" || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("repeat: %v %v", v, h)
	}
	for _, tc := range []struct{ name, path, body, code, field string }{
		{"other amount", "p1", `{"amount":"99","reference":"inv-1"}`, "conflict", "reference"},
		{"overflow", "p1", `{"amount":"1000000000000","reference":"big"}`, "validation_error", "amount"},
		{"too big", "p1", `{"amount":"1000000000001","reference":"big"}`, "validation_error", "amount"},
		{"zero", "p1", `{"amount":0,"reference":"z"}`, "validation_error", "amount"},
		{"no amount", "p1", `{"reference":"z"}`, "validation_error", "amount"},
		{"no reference", "p1", `{"amount":1}`, "validation_error", "reference"},
		{"unknown account", "nope", `{"amount":1,"reference":"r"}`, "not_found", ""},
	} {
		st, _, v, _ := e.opCall(t, "POST", "/admin/v1/sms/accounts/"+tc.path+"/top-ups", "op", tc.body)
		opExpect(t, tc.name, st, v, map[string]int{"conflict": 409, "validation_error": 400, "not_found": 404}[tc.code], tc.code, tc.field)
	}
	if a, _ := e.sms.GetAccount(context.Background(), "p1"); a.Credit != sms.Credit(11050) {
		t.Errorf("credit %s after refused top-ups, want 110.50", a.Credit)
	}

	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/sms/accounts/p1/ledger?limit=1", "op", "")
	opExpect(t, "ledger", st, v, 200, "", "")
	items, _ := v["data"].([]any)
	if next, _ := v["next_cursor"].(string); len(items) != 1 || items[0].(map[string]any)["reference"] != "inv-1" || next == "" {
		t.Fatalf("ledger page 1: %v", v)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/sms/accounts/p1/ledger?cursor="+v["next_cursor"].(string), "op", "")
	if items, _ := v["data"].([]any); st != 200 || len(items) != 1 || items[0].(map[string]any)["kind"] != "opening" || v["next_cursor"] != nil {
		t.Errorf("ledger page 2: %v", v)
	}
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/sms/accounts/p1/ledger?cursor=zz", "op", "")
	opExpect(t, "ledger bad cursor", st, v, 400, "validation_error", "cursor")
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/sms/accounts/nope/ledger", "op", "")
	opExpect(t, "ledger unknown", st, v, 404, "not_found", "")

	if l := e.logs.String(); strings.Contains(l, gen) || strings.Contains(l, given) || strings.Contains(l, opToken) {
		t.Error("the logs hold an SMS apikey or the operator token")
	}
}

// TestOperatorRoutesWithoutSMS: with a token but no SMS service, the SMS
// account routes are absent and the workspace ones served.
func TestOperatorRoutesWithoutSMS(t *testing.T) {
	t.Parallel()
	e := opSetup(t, func(o *httpapi.Options) { o.SMS = nil })
	st, _, v, _ := e.opCall(t, "GET", "/admin/v1/sms/accounts/p1", "op", "")
	opExpect(t, "SMS route without SMS", st, v, 404, "not_found", "")
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces/acme", "op", "")
	opExpect(t, "workspace route", st, v, 200, "", "")
}

// TestOperatorEndAllSessions: DELETE /admin/v1/sessions ends every
// dashboard session and says how many; an API key cannot, and a query is
// refused.
func TestOperatorEndAllSessions(t *testing.T) {
	e := opSetup(t)
	ctx := context.Background()
	var tokens []string
	for _, p := range []*messaging.SessionParams{{Subject: "operator", Operator: true}, {Subject: "ann", Workspaces: []string{"acme"}}} {
		token, _, err := e.svc.StartSession(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, token)
	}
	st, _, v, _ := e.opCall(t, "DELETE", "/admin/v1/sessions", "key", "")
	opExpect(t, "with an API key", st, v, http.StatusUnauthorized, "unauthorized", "")
	st, _, v, _ = e.opCall(t, "DELETE", "/admin/v1/sessions?subject=ann", "op", "")
	opExpect(t, "with a query", st, v, http.StatusBadRequest, "validation_error", "subject")
	for _, token := range tokens {
		if _, err := e.svc.Session(ctx, token); err != nil {
			t.Fatalf("a refused request ended a session: %v", err)
		}
	}
	st, _, v, _ = e.opCall(t, "DELETE", "/admin/v1/sessions", "op", "")
	opExpect(t, "sign out everywhere", st, v, http.StatusOK, "", "")
	if v["ended"] != float64(2) {
		t.Errorf("answer %v; want ended 2", v)
	}
	for i, token := range tokens {
		if _, err := e.svc.Session(ctx, token); messaging.ErrorCode(err) != messaging.CodeUnauthorized {
			t.Errorf("session %d after DELETE /admin/v1/sessions: %v; want unauthorized", i, err)
		}
	}
}
