package dashboard_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// TestSettingsSaved: an operator sets the outside-window policy and the
// keyword lists in one form (Service.SetWorkspaceSettings); they are
// stored, shown again, audited, and take effect on sends.
func TestSettingsSaved(t *testing.T) {
	f := setup(t)
	r := f.get("/w/acme/settings")
	if r.status != http.StatusOK {
		t.Fatalf("settings answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, `<option value="provider" selected>`, `placeholder="STOP, STOPALL`, "Save settings", `aria-current="page">Workspace</a>`)

	r = f.post("/w/acme/settings", url.Values{"outside_window": {"reject"}, "opt_out_keywords": {"Acha, STOP\nbasi"}, "opt_in_keywords": {""}})
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/settings" {
		t.Fatalf("save answered %d to %q:\n%s", r.status, r.location, r.body)
	}
	ws, err := f.svc.GetWorkspace(f.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if ws.OutsideWindow != record.OutsideWindowReject || !slices.Equal(ws.OptOutKeywords, []string{"ACHA", "STOP", "BASI"}) || len(ws.OptInKeywords) != 0 {
		t.Fatalf("stored: outside_window %q, opt-out %q, opt-in %q", ws.OutsideWindow, ws.OptOutKeywords, ws.OptInKeywords)
	}
	page := f.get("/w/acme/settings")
	page.wantContains(t, `<option value="reject" selected>`, `value="ACHA, STOP, BASI"`)
	events, _, err := f.svc.AuditEvents(f.ctx, "acme", "", 10)
	if err != nil || len(events) == 0 || events[0].Action != record.AuditWorkspaceUpdated || events[0].Actor != "dashboard:op" {
		t.Errorf("audit = %+v, %v; want workspace.updated by dashboard:op first", events, err)
	}
	_, err = f.svc.Workspace("acme").Messages.Send(f.ctx, &messaging.SendParams{Channel: messaging.ChannelWhatsApp, To: "+254712345678", Type: "text", Text: "hi"})
	if messaging.ErrorCode(err) != messaging.CodeOutsideWindow {
		t.Errorf("a free-form send after choosing reject: %v, want outside_window", err)
	}
}

// TestSettingsRefused: the library's message is shown by the field, the
// form keeps what was sent, and nothing is stored, not even the valid
// settings of the same form.
func TestSettingsRefused(t *testing.T) {
	f := setup(t)
	for _, tt := range []struct {
		form  url.Values
		field string
		msg   string
	}{
		{url.Values{"outside_window": {"sometimes"}, "opt_out_keywords": {"acha"}}, "outside_window", "outside_window: must be provider or reject"},
		{url.Values{"outside_window": {"reject"}, "opt_out_keywords": {"stop, S T O P"}}, "opt_out_keywords", "opt_out_keywords[1]: repeats opt_out_keywords[0]"},
		{url.Values{"outside_window": {"reject"}, "opt_out_keywords": {"acha, start"}}, "opt_out_keywords", "opt_out_keywords[1]: START is also an opt-in keyword"},
		{url.Values{"outside_window": {"reject"}, "opt_in_keywords": {strings.Repeat("x", 40)}}, "opt_in_keywords", "opt_in_keywords[0]: must hold 1 to"},
	} {
		r := f.post("/w/acme/settings", tt.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("%v answered %d; want 422:\n%s", tt.form, r.status, r.body)
		}
		r.wantContains(t, `id="`+tt.field+`-err">`+htmlEscape(tt.msg))
		if v := tt.form.Get("opt_out_keywords"); v != "" {
			r.wantContains(t, `value="`+htmlEscape(v)+`"`)
		}
		ws, err := f.svc.GetWorkspace(f.ctx, "acme")
		if err != nil || ws.OutsideWindow != "" || len(ws.OptOutKeywords) != 0 || len(ws.OptInKeywords) != 0 {
			t.Fatalf("%v stored something: %+v, %v", tt.form, ws, err)
		}
	}
}

// TestSettingsOperatorOnly: a viewer who is not an operator sees the
// settings but no way to change them, and a forged post is refused.
func TestSettingsOperatorOnly(t *testing.T) {
	f := setup(t)
	f.as = "acme"
	r := f.get("/w/acme/settings")
	if r.status != http.StatusOK {
		t.Fatalf("settings answered %d", r.status)
	}
	r.wantContains(t, "Only an operator may change them.", `name="outside_window" aria-describedby="outside_window-hint" disabled`)
	if strings.Contains(r.body, "Save settings") {
		t.Error("a viewer who is not an operator is offered the save button")
	}
	if r := f.post("/w/acme/settings", url.Values{"outside_window": {"reject"}}); r.status != http.StatusForbidden {
		t.Errorf("a post by a viewer who is not an operator answered %d; want 403", r.status)
	}
	if ws, err := f.svc.GetWorkspace(f.ctx, "acme"); err != nil || ws.OutsideWindow != "" {
		t.Errorf("the refused post stored: %+v, %v", ws, err)
	}
	if r := f.get("/w/other/settings"); r.status != http.StatusNotFound {
		t.Errorf("another workspace's settings answered %d; want 404", r.status)
	}
}
