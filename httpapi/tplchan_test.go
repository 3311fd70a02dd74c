package httpapi_test

import (
	"context"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

const welcomeDraft = `{"name":"welcome_note","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hi {{1}}, welcome."}]}`

// TestTemplateDraftLifecycle: POST creates a draft, PATCH edits only the
// fields sent, submit makes it pending, an edit or a second submission
// after that is a conflict naming the state, DELETE removes it.
func TestTemplateDraftLifecycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.call(t, "POST", "/v1/templates", "A", welcomeDraft)
	expect(t, r, 201, "", "")
	created := r.object(t)
	id, _ := created["id"].(string)
	if created["status"] != "draft" || created["name"] != "welcome_note" || created["category"] != "UTILITY" {
		t.Errorf("created %v, want a UTILITY draft welcome_note", created)
	}
	r = e.call(t, "PATCH", "/v1/templates/"+id, "A", `{"category":"MARKETING"}`)
	expect(t, r, 200, "", "")
	patched := r.object(t)
	if patched["category"] != "MARKETING" || patched["name"] != "welcome_note" || patched["status"] != "draft" ||
		!cmp.Equal(patched["components"], created["components"]) {
		t.Errorf("patched %v, want only the category changed", patched)
	}
	r = e.call(t, "PATCH", "/v1/templates/"+id, "A", `{"name":"welcome_v2","components":[{"type":"BODY","text":"Hello {{1}} from {{2}}"}]}`)
	expect(t, r, 200, "", "")
	if got := r.object(t); got["name"] != "welcome_v2" || got["category"] != "MARKETING" {
		t.Errorf("second patch %v", got)
	}
	// Listed as a draft, not as approved.
	if list := e.call(t, "GET", "/v1/templates?status=draft", "A", nil).array(t); len(list) != 1 || list[0].(map[string]any)["id"] != id {
		t.Errorf("drafts %v, want only %s", list, id)
	}
	for _, it := range e.call(t, "GET", "/v1/templates", "A", nil).array(t) {
		if it.(map[string]any)["id"] == id {
			t.Errorf("the draft is listed among approved templates")
		}
	}
	r = e.call(t, "POST", "/v1/templates/"+id+"/submit", "A", nil)
	expect(t, r, 200, "", "")
	if got := r.object(t); got["status"] != "pending" || got["provider_template_id"] == nil {
		t.Errorf("submitted %v, want pending with the provider's id", got)
	}
	r = e.call(t, "PATCH", "/v1/templates/"+id, "A", `{"category":"UTILITY"}`)
	expect(t, r, 409, "conflict", "status")
	if !strings.Contains(r.env.Error.Message, "pending") {
		t.Errorf("409 %q does not name the state", r.env.Error.Message)
	}
	r = e.call(t, "POST", "/v1/templates/"+id+"/submit", "A", `{}`)
	expect(t, r, 409, "conflict", "status")
	if !strings.Contains(r.env.Error.Message, "pending") {
		t.Errorf("409 %q does not name the state", r.env.Error.Message)
	}
	r = e.call(t, "DELETE", "/v1/templates/"+id, "A", nil)
	expect(t, r, 200, "", "")
	if d := cmp.Diff(map[string]any{"id": id, "deleted": true}, r.object(t)); d != "" {
		t.Errorf("DELETE (-want +got):\n%s", d)
	}
	expect(t, e.call(t, "GET", "/v1/templates/"+id, "A", nil), 404, "not_found", "")
	// An approved template (not a draft) cannot be edited either.
	r = e.call(t, "PATCH", "/v1/templates/<A.template>", "A", `{"category":"MARKETING"}`)
	expect(t, r, 409, "conflict", "status")
	if !strings.Contains(r.env.Error.Message, "approved") {
		t.Errorf("409 %q does not name the state", r.env.Error.Message)
	}
}

