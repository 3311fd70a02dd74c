package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
)

// keywordLists reads the keyword lists of a workspace JSON.
func keywordLists(t *testing.T, body []byte) (out, in []string, policy string) {
	t.Helper()
	var w struct {
		Out    []string `json:"opt_out_keywords"`
		In     []string `json:"opt_in_keywords"`
		Policy string   `json:"outside_window"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("workspace JSON %s: %v", body, err)
	}
	return w.Out, w.In, w.Policy
}

// TestWorkspaceKeywords: a workspace whose operator replaced the keyword
// lists (PATCH, audited) opts out on its own keyword, given in any case
// and spacing, and no longer on a removed default (STOP), opts back in on
// its own opt-in keyword and no longer on START; the other workspace keeps
// the defaults; an empty list restores them. The lists show folded.
func TestWorkspaceKeywords(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = opToken })
	ctx := context.Background()
	const phone = "+254712345678"
	n := 0
	inbound := func(ws, text string) {
		t.Helper()
		n++
		e.clock.Advance(time.Second)
		if _, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: ws, Channel: "whatsapp", From: phone[1:],
			ProviderMessageID: fmt.Sprintf("wamid.cw%d", n), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	sendStatus := func(key string) int {
		t.Helper()
		r := e.do(t, request{method: "POST", path: "/v1/messages", key: key, body: `{"channel":"whatsapp","to":"` + phone + `","type":"text","text":"Hello"}`})
		if r.status != 201 && (r.env == nil || r.env.Error.Code != "recipient_opted_out") {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		return r.status
	}
	patch := func(body string) *response {
		return e.do(t, request{method: "PATCH", path: "/admin/v1/workspaces/ws_a", headers: hdr("Authorization", "Bearer "+opToken), body: body})
	}

	r := e.do(t, request{method: "GET", path: "/admin/v1/workspaces/ws_a", headers: hdr("Authorization", "Bearer "+opToken)})
	out, in, _ := keywordLists(t, r.body)
	if d := cmp.Diff([]string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "SITISHA"}, out); d != "" {
		t.Errorf("default opt_out_keywords (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"START", "UNSTOP", "ANZA"}, in); d != "" {
		t.Errorf("default opt_in_keywords (-want +got):\n%s", d)
	}

	r = patch(`{"opt_out_keywords":["halt"," Basta ya ","` + strings.Repeat("x y", 16) + `"],"opt_in_keywords":["Resume"]}`)
	if r.status != 200 {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	out, in, policy := keywordLists(t, r.body)
	want := []string{"HALT", "BASTAYA", strings.Repeat("XY", 16)}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("opt_out_keywords after PATCH (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"RESUME"}, in); d != "" {
		t.Errorf("opt_in_keywords after PATCH (-want +got):\n%s", d)
	}
	if policy != "provider" {
		t.Errorf("outside_window = %q after a PATCH of the keywords; want it left as provider", policy)
	}
	events, _, err := e.svc.AuditEvents(ctx, "ws_a", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Action != record.AuditWorkspaceUpdated || events[0].Actor != httpapi.ActorOperator {
		t.Errorf("last audit event of ws_a: %+v; want workspace.updated by the operator", events)
	}

	steps := []struct {
		ws, text string
		want     int
	}{
		{"ws_a", "STOP", 201},           // a removed default
		{"ws_a", "  b A s T a ya", 422}, // the workspace's own
		{"ws_a", "START", 422},          // a removed default opt-in
		{"ws_a", "resume", 201},
		{"ws_a", "HALT", 422},
		{"ws_a", "ANZA", 422},
		{"ws_a", "Resume ", 201},
	}
	for i, s := range steps {
		inbound(s.ws, s.text)
		if got := sendStatus(e.A.Full); got != s.want {
			t.Errorf("step %d: after %q, a send answers %d; want %d", i, s.text, got, s.want)
		}
	}
	inbound("ws_b", "stop")
	if got := sendStatus(e.B.Full); got != 422 {
		t.Errorf("the other workspace after STOP: %d; want 422 (the defaults)", got)
	}

	r = patch(`{"opt_out_keywords":[],"opt_in_keywords":[]}`)
	if out, in, _ := keywordLists(t, r.body); r.status != 200 || len(out) != 7 || len(in) != 3 {
		t.Fatalf("PATCH restoring the defaults: %d %s", r.status, r.body)
	}
	inbound("ws_a", "Stop")
	if got := sendStatus(e.A.Full); got != 422 {
		t.Errorf("STOP after the defaults came back: %d; want 422", got)
	}
}

// TestWorkspaceKeywordsRefused: a bad keyword list is refused at creation
// and by PATCH with 400 validation_error naming the field (the keyword's
// index where one is at fault), and nothing is stored: the workspace is
// not created, and a PATCH changes none of its settings.
func TestWorkspaceKeywordsRefused(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = opToken })
	auth := hdr("Authorization", "Bearer "+opToken)
	patch := func(body string) *response {
		return e.do(t, request{method: "PATCH", path: "/admin/v1/workspaces/ws_a", headers: auth, body: body})
	}
	if r := patch(`{"opt_out_keywords":["HALT"],"opt_in_keywords":["GO"]}`); r.status != 200 {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	fifty := make([]string, 51)
	for i := range fifty {
		fifty[i] = fmt.Sprintf("K%d", i)
	}
	many, _ := json.Marshal(fifty)
	for _, c := range []struct{ name, body, field string }{
		{"blank keyword", `{"opt_out_keywords":["OK"," \t "]}`, "opt_out_keywords[1]"},
		{"empty keyword", `{"opt_in_keywords":[""]}`, "opt_in_keywords[0]"},
		{"33 characters", `{"opt_out_keywords":["` + strings.Repeat("a", 33) + `"]}`, "opt_out_keywords[0]"},
		{"control character", `{"opt_out_keywords":["A\u0007B"]}`, "opt_out_keywords[0]"},
		{"duplicate once folded", `{"opt_out_keywords":["halt","no","H A L T"]}`, "opt_out_keywords[2]"},
		{"51 keywords", `{"opt_out_keywords":` + string(many) + `}`, "opt_out_keywords"},
		{"in both lists", `{"opt_out_keywords":["X"],"opt_in_keywords":["y","x"]}`, "opt_in_keywords[1]"},
		{"opt-in is a kept opt-out", `{"opt_in_keywords":["halt"]}`, "opt_in_keywords[0]"},
		{"opt-out is a kept opt-in", `{"opt_out_keywords":["STOP","go"]}`, "opt_out_keywords[1]"},
		{"own list before the defaults", `{"opt_out_keywords":["START"],"opt_in_keywords":[]}`, "opt_out_keywords[0]"},
		{"good policy, bad list", `{"outside_window":"reject","opt_out_keywords":["A","a"]}`, "opt_out_keywords[1]"},
		{"not a list", `{"opt_out_keywords":"STOP"}`, "opt_out_keywords"},
		{"nothing to change", `{}`, "body"},
	} {
		r := patch(c.body)
		if r.status != 400 || r.env == nil || r.env.Error.Code != "validation_error" || r.env.Error.Field != c.field {
			t.Errorf("%s: %d %s; want 400 validation_error naming %s", c.name, r.status, r.body, c.field)
		}
	}
	r := e.do(t, request{method: "GET", path: "/admin/v1/workspaces/ws_a", headers: auth})
	out, in, policy := keywordLists(t, r.body)
	if d := cmp.Diff([]any{[]string{"HALT"}, []string{"GO"}, "provider"}, []any{out, in, policy}); d != "" {
		t.Errorf("settings after the refused PATCHes (-want +got):\n%s", d)
	}
	// Restoring the default opt-in keywords is refused while START is an
	// opt-out keyword of the workspace; the field has no index.
	if r := patch(`{"opt_out_keywords":["HALT","START"]}`); r.status != 200 {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	r = patch(`{"opt_in_keywords":[]}`)
	if r.status != 400 || r.env == nil || r.env.Error.Field != "opt_in_keywords" || !strings.Contains(r.env.Error.Message, "START") {
		t.Errorf("defaults clashing with the kept opt-out list: %d %s; want 400 naming opt_in_keywords and START", r.status, r.body)
	}

	for _, c := range []struct{ name, body, field string }{
		{"duplicate", `{"id":"kw1","opt_in_keywords":["go","GO"]}`, "opt_in_keywords[1]"},
		{"a default opt-in", `{"id":"kw2","opt_out_keywords":["QUIT","unstop"]}`, "opt_out_keywords[1]"},
		{"too long", `{"id":"kw3","opt_in_keywords":["` + strings.Repeat("é", 33) + `"]}`, "opt_in_keywords[0]"},
	} {
		r := e.do(t, request{method: "POST", path: "/admin/v1/workspaces", headers: auth, body: c.body})
		if r.status != 400 || r.env == nil || r.env.Error.Field != c.field {
			t.Errorf("create, %s: %d %s; want 400 naming %s", c.name, r.status, r.body, c.field)
		}
		var id struct{ ID string }
		_ = json.Unmarshal([]byte(c.body), &id)
		if r := e.do(t, request{method: "GET", path: "/admin/v1/workspaces/" + id.ID, headers: auth}); r.status != 404 {
			t.Errorf("create, %s: the workspace was stored (%d)", c.name, r.status)
		}
	}
	r = e.do(t, request{method: "POST", path: "/admin/v1/workspaces", headers: auth, body: `{"id":"kw4","opt_out_keywords":["Acha"," quit "]}`})
	out, in, _ = keywordLists(t, r.body)
	if r.status != 201 || !cmp.Equal(out, []string{"ACHA", "QUIT"}) || len(in) != 3 {
		t.Errorf("create with keywords: %d %s", r.status, r.body)
	}
}
