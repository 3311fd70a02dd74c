package dashboard

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// Settings -> Workspace: what a free-form send outside the
// customer-service window gets, what becomes of a send whose outcome stays
// unknown, and the opt-out and opt-in keywords, as
// PATCH /admin/v1/workspaces/{id} sets them (Service.SetWorkspaceSettings,
// with its rules and messages). Every viewer of the workspace sees them;
// only an operator may change them, as only the operator token may through
// the API.

// settingsView is the settings page's data.
type settingsView struct {
	// OutsideWindow is the selected policy: the one in force, or the
	// refused form's value.
	OutsideWindow string
	// Policies are the choices of the policy select.
	Policies []policyChoice
	// UnconfirmedSends is the selected policy for sends whose outcome
	// stays unknown: the one in force, or the refused form's value.
	UnconfirmedSends string
	// UnconfirmedPolicies are the choices of its select.
	UnconfirmedPolicies []policyChoice
	// WindowHours is the length of the customer-service window.
	WindowHours int
	// OptOut and OptIn are the values of the keyword inputs: the
	// workspace's own lists, comma-separated (empty: the defaults).
	OptOut, OptIn string
	// ActiveOptOut and ActiveOptIn are the lists in force.
	ActiveOptOut, ActiveOptIn string
	// DefaultOptOut and DefaultOptIn are the library's defaults.
	DefaultOptOut, DefaultOptIn string
}

// policyChoice is one choice of a policy select.
type policyChoice struct{ Value, Label string }

// policyChoices returns the library's outside-window policies, in the
// order the page offers them.
func policyChoices() []policyChoice {
	return []policyChoice{
		{record.OutsideWindowProvider, "Provider refuses"},
		{record.OutsideWindowReject, "Refused here"},
	}
}

// unconfirmedChoices returns the library's policies for sends whose
// outcome stays unknown, in the order the page offers them.
func unconfirmedChoices() []policyChoice {
	return []policyChoice{
		{record.UnconfirmedResend, "Send again"},
		{record.UnconfirmedFail, "Fail the message"},
	}
}

func (h *Handler) settings(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.renderSettings(w, r, req, &page{}, http.StatusOK)
}

func (h *Handler) renderSettings(w http.ResponseWriter, r *http.Request, req *request, p *page, status int) error {
	p.Title, p.Nav = "Workspace settings", "settings"
	p.fill(h, req)
	ws := req.ws
	v := &settingsView{OutsideWindow: ws.ActiveOutsideWindow(), Policies: policyChoices(),
		UnconfirmedSends: ws.ActiveUnconfirmedSends(), UnconfirmedPolicies: unconfirmedChoices(),
		WindowHours: int(record.CustomerServiceWindow / time.Hour),
		OptOut:      strings.Join(ws.OptOutKeywords, ", "), OptIn: strings.Join(ws.OptInKeywords, ", "),
		ActiveOptOut: strings.Join(ws.ActiveOptOutKeywords(), ", "), ActiveOptIn: strings.Join(ws.ActiveOptInKeywords(), ", "),
		DefaultOptOut: strings.Join(record.OptOutKeywords(), ", "), DefaultOptIn: strings.Join(record.OptInKeywords(), ", ")}
	if p.Form != nil {
		v.OutsideWindow, v.OptOut, v.OptIn = p.Form.Get("outside_window"), p.Form.Get("opt_out_keywords"), p.Form.Get("opt_in_keywords")
		if p.Form.Has("unconfirmed_sends") {
			v.UnconfirmedSends = p.Form.Get("unconfirmed_sends")
		}
	}
	return h.renderData(w, r, status, "settings", p, v)
}

// saveSettings stores the form's settings at once; a refused one stores
// nothing and is shown by its field. A form without unconfirmed_sends
// (one a page of an earlier version rendered) leaves that setting.
func (h *Handler) saveSettings(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	f := r.PostForm
	policy := f.Get("outside_window")
	out, in := keywordsOf(f.Get("opt_out_keywords")), keywordsOf(f.Get("opt_in_keywords"))
	set := &messaging.WorkspaceSettings{OutsideWindow: &policy, OptOutKeywords: &out, OptInKeywords: &in}
	if f.Has("unconfirmed_sends") {
		unconfirmed := f.Get("unconfirmed_sends")
		set.UnconfirmedSends = &unconfirmed
	}
	_, err := h.svc.SetWorkspaceSettings(req.ctx, req.ws.ID, set)
	if err != nil {
		// "opt_out_keywords[2]" is shown by the list's input; the message
		// names the keyword.
		var e *messaging.Error
		if errors.As(err, &e) {
			if len(e.Path) > 1 {
				whole := *e
				whole.Path = e.Path[:1]
				whole.Field = whole.Path.String()
				err = &whole
			}
		}
		p := &page{Form: f}
		if messaging.ErrorCode(err) == messaging.CodeNotFound || !p.fieldError(err) {
			return err
		}
		return h.renderSettings(w, r, req, p, http.StatusUnprocessableEntity)
	}
	h.flash(w, "Workspace settings saved.")
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/settings", http.StatusSeeOther)
	return nil
}

// keywordsOf splits a keyword input on commas and line breaks; an empty
// input is an empty list (the defaults).
func keywordsOf(s string) []string {
	list := []string{}
	for _, k := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if k = strings.TrimSpace(k); k != "" {
			list = append(list, k)
		}
	}
	return list
}
