package dashboard_test

import (
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// draftForm is a valid authoring form: a text header with a variable, a
// body with two, a footer and two buttons.
func draftForm(name string) url.Values {
	return url.Values{
		"name": {name}, "language": {"en"}, "category": {"UTILITY"},
		"header_format": {"TEXT"}, "header_text": {"Order {{1}}"}, "header_example": {"#42"},
		"body":           {"Hi {{1}}, your order ships on {{2}}."},
		"body_example_1": {"Ann"}, "body_example_2": {"Monday"},
		"footer":        {"Reply STOP to opt out"},
		"button_type_1": {"QUICK_REPLY"}, "button_text_1": {"Thanks"},
		"button_type_2": {"URL"}, "button_text_2": {"Track"}, "button_value_2": {"https://shop.example/track/{{1}}"},
	}
}

// templateByName returns acme's template called name, in any state.
func (f *fixture) templateByName(name string) *messaging.Template {
	f.t.Helper()
	list, err := f.svc.Workspace("acme").Templates.List(f.ctx, &messaging.TemplateFilter{Status: record.TemplateStatusAny})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, t := range list {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// review applies the fake provider's pending review results.
func (f *fixture) review() {
	f.t.Helper()
	f.prov.SetSink(f.svc)
	if _, err := f.prov.Flush(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

// TestTemplateLifecycle: a draft authored through the form appears as a
// draft, submit makes it pending, the fake provider's review approves it,
// and the list and its page show each state.
func TestTemplateLifecycle(t *testing.T) {
	f := setup(t)
	r := f.post("/w/acme/templates/new", draftForm("order_update"))
	tpl := f.templateByName("order_update")
	if tpl == nil {
		t.Fatalf("the form stored no template (status %d):\n%s", r.status, r.body)
	}
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/templates/"+tpl.ID {
		t.Fatalf("create answered %d to %q; want 303 to the template", r.status, r.location)
	}
	if tpl.Status != record.TemplateDraft {
		t.Errorf("the form stored a %s template; want a draft", tpl.Status)
	}
	want := []messaging.TemplateComponent{
		{Type: "HEADER", Format: "TEXT", Text: "Order {{1}}", Examples: []string{"#42"}},
		{Type: "BODY", Text: "Hi {{1}}, your order ships on {{2}}.", Examples: []string{"Ann", "Monday"}},
		{Type: "FOOTER", Text: "Reply STOP to opt out"},
		{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "QUICK_REPLY", Text: "Thanks"}, {Type: "URL", Text: "Track", URL: "https://shop.example/track/{{1}}"}}},
	}
	if d := cmp.Diff(want, tpl.Components); d != "" {
		t.Errorf("stored components (-want +got):\n%s", d)
	}
	f.get("/w/acme/templates").wantContains(t, "order_update", `<span class="badge st-draft">draft</span>`)
	page := f.get("/w/acme/templates/" + tpl.ID)
	page.wantContains(t, "Submit for review", "Edit draft", `<mark class="var" title="variable {{1}}">Ann</mark>`,
		"&#34;template_name&#34;: &#34;order_update&#34;", "Reply STOP to opt out", "Delete template", `data-confirm=`)

	r = f.post("/w/acme/templates/"+tpl.ID+"/submit", nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("submit answered %d:\n%s", r.status, r.body)
	}
	if got := f.templateByName("order_update").Status; got != record.TemplatePending {
		t.Fatalf("after submit the template is %s; want pending", got)
	}
	list := f.get("/w/acme/templates")
	list.wantContains(t, `<span class="badge st-pending">pending</span>`, `data-refresh="/dashboard/w/acme/templates"`)
	if r := f.post("/w/acme/templates/"+tpl.ID+"/submit", nil); r.status != http.StatusConflict || !strings.Contains(r.body, "only a draft can be submitted") {
		t.Errorf("a second submit answered %d; want 409 with the library's message", r.status)
	}

	f.review()
	list = f.get("/w/acme/templates")
	list.wantContains(t, `<span class="badge st-approved">approved</span>`, `data-final="true"`)
	if strings.Contains(list.body, "data-refresh") {
		t.Error("the list still refreshes with no template pending")
	}
	page = f.get("/w/acme/templates/" + tpl.ID)
	page.wantContains(t, "Send a test", `name="to" value="&#43;14155550123"`, `name="p_1_0" value="Ann"`)
	if strings.Contains(page.body, "Submit for review") || strings.Contains(page.body, "Edit draft") {
		t.Error("an approved template offers submit or edit")
	}
	if r := f.get("/w/acme/templates?status=approved"); !strings.Contains(r.body, "order_update") {
		t.Error("the approved filter lacks the approved template")
	}
	if r := f.get("/w/acme/templates?status=draft"); strings.Contains(r.body, "order_update") {
		t.Error("the draft filter lists an approved template")
	}
	if r := f.get("/w/acme/templates?status=live"); r.status != http.StatusOK || !strings.Contains(r.body, "status: must be one of draft, pending") || !strings.Contains(r.body, "order_update") {
		t.Errorf("an unknown status filter answered %d without the library's message and the full list", r.status)
	}
}

// TestTemplateRejectedShowsReason: the provider's rejection reason is on
// the list and the template's page.
func TestTemplateRejectedShowsReason(t *testing.T) {
	f := setup(t)
	f.post("/w/acme/templates/new", draftForm(fakeprovider.RejectPrefix+"promo"))
	tpl := f.templateByName(fakeprovider.RejectPrefix + "promo")
	if tpl == nil {
		t.Fatal("no draft stored")
	}
	f.post("/w/acme/templates/"+tpl.ID+"/submit", nil)
	f.review()
	f.get("/w/acme/templates").wantContains(t, `<span class="badge st-rejected">rejected</span>`, fakeprovider.ReasonInvalidFormat)
	f.get("/w/acme/templates/"+tpl.ID).wantContains(t, "Rejected:", fakeprovider.ReasonInvalidFormat)
}

// TestTemplateFormErrors: the library's messages are shown next to the
// field they name, with 422, and nothing is stored.
func TestTemplateFormErrors(t *testing.T) {
	for _, tc := range []struct {
		name, field, value, errID, msg string
	}{
		{"bad name", "name", "Order Update", "err-name", "name: must hold only lowercase letters"},
		{"gap in variables", "body", "Hi {{1}}, see {{3}}", "err-body", "variables must be numbered {{1}} to {{2}} without gaps"},
		{"long footer", "footer", strings.Repeat("x", 61), "err-footer", "at most 60"},
		{"bad url", "button_value_2", "ftp://x", "err-button_value_2", ".url: "},
		{"bad language", "language", "english", "err-language", "language: must be one language code"},
		{"blank example", "body_example_2", " ", "err-body_example_2", "components[1].examples[1]: is required: a sample value of {{2}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			form := draftForm("order_update")
			form.Set(tc.field, tc.value)
			if tc.field == "name" {
				form.Set("name", tc.value)
			}
			r := f.post("/w/acme/templates/new", form)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("answered %d; want 422", r.status)
			}
			re := regexp.MustCompile(`<p class="error" id="` + tc.errID + `" >([^<]*)</p>`)
			m := re.FindStringSubmatch(r.body)
			if m == nil || !strings.Contains(htmlUnescape(m[1]), tc.msg) {
				t.Errorf("no error %q next to %s; page:\n%s", tc.msg, tc.errID, r.body)
			}
			if strings.Contains(r.body, `id="form-problem" >`) {
				t.Error("the field's error is shown above the form too")
			}
			r.wantContains(t, `value="`+htmlEscape(form.Get("header_text"))+`"`)
			list, _ := f.svc.Workspace("acme").Templates.List(f.ctx, &messaging.TemplateFilter{Status: record.TemplateStatusAny})
			if len(list) != 0 {
				t.Errorf("a refused form stored %d templates", len(list))
			}
		})
	}
}