// TestTemplateAuthoringErrors: POST and PATCH answer the authoring rules
// with validation_error naming the field, and store nothing.
func TestTemplateAuthoringErrors(t *testing.T) {
	t.Parallel()
	e := setup(t)
	draft := e.A.NewDraft()
	comps := func(c string) string {
		return `{"name":"bad_one","category":"UTILITY","language":"en","components":[` + c + `]}`
	}
	for _, c := range []struct {
		name, method, body, field string
	}{
		{"status refused", "POST", `{"name":"x","category":"UTILITY","language":"en","status":"approved","components":[{"type":"BODY","text":"Hi"}]}`, "status"},
		{"name missing", "POST", `{"category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hi"}]}`, "name"},
		{"name uppercase", "POST", `{"name":"Hello","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hi"}]}`, "name"},
		{"category", "POST", `{"name":"x","category":"PROMO","language":"en","components":[{"type":"BODY","text":"Hi"}]}`, "category"},
		{"language", "POST", `{"name":"x","category":"UTILITY","language":"english","components":[{"type":"BODY","text":"Hi"}]}`, "language"},
		{"no body component", "POST", comps(`{"type":"FOOTER","text":"Bye"}`), "components"},
		{"variable gap", "POST", comps(`{"type":"BODY","text":"Hi {{1}} {{3}}"}`), "components[0].text"},
		{"header two variables", "POST", comps(`{"type":"HEADER","format":"TEXT","text":"{{1}} {{2}}"},{"type":"BODY","text":"Hi"}`), "components[0].text"},
		{"footer variable", "POST", comps(`{"type":"BODY","text":"Hi"},{"type":"FOOTER","text":"{{1}}"}`), "components[1].text"},
		{"four quick replies", "POST", comps(`{"type":"BODY","text":"Hi"},{"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"a"},{"type":"QUICK_REPLY","text":"b"},{"type":"QUICK_REPLY","text":"c"},{"type":"QUICK_REPLY","text":"d"}]}`), "components[1].buttons"},
		{"component field case", "POST", comps(`{"type":"BODY","Text":"Hi"}`), "Text"},
		{"patch null", "PATCH", `{"name":null}`, "name"},
		{"patch empty", "PATCH", `{}`, "body"},
		{"patch status", "PATCH", `{"status":"pending"}`, "status"},
		{"patch field case", "PATCH", `{"Name":"x"}`, "Name"},
		{"patch component field case", "PATCH", `{"components":[{"type":"BODY","TEXT":"Hi"}]}`, "TEXT"},
		{"patch variable gap", "PATCH", `{"components":[{"type":"BODY","text":"Hi {{2}}"}]}`, "components[0].text"},
		{"patch bad name", "PATCH", `{"name":"Bad Name"}`, "name"},
		{"examples per variable", "POST", comps(`{"type":"BODY","text":"Hi {{1}} {{2}}","examples":["Ann"]}`), "components[0].examples"},
		{"examples on a footer", "POST", comps(`{"type":"BODY","text":"Hi"},{"type":"FOOTER","text":"Bye","examples":["x"]}`), "components[1].examples"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := "/v1/templates"
			if c.method == "PATCH" {
				path += "/" + draft
			}
			expect(t, e.call(t, c.method, path, "A", c.body), 400, "validation_error", c.field)
		})
	}
	list, err := e.svc.Workspace(e.A.ID).Templates.List(context.Background(), &messaging.TemplateFilter{Status: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != draft || list[0].Name != "draft_1" || list[0].Components[0].Text != "Draft {{1}}" {
		t.Errorf("refused requests changed the drafts: %+v", list)
	}
}

// TestTemplateExamples: a component's examples are stored, answered with
// the template and used by its send_example.
func TestTemplateExamples(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.call(t, "POST", "/v1/templates", "A", `{"name":"with_examples","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hi {{1}}, code {{2}}","examples":["Ann","X9"]}]}`)
	expect(t, r, 201, "", "")
	id, _ := r.object(t)["id"].(string)
	got := e.call(t, "GET", "/v1/templates/"+id, "A", nil).object(t)
	comps, _ := got["components"].([]any)
	ex, _ := got["send_example"].(map[string]any)
	want := []any{"Ann", "X9"}
	if len(comps) != 1 || !cmp.Equal(comps[0].(map[string]any)["examples"], want) {
		t.Errorf("components = %v; want the examples %v", got["components"], want)
	}
	body := ex["components"].([]any)[0].(map[string]any)["parameters"].([]any)
	if len(body) != 2 || body[0].(map[string]any)["text"] != "Ann" || body[1].(map[string]any)["text"] != "X9" {
		t.Errorf("send_example body parameters = %v; want Ann, X9", body)
	}
}

// TestTemplateListStatusNeedsManage: GET /v1/templates lists approved
// templates with read:templates; any other status, "any" included, needs
// manage:templates too (403 naming it); a status that is no state is 400.
func TestTemplateListStatusNeedsManage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	readOnly := "A.only:" + record.ScopeReadTemplates
	names := func(r *response) []string {
		var out []string
		for _, it := range r.array(t) {
			out = append(out, it.(map[string]any)["name"].(string)+"/"+it.(map[string]any)["status"].(string))
		}
		return out
	}
	approved := []string{"a_only/approved", "karibu/approved", "order_update/approved", "welcome/approved"}
	for _, path := range []string{"/v1/templates", "/v1/templates?status=approved"} {
		r := e.call(t, "GET", path, readOnly, nil)
		expect(t, r, 200, "", "")
		if d := cmp.Diff(approved, names(r)); d != "" {
			t.Errorf("%s (-want +got):\n%s", path, d)
		}
	}
	for _, st := range []string{"any", "pending", "draft", "rejected"} {
		r := e.call(t, "GET", "/v1/templates?status="+st, readOnly, nil)
		expect(t, r, 403, "forbidden", "")
		if !strings.Contains(r.env.Error.Message, record.ScopeManageTemplates) {
			t.Errorf("status %s: 403 %q does not name %s", st, r.env.Error.Message, record.ScopeManageTemplates)
		}
	}
	// manage:templates alone is not enough: the route needs read:templates.
	expect(t, e.call(t, "GET", "/v1/templates?status=any", "A.only:"+record.ScopeManageTemplates, nil), 403, "forbidden", "")
	r := e.call(t, "GET", "/v1/templates?status=any", "A", nil)
	expect(t, r, 200, "", "")
	if d := cmp.Diff([]string{"a_only/approved", "karibu/approved", "order_update/approved", "spring_sale/pending", "welcome/approved"}, names(r)); d != "" {
		t.Errorf("status=any (-want +got):\n%s", d)
	}
	r = e.call(t, "GET", "/v1/templates?status=pending", "A", nil)
	if d := cmp.Diff([]string{"spring_sale/pending"}, names(r)); d != "" {
		t.Errorf("status=pending (-want +got):\n%s", d)
	}
	for _, st := range []string{"all", "APPROVED", "approved%20"} {
		expect(t, e.call(t, "GET", "/v1/templates?status="+st, "A", nil), 400, "validation_error", "status")
	}
}

