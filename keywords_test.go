package messaging_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
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
	reject := record.OutsideWindowReject
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

// racingSettingsStore makes another change of the workspace's opt-in
// keywords (as another instance would) between a SetWorkspaceSettings'
// read of the lists and its write, once.
type racingSettingsStore struct {
	driver.Store
	raced atomic.Bool
	in    []string
}

func (s *racingSettingsStore) WorkspaceSetSettings(ctx context.Context, p *driver.WorkspaceSettingsParams) error {
	if !s.raced.Swap(true) {
		in := s.in
		if err := s.Store.WorkspaceSetSettings(ctx, &driver.WorkspaceSettingsParams{WorkspaceID: p.WorkspaceID, OptInKeywords: &in}); err != nil {
			return err
		}
	}
	return s.Store.WorkspaceSetSettings(ctx, p)
}

// TestSetWorkspaceSettingsConcurrentKeywords: an opt-out keyword checked
// against the opt-in list as it was read is not stored when another
// change made it an opt-in keyword meanwhile: the check is made again on
// the stored lists and refuses it; a change that does not clash is stored
// after the retry.
func TestSetWorkspaceSettingsConcurrentKeywords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &racingSettingsStore{Store: memstore.New(), in: []string{"ACHA"}}
	svc, err := messaging.New(st, fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	out := []string{"acha"}
	_, err = svc.SetWorkspaceSettings(ctx, "acme", &messaging.WorkspaceSettings{OptOutKeywords: &out})
	wantError(t, err, messaging.CodeValidation, "opt_out_keywords[0]")
	w, err := svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(w.OptOutKeywords, "ACHA") && slices.Contains(w.ActiveOptInKeywords(), "ACHA") {
		t.Fatalf("ACHA is stored in both lists: opt-out %q, opt-in %q", w.OptOutKeywords, w.OptInKeywords)
	}

	st.raced.Store(false)
	st.in = []string{"ANZA", "RUDI"}
	out = []string{"basi"}
	w, err = svc.SetWorkspaceSettings(ctx, "acme", &messaging.WorkspaceSettings{OptOutKeywords: &out})
	if err != nil {
		t.Fatalf("a change that does not clash, retried after the race: %v", err)
	}
	if !slices.Equal(w.OptOutKeywords, []string{"BASI"}) || !slices.Equal(w.OptInKeywords, []string{"ANZA", "RUDI"}) {
		t.Errorf("stored: opt-out %q, opt-in %q; want [BASI] and the other change's [ANZA RUDI]", w.OptOutKeywords, w.OptInKeywords)
	}
}
