package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"
)

// TestSettingsUnconfirmedSends: the settings page shows the policy for
// sends whose outcome stays unknown (resend by default), an operator
// changes it with the other settings, a form without it leaves it, a bad
// value is shown by its field and stores nothing, and a viewer who is not
// an operator sees it disabled.
func TestSettingsUnconfirmedSends(t *testing.T) {
	f := setup(t)
	stored := func() string {
		t.Helper()
		ws, err := f.svc.GetWorkspace(f.ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		return ws.UnconfirmedSends
	}
	f.get("/w/acme/settings").wantContains(t, `<label for="unconfirmed_sends">`, `<option value="resend" selected>Send again</option>`,
		`<option value="fail" >Fail the message</option>`)

	r := f.post("/w/acme/settings", url.Values{"outside_window": {"provider"}, "unconfirmed_sends": {"fail"}, "opt_out_keywords": {""}, "opt_in_keywords": {""}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("save answered %d:\n%s", r.status, r.body)
	}
	if got := stored(); got != record.UnconfirmedFail {
		t.Fatalf("stored %q; want fail", got)
	}
	f.get("/w/acme/settings").wantContains(t, `<option value="fail" selected>Fail the message</option>`, `<option value="resend" >`)

	if r := f.post("/w/acme/settings", url.Values{"outside_window": {"reject"}}); r.status != http.StatusSeeOther {
		t.Fatalf("a form without unconfirmed_sends answered %d:\n%s", r.status, r.body)
	}
	if got := stored(); got != record.UnconfirmedFail {
		t.Errorf("a form without unconfirmed_sends stored %q; want fail left", got)
	}

	r = f.post("/w/acme/settings", url.Values{"outside_window": {"provider"}, "unconfirmed_sends": {"twice"}, "opt_out_keywords": {"halt"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad policy answered %d; want 422:\n%s", r.status, r.body)
	}
	r.wantContains(t, `id="unconfirmed_sends-err">`+htmlEscape(`unconfirmed_sends: must be resend or fail (got "twice")`))
	ws, err := f.svc.GetWorkspace(f.ctx, "acme")
	if err != nil || ws.UnconfirmedSends != record.UnconfirmedFail || ws.OutsideWindow != record.OutsideWindowReject || len(ws.OptOutKeywords) != 0 {
		t.Errorf("the refused form stored something: %+v, %v", ws, err)
	}

	if r := f.post("/w/acme/settings", url.Values{"outside_window": {"reject"}, "unconfirmed_sends": {"resend"}}); r.status != http.StatusSeeOther {
		t.Fatalf("back to resend answered %d:\n%s", r.status, r.body)
	}
	if got := stored(); got != "" {
		t.Errorf("after choosing resend, stored %q; want the default (empty)", got)
	}

	f.as = "acme"
	page := f.get("/w/acme/settings")
	page.wantContains(t, `name="unconfirmed_sends" aria-describedby="unconfirmed_sends-hint" disabled`)
	if strings.Contains(page.body, "Save settings") {
		t.Error("a viewer who is not an operator is offered the save button")
	}
}