// TestTemplateSync: POST /v1/templates/sync answers 202 with what changed
// when the provider lists templates; 409 when it does not (fakeprovider).
func TestTemplateSync(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.call(t, "POST", "/v1/templates/sync", "A", nil)
	expect(t, r, 409, "conflict", "provider")

	store := memstore.New()
	lp := &listingProvider{Provider: fakeprovider.New(), list: []*messaging.ProviderTemplate{
		{ID: "77", Name: "from_meta", Language: "en", Category: record.CategoryUtility, Status: "APPROVED",
			Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello"}}}}}
	svc, err := messaging.New(store, lp, &messaging.Options{SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "w"}); err != nil {
		t.Fatal(err)
	}
	_, key, err := svc.Workspace("w").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(svc, nil)
	le := &env{h: h, A: e.A, B: e.B, remote: e.remote}
	expect(t, le.do(t, request{method: "POST", path: "/v1/templates/sync", key: key}), 422, "channel_unavailable", "channel")
	if _, err := svc.Workspace("w").Channels.Connect(ctx, messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		Fields: map[string]string{"phone_number_id": "1", "waba_id": "2"}, AccessToken: "EAAGsynctoken1"}); err != nil {
		t.Fatal(err)
	}
	r = le.do(t, request{method: "POST", path: "/v1/templates/sync", key: key})
	expect(t, r, 202, "", "")
	if d := cmp.Diff(map[string]any{"listed": 1.0, "created": 1.0, "updated": 0.0, "removed": 0.0, "resubmitted": 0.0}, r.object(t)); d != "" {
		t.Errorf("sync (-want +got):\n%s", d)
	}
	r = le.do(t, request{method: "GET", path: "/v1/templates", key: key})
	if list := r.array(t); len(list) != 1 || list[0].(map[string]any)["name"] != "from_meta" || list[0].(map[string]any)["provider_template_id"] != "77" {
		t.Errorf("after the sync: %s", r.body)
	}
}

// TestChannelRoutes: GET lists every channel (connected by flag: null
// sender); PUT connects with credentials and shows the token's hint only;
// DELETE disconnects, after which sends on the channel are refused.
func TestChannelRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	flagOnly := func(ch string) map[string]any {
		return map[string]any{"channel": ch, "status": "connected", "sender_id": nil, "display": nil, "credential_hint": nil, "error": nil, "connected_at": nil,
			"throughput": nil, "messaging_tier": nil, "tier_changed_at": nil, "quality_rating": nil, "quality_changed_at": nil}
	}
	// A connection with credentials has the default throughput; the
	// fake reports a WhatsApp number's health (GREEN, TIER_1K) when it
	// verifies it.
	noHealth := map[string]any{"throughput": 80.0, "messaging_tier": nil, "tier_changed_at": nil, "quality_rating": nil, "quality_changed_at": nil}
	with := func(m, more map[string]any) map[string]any {
		out := maps.Clone(m)
		maps.Copy(out, more)
		return out
	}
	// The setup connects messenger with credentials (page 3000003 in A,
	// 4000004 in B).
	setupMessenger := func(page string) map[string]any {
		return with(map[string]any{"channel": "messenger", "status": "connected", "sender_id": page, "display": nil,
			"credential_hint": channelToken[len(channelToken)-4:], "error": nil, "connected_at": ts0}, noHealth)
	}
	r := e.call(t, "GET", "/v1/channels", "A", nil)
	expect(t, r, 200, "", "")
	if d := cmp.Diff([]any{flagOnly("whatsapp"), flagOnly("instagram"), setupMessenger("3000003")}, r.array(t)); d != "" {
		t.Errorf("GET (-want +got):\n%s", d)
	}
	const token = "EAAGroutesSecretToken0042"
	r = e.call(t, "PUT", "/v1/channels/whatsapp", "A", `{"phone_number_id":"106540352242922","waba_id":"102290129340398","display_phone_number":"+254712345678","access_token":"`+token+`"}`)
	expect(t, r, 200, "", "")
	wa := map[string]any{"channel": "whatsapp", "status": "connected", "sender_id": "106540352242922", "display": "+254712345678",
		"credential_hint": "0042", "error": nil, "connected_at": ts0, "throughput": 80.0, "messaging_tier": "TIER_1K", "tier_changed_at": ts0,
		"quality_rating": "GREEN", "quality_changed_at": ts0}
	if d := cmp.Diff(wa, r.object(t)); d != "" {
		t.Errorf("PUT (-want +got):\n%s", d)
	}
	r = e.call(t, "PUT", "/v1/channels/messenger", "A", `{"page_id":"555","access_token":"EAAGpageToken9999"}`)
	expect(t, r, 200, "", "")
	ms := with(map[string]any{"channel": "messenger", "status": "connected", "sender_id": "555", "display": nil, "credential_hint": "9999", "error": nil, "connected_at": ts0}, noHealth)
	r = e.call(t, "GET", "/v1/channels", "A", nil)
	if d := cmp.Diff([]any{wa, flagOnly("instagram"), ms}, r.array(t)); d != "" {
		t.Errorf("GET after PUT (-want +got):\n%s", d)
	}
	// B sees none of A's credentials.
	r = e.call(t, "GET", "/v1/channels", "B", nil)
	if d := cmp.Diff([]any{flagOnly("whatsapp"), flagOnly("instagram"), setupMessenger("4000004")}, r.array(t)); d != "" {
		t.Errorf("B's channels (-want +got):\n%s", d)
	}
	// PATCH sets the throughput, 1 to 1000; anything else names it.
	for _, body := range []string{`{"throughput":0}`, `{"throughput":1001}`, `{"throughput":"fast"}`, `{"throughput":2.5}`, `{}`} {
		expect(t, e.call(t, "PATCH", "/v1/channels/whatsapp", "A", body), 400, "validation_error", "throughput")
	}
	r = e.call(t, "PATCH", "/v1/channels/whatsapp", "A", `{"throughput":1000}`)
	expect(t, r, 200, "", "")
	if d := cmp.Diff(with(wa, map[string]any{"throughput": 1000.0}), r.object(t)); d != "" {
		t.Errorf("PATCH (-want +got):\n%s", d)
	}
	wa["throughput"] = 1000.0
	expect(t, e.call(t, "PATCH", "/v1/channels/instagram", "A", `{"throughput":5}`), 404, "not_found", "")
	// B cannot take A's account.
	expect(t, e.call(t, "PUT", "/v1/channels/whatsapp", "B", `{"phone_number_id":"106540352242922","waba_id":"1","access_token":"EAAGotherToken1"}`), 409, "conflict", "phone_number_id")
	r = e.call(t, "DELETE", "/v1/channels/messenger", "A", nil)
	expect(t, r, 200, "", "")
	off := flagOnly("messenger")
	off["status"] = "disconnected"
	if d := cmp.Diff(off, r.object(t)); d != "" {
		t.Errorf("DELETE (-want +got):\n%s", d)
	}
	expect(t, e.call(t, "DELETE", "/v1/channels/messenger", "A", nil), 200, "", "")
	expect(t, e.call(t, "POST", "/v1/messages", "A", `{"channel":"messenger","to":"+254712345678","type":"text","text":"hi"}`), 422, "channel_unavailable", "")
	// PUT connects it again.
	expect(t, e.call(t, "PUT", "/v1/channels/messenger", "A", `{"page_id":"555","access_token":"EAAGpageToken9999"}`), 200, "", "")
	expect(t, e.call(t, "POST", "/v1/messages", "A", `{"channel":"messenger","to":"+254712345678","type":"text","text":"hi"}`), 201, "", "")
}

// TestChannelBadInput: wrong or missing credentials are validation errors
// naming the field; an unknown channel is 404; nothing is stored.
func TestChannelBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t, unlimited)
	for _, c := range []struct {
		channel, body string
		status        int
		code, field   string
	}{
		{"whatsapp", `{"phone_number_id":"1","waba_id":"2","page_id":"3","access_token":"EAAGtoken1234"}`, 400, "validation_error", "page_id"},
		{"whatsapp", `{"phone_number_id":"1","waba_id":"2","instagram_account_id":"3","access_token":"EAAGtoken1234"}`, 400, "validation_error", "instagram_account_id"},
		{"messenger", `{"phone_number_id":"1","access_token":"EAAGtoken1234"}`, 400, "validation_error", "phone_number_id"},
		{"messenger", `{"page_id":"1","waba_id":"2","access_token":"EAAGtoken1234"}`, 400, "validation_error", "waba_id"},
		{"instagram", `{"page_id":"1","access_token":"EAAGtoken1234"}`, 400, "validation_error", "page_id"},
		{"instagram", `{"instagram_account_id":"1","display_phone_number":"+254712345678","access_token":"EAAGtoken1234"}`, 400, "validation_error", "display_phone_number"},
		{"whatsapp", `{"phone_number_id":"1","waba_id":"2"}`, 400, "validation_error", "access_token"},
		{"whatsapp", `{"phone_number_id":"1","waba_id":"2","access_token":"short"}`, 400, "validation_error", "access_token"},
		{"whatsapp", `{"phone_number_id":"1","waba_id":"2","access_token":"has a space in it"}`, 400, "validation_error", "access_token"},
		{"whatsapp", `{"phone_number_id":"abc","waba_id":"2","access_token":"EAAGtoken1234"}`, 400, "validation_error", "phone_number_id"},
		{"whatsapp", `{"phone_number_id":"1","access_token":"EAAGtoken1234"}`, 400, "validation_error", "waba_id"},
		{"whatsapp", `{"phone_number_id":"1","waba_id":"2","display_phone_number":"0712","access_token":"EAAGtoken1234"}`, 400, "validation_error", "display_phone_number"},
		{"whatsapp", `{"account_id":"1","access_token":"EAAGtoken1234"}`, 400, "validation_error", "account_id"},
		{"whatsapp", `{"Access_token":"EAAGtoken1234"}`, 400, "validation_error", "Access_token"},
		{"sms", `{"access_token":"EAAGtoken1234"}`, 404, "not_found", ""},
		{"WhatsApp", `{"phone_number_id":"1","waba_id":"2","access_token":"EAAGtoken1234"}`, 404, "not_found", ""},
	} {
		expect(t, e.call(t, "PUT", "/v1/channels/"+c.channel, "A", c.body), c.status, c.code, c.field)
	}
	expect(t, e.call(t, "DELETE", "/v1/channels/sms", "A", nil), 404, "not_found", "")
	// The setup's messenger connection is the only one.
	states, _ := e.svc.Workspace(e.A.ID).Channels.List(context.Background())
	var list []*messaging.ChannelConnection
	for _, st := range states {
		if st.Connection != nil {
			list = append(list, st.Connection)
		}
	}
	if len(list) != 1 || list[0].Channel != "messenger" || list[0].AccountID != "3000003" {
		t.Errorf("refused PUTs stored connections: %v", list)
	}
}