// TestTemplateCheckEndpoint: the check runs the library's rules without
// storing: a bad body answers its message under "body", a good form no
// errors and the preview with the examples typed.
func TestTemplateCheckEndpoint(t *testing.T) {
	f := setup(t)
	form := draftForm("order_update")
	form.Set("body", "Hi {{2}}")
	r := f.post("/w/acme/templates/check", form)
	if r.status != http.StatusOK {
		t.Fatalf("check answered %d:\n%s", r.status, r.body)
	}
	var got struct {
		OK       bool              `json:"ok"`
		Errors   map[string]string `json:"errors"`
		Preview  string            `json:"preview"`
		BodyVars []int             `json:"body_vars"`
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Fatalf("check answered no JSON: %v\n%s", err, r.body)
	}
	_, libErr := f.svc.Workspace("acme").Templates.Create(f.ctx, &messaging.TemplateCreateParams{Name: "x", Category: "UTILITY", Language: "en", Status: record.TemplateDraft,
		Components: []messaging.TemplateComponent{{Type: "HEADER", Format: "TEXT", Text: "Order {{1}}"}, {Type: "BODY", Text: "Hi {{2}}"}}})
	var e *messaging.Error
	if !asErr(libErr, &e) {
		t.Fatalf("the library accepted the bad body: %v", libErr)
	}
	if got.OK || got.Errors["body"] != e.Message {
		t.Errorf("check = ok %v, errors %v; want the library's %q under body", got.OK, got.Errors, e.Message)
	}

	form = draftForm("order_update")
	r = f.post("/w/acme/templates/check", form)
	got.Errors = nil
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Fatal(err)
	}
	if !got.OK || len(got.Errors) != 0 {
		t.Errorf("a valid form checked as ok %v, errors %v", got.OK, got.Errors)
	}
	if d := cmp.Diff([]int{1, 2}, got.BodyVars); d != "" {
		t.Errorf("body vars (-want +got):\n%s", d)
	}
	for _, part := range []string{`<mark class="var" title="variable {{1}}">Ann</mark>`, `<mark class="var" title="variable {{2}}">Monday</mark>`, `#42`, "Track"} {
		if !strings.Contains(htmlUnescape(got.Preview), part) {
			t.Errorf("preview lacks %q:\n%s", part, got.Preview)
		}
	}
	if list, _ := f.svc.Workspace("acme").Templates.List(f.ctx, &messaging.TemplateFilter{Status: record.TemplateStatusAny}); len(list) != 0 {
		t.Errorf("the check stored %d templates", len(list))
	}
	// Another site cannot use the check (it is a POST like the forms).
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/dashboard/w/acme/templates/check", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	if r := f.do(req); r.status != http.StatusForbidden {
		t.Errorf("a cross-site check answered %d; want 403", r.status)
	}
	// Typed text is escaped in the preview.
	form.Set("body", "<script>alert(1)</script>")
	r = f.post("/w/acme/templates/check", form)
	if strings.Contains(r.body, "<script>") {
		t.Error("the preview holds the typed markup unescaped")
	}
}

