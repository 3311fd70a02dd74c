package messaging_test

import (
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// TestUnconfirmedSendsSetting: a workspace's unconfirmed_sends policy is
// resend (stored as empty) unless set; SetWorkspaceSettings and
// CreateWorkspace store fail and return it, resend stores the default
// again, a setting left nil is kept, and the other settings are kept when
// only it is given.
func TestUnconfirmedSendsSetting(t *testing.T) {
	f := setup(t)
	str := func(s string) *string { return &s }
	policy := func(w *messaging.WorkspaceInfo) [2]string {
		return [2]string{w.UnconfirmedSends, w.ActiveUnconfirmedSends()}
	}
	w, err := f.svc.GetWorkspace(f.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([2]string{"", record.UnconfirmedResend}, policy(w)); d != "" {
		t.Errorf("a new workspace (stored, active) (-want +got):\n%s", d)
	}
	reject := record.OutsideWindowReject
	if _, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{OutsideWindow: &reject}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		set  *messaging.WorkspaceSettings
		want [2]string
	}{
		{"fail", &messaging.WorkspaceSettings{UnconfirmedSends: str("fail")}, [2]string{"fail", "fail"}},
		{"other setting only", &messaging.WorkspaceSettings{OptOutKeywords: &[]string{"halt"}}, [2]string{"fail", "fail"}},
		{"resend", &messaging.WorkspaceSettings{UnconfirmedSends: str("resend")}, [2]string{"", "resend"}},
		{"fail again", &messaging.WorkspaceSettings{UnconfirmedSends: str(record.UnconfirmedFail)}, [2]string{"fail", "fail"}},
		{"empty", &messaging.WorkspaceSettings{UnconfirmedSends: str("")}, [2]string{"", "resend"}},
	} {
		got, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", c.set)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d := cmp.Diff(c.want, policy(got)); d != "" {
			t.Errorf("%s: returned (stored, active) (-want +got):\n%s", c.name, d)
		}
		stored, err := f.svc.GetWorkspace(f.ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, policy(stored)); d != "" {
			t.Errorf("%s: stored (stored, active) (-want +got):\n%s", c.name, d)
		}
		if stored.OutsideWindow != reject {
			t.Errorf("%s: outside_window %q; want reject kept", c.name, stored.OutsideWindow)
		}
	}

	w, err = f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "careful", UnconfirmedSends: record.UnconfirmedFail})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := f.svc.GetWorkspace(f.ctx, "careful")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][2]string{{"fail", "fail"}, {"fail", "fail"}}, [][2]string{policy(w), policy(stored)}); d != "" {
		t.Errorf("created with fail (returned, stored) (-want +got):\n%s", d)
	}
	if w, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "eager", UnconfirmedSends: record.UnconfirmedResend}); err != nil || w.UnconfirmedSends != "" {
		t.Errorf("created with resend: %+v, %v; want it stored as empty", w, err)
	}
}

// TestUnconfirmedSendsRefused: an unknown policy is a validation error
// naming unconfirmed_sends and the allowed values, and nothing of the
// call is stored (neither the workspace nor the call's other settings);
// a call with no setting names unconfirmed_sends among those it may give.
func TestUnconfirmedSendsRefused(t *testing.T) {
	f := setup(t)
	for _, bad := range []string{"sometimes", "Fail", " resend", "reject"} {
		reject := record.OutsideWindowReject
		_, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{OutsideWindow: &reject, UnconfirmedSends: &bad,
			OptOutKeywords: &[]string{"halt"}})
		e := wantError(t, err, messaging.CodeValidation, "unconfirmed_sends")
		if want := `unconfirmed_sends: must be resend or fail (got "` + bad + `")`; e.Message != want {
			t.Errorf("message %q; want %q", e.Message, want)
		}
		w, err := f.svc.GetWorkspace(f.ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if w.UnconfirmedSends != "" || w.OutsideWindow != "" || w.OptOutKeywords != nil {
			t.Errorf("%q: the refused call stored %+v", bad, w)
		}

		_, err = f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "careful", UnconfirmedSends: bad})
		wantError(t, err, messaging.CodeValidation, "unconfirmed_sends")
		if _, err := f.svc.GetWorkspace(f.ctx, "careful"); messaging.ErrorCode(err) != messaging.CodeNotFound {
			t.Errorf("%q: the refused workspace was stored (%v)", bad, err)
		}
	}
	_, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{})
	e := wantError(t, err, messaging.CodeValidation, "body")
	if !strings.Contains(e.Message, "unconfirmed_sends") {
		t.Errorf("no setting: message %q does not name unconfirmed_sends", e.Message)
	}
}