// TestChannelTokenNeverShown: the access token put with PUT appears in no
// response (PUT, GET, DELETE, errors), no log line of the handler or the
// service (at debug level), and no audit event.
func TestChannelTokenNeverShown(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := setupOn(t, memstore.New(), &messaging.Options{Logger: log}, func(o *httpapi.Options) { o.Logger = log })
	const token = "EAAGneverShownToken7781"
	var bodies []string
	for _, rq := range []struct{ method, path, body string }{
		{"PUT", "/v1/channels/whatsapp", `{"phone_number_id":"1065","waba_id":"1022","access_token":"` + token + `"}`},
		{"PUT", "/v1/channels/whatsapp", `{"phone_number_id":"1065","waba_id":"1022","page_id":"9","access_token":"` + token + `"}`},
		{"PUT", "/v1/channels/whatsapp", `{"phone_number_id":"1065","waba_id":"1022","access_token":"` + token + `","extra":"` + token + `"}`},
		{"PUT", "/v1/channels/sms", `{"access_token":"` + token + `"}`},
		{"GET", "/v1/channels", ""},
		{"POST", "/v1/messages", `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi"}`},
		{"DELETE", "/v1/channels/whatsapp", ""},
	} {
		var body any
		if rq.body != "" {
			body = rq.body
		}
		bodies = append(bodies, string(e.call(t, rq.method, rq.path, "A", body).body))
	}
	if !strings.Contains(bodies[0], `"credential_hint":"7781"`) {
		t.Fatalf("the PUT answer lacks the hint: %s", bodies[0])
	}
	if _, err := e.svc.DispatchDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	events, _, err := e.svc.AuditEvents(context.Background(), e.A.ID, "", record.MaxAuditPage)
	if err != nil {
		t.Fatal(err)
	}
	var audit strings.Builder
	for _, ev := range events {
		audit.WriteString(ev.Action + " " + ev.Target + " " + ev.Actor + "\n")
	}
	if !strings.Contains(audit.String(), "channel") || !strings.Contains(logs.String(), "/v1/channels/whatsapp") {
		t.Fatalf("the audit events or logs lack the session:\n%s\n%s", audit.String(), logs.String())
	}
	// The token, and any 8 characters of it but the hint, never show.
	for where, hay := range map[string]string{"a response": strings.Join(bodies, "\n"), "the logs": logs.String(), "the audit events": audit.String()} {
		for i := 0; i+8 <= len(token)-4; i++ {
			if strings.Contains(hay, token[i:i+8]) {
				t.Errorf("%s holds %q of the token:\n%s", where, token[i:i+8], hay)
				break
			}
		}
	}
}