// TestTemplateEdit: a draft is edited through the form; a submitted one
// is refused with the library's conflict message.
func TestTemplateEdit(t *testing.T) {
	f := setup(t)
	f.post("/w/acme/templates/new", draftForm("order_update"))
	tpl := f.templateByName("order_update")
	f.get("/w/acme/templates/"+tpl.ID+"/edit").wantContains(t, `value="order_update"`, "Hi {{1}}, your order ships on {{2}}.",
		`value="https://shop.example/track/{{1}}"`, `name="body_example_2" value="Monday"`, `name="header_example" value="#42"`)
	form := draftForm("order_update")
	form.Set("body", "Hello {{1}}")
	// Examples are optional: none given, none stored (and the stale
	// second one of a variable gone is not sent).
	form.Set("body_example_1", "")
	if r := f.post("/w/acme/templates/"+tpl.ID+"/edit", form); r.status != http.StatusSeeOther {
		t.Fatalf("edit answered %d:\n%s", r.status, r.body)
	}
	if got := f.templateByName("order_update").Components[1]; got.Text != "Hello {{1}}" || got.Examples != nil {
		t.Errorf("body after edit = %q with examples %q; want no examples", got.Text, got.Examples)
	}
	f.post("/w/acme/templates/"+tpl.ID+"/submit", nil)
	form.Set("body", "Changed")
	r := f.post("/w/acme/templates/"+tpl.ID+"/edit", form)
	if r.status != http.StatusConflict {
		t.Fatalf("editing a pending template answered %d; want 409", r.status)
	}
	r.wantContains(t, "status: the template is pending; only a draft can be edited")
	if r := f.get("/w/acme/templates/" + tpl.ID + "/edit"); r.status != http.StatusConflict || !strings.Contains(r.body, "only a draft can be edited") {
		t.Errorf("the edit form of a pending template answered %d without saying it cannot be edited", r.status)
	}
	if got := f.templateByName("order_update").Components[1].Text; got != "Hello {{1}}" {
		t.Errorf("the refused edit changed the body to %q", got)
	}
}

// TestTemplateDelete: delete removes the template and goes back to the
// list.
func TestTemplateDelete(t *testing.T) {
	f := setup(t)
	f.post("/w/acme/templates/new", draftForm("order_update"))
	tpl := f.templateByName("order_update")
	r := f.post("/w/acme/templates/"+tpl.ID+"/delete", nil)
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/templates" {
		t.Fatalf("delete answered %d to %q", r.status, r.location)
	}
	if f.templateByName("order_update") != nil {
		t.Error("the template is still there")
	}
}

