package messaging_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// TestKeywordSettings: through the Go API, a refused keyword list names
// its field and stores nothing (neither a new workspace nor the other
// settings of the same call), and a setting left nil is kept.
func TestKeywordSettings(t *testing.T) {
	f := setup(t)
	for _, c := range []struct {
		name    string
		out, in []string
		field   string
	}{
		{"33 characters", []string{strings.Repeat("Z", 33)}, nil, "opt_out_keywords[0]"},
		{"duplicate", []string{"a", "b", "B"}, nil, "opt_out_keywords[2]"},
		{"both lists", []string{"x"}, []string{"X"}, "opt_in_keywords[0]"},
		{"a default opt-out", nil, []string{"go", "stop"}, "opt_in_keywords[1]"},
		{"51 keywords", strings.Fields(strings.Repeat("K ", 51)), nil, "opt_out_keywords"},
	} {
		_, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "kw", OptOutKeywords: c.out, OptInKeywords: c.in})
		wantError(t, err, messaging.CodeValidation, c.field)
		if _, err := f.svc.GetWorkspace(f.ctx, "kw"); messaging.ErrorCode(err) != messaging.CodeNotFound {
			t.Errorf("%s: the workspace was stored (%v)", c.name, err)
		}
	}
	reject := messaging.OutsideWindowReject
	_, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{OutsideWindow: &reject, OptInKeywords: &[]string{"ok", "O K"}})
	wantError(t, err, messaging.CodeValidation, "opt_in_keywords[1]")
	_, err = f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{})
	wantError(t, err, messaging.CodeValidation, "body")
	w, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{OptOutKeywords: &[]string{"halt"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]any{"", []string{"HALT"}, []string(nil)}, []any{w.OutsideWindow, w.OptOutKeywords, w.OptInKeywords}); d != "" {
		t.Errorf("after the refused change and the keyword change (-want +got):\n%s", d)
	}
	if _, err := f.svc.SetWorkspaceSettings(f.ctx, "nope", &messaging.WorkspaceSettings{OptOutKeywords: &[]string{"halt"}}); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("an unknown workspace: %v; want not_found", err)
	}
}