// TestTemplateSendTest: the test form sends the approved template through
// Messages.SendTemplate with the parameters typed and opens the message's
// page; a bad recipient is shown next to its field.
func TestTemplateSendTest(t *testing.T) {
	f := setup(t)
	f.post("/w/acme/templates/new", draftForm("order_update"))
	tpl := f.templateByName("order_update")
	draft := url.Values{"to": {"+254712345678"}, "p_0_0": {"#7"}, "p_1_0": {"Ann"}, "p_1_1": {"Friday"}, "p_2_0": {"abc"}}
	r := f.post("/w/acme/templates/"+tpl.ID+"/send", draft)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `class="problem" role="alert">template`) {
		t.Errorf("sending a draft answered %d without the library's refusal:\n%s", r.status, r.body)
	}
	if n := f.countMessages(); n != 0 {
		t.Errorf("sending a draft stored %d messages", n)
	}
	f.post("/w/acme/templates/"+tpl.ID+"/submit", nil)
	f.review()

	bad := url.Values{"to": {"12"}, "p_0_0": {"#7"}, "p_1_0": {"Ann"}, "p_1_1": {"Friday"}, "p_2_0": {"abc"}}
	r = f.post("/w/acme/templates/"+tpl.ID+"/send", bad)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad recipient answered %d; want 422:\n%s", r.status, r.body)
	}
	r.wantContains(t, `id="test-to-err">to: `, `name="p_1_1" value="Friday"`)
	if n := f.countMessages(); n != 0 {
		t.Errorf("a refused test stored %d messages", n)
	}

	good := url.Values{"to": {"+254712345678"}, "p_0_0": {"#7"}, "p_1_0": {"Ann"}, "p_1_1": {"Friday"}, "p_2_0": {"abc"}}
	r = f.post("/w/acme/templates/"+tpl.ID+"/send", good)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/dashboard/w/acme/messages/") {
		t.Fatalf("send answered %d to %q; want 303 to the message:\n%s", r.status, r.location, r.body)
	}
	id := strings.TrimPrefix(r.location, "/dashboard/w/acme/messages/")
	m, err := f.svc.Workspace("acme").Messages.Get(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.To != "+254712345678" || m.TemplateName != "order_update" {
		t.Errorf("message = to %q template %q", m.To, m.TemplateName)
	}
	var texts []string
	for _, c := range m.Components {
		for _, p := range c.Parameters {
			texts = append(texts, p.Text)
		}
	}
	if d := cmp.Diff([]string{"#7", "Ann", "Friday", "abc"}, texts); d != "" {
		t.Errorf("sent parameters (-want +got):\n%s", d)
	}
}

// TestTemplateOtherWorkspace: another workspace's template is not found,
// for reading and for every action.
func TestTemplateOtherWorkspace(t *testing.T) {
	f := setup(t)
	other, err := f.svc.Workspace("other").Templates.Create(f.ctx, &messaging.TemplateCreateParams{Name: "secret_tpl", Category: "UTILITY", Language: "en",
		Status: record.TemplateDraft, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/w/acme/templates/" + other.ID, "/w/acme/templates/" + other.ID + "/edit"} {
		if r := f.get(path); r.status != http.StatusNotFound {
			t.Errorf("GET %s answered %d; want 404", path, r.status)
		}
	}
	for _, action := range []string{"submit", "delete", "edit", "send"} {
		if r := f.post("/w/acme/templates/"+other.ID+"/"+action, draftForm("x")); r.status != http.StatusNotFound {
			t.Errorf("POST %s answered %d; want 404", action, r.status)
		}
	}
	if got, err := f.svc.Workspace("other").Templates.Get(f.ctx, other.ID); err != nil || got.Status != record.TemplateDraft || got.Name != "secret_tpl" {
		t.Errorf("other's template after the refused actions = %+v, %v", got, err)
	}
	if strings.Contains(f.get("/w/acme/templates").body, "secret_tpl") {
		t.Error("acme's list shows other's template")
	}
	f.as = "acme"
	if r := f.get("/w/other/templates"); r.status != http.StatusNotFound {
		t.Errorf("a viewer of acme opening other's templates got %d; want 404", r.status)
	}
}

func (f *fixture) countMessages() int {
	f.t.Helper()
	pg, err := f.svc.Workspace("acme").Messages.List(f.ctx, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(pg.Items)
}

func asErr(err error, e **messaging.Error) bool { return errors.As(err, e) }

func htmlUnescape(s string) string { return html.UnescapeString(s) }

func htmlEscape(s string) string { return html.EscapeString(s) }

// TestTemplateFormButtonLimit: a fourth quick reply is refused with the
// library's limit, shown over the buttons, and nothing is stored.
func TestTemplateFormButtonLimit(t *testing.T) {
	f := setup(t)
	form := draftForm("order_update")
	for _, n := range []string{"3", "4", "5"} {
		form.Set("button_type_"+n, "QUICK_REPLY")
		form.Set("button_text_"+n, "Reply "+n)
	}
	r := f.post("/w/acme/templates/new", form)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("four quick replies answered %d; want 422", r.status)
	}
	r.wantContains(t, `<p class="error" id="err-buttons" >components[3].buttons: at most 3 QUICK_REPLY buttons</p>`)
	if f.templateByName("order_update") != nil {
		t.Error("the refused form stored a template")
	}
}
