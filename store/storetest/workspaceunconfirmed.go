package storetest

import (
	"context"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testWorkspaceUnconfirmedSends: a workspace is created with its
// UnconfirmedSends policy (empty, the default, when none is given);
// WorkspaceSetSettings changes it when given and leaves it when not, and
// leaves the other settings when only it is given; WorkspaceGet (with
// several channels connected, so several rows in a join) and
// WorkspaceList read it back; a refused compare-and-set changes it not.
func testWorkspaceUnconfirmedSends(t *testing.T, s driver.Store) {
	ctx := context.Background()
	type settings struct {
		Unconfirmed, OutsideWindow string
		OptOut                     []string
	}
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "careful", Name: "C", Channels: []string{"instagram", "whatsapp"},
		UnconfirmedSends: record.UnconfirmedFail, OptOutKeywords: []string{"HALT"}, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	mustWorkspace(t, s, "plain", "messenger", "whatsapp")
	read := func() map[string]settings {
		t.Helper()
		out := map[string]settings{}
		for _, id := range []string{"careful", "plain"} {
			w, err := s.WorkspaceGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Channels) != 2 {
				t.Errorf("WorkspaceGet(%s).Channels = %q; want 2", id, w.Channels)
			}
			out[id] = settings{w.UnconfirmedSends, w.OutsideWindow, w.OptOutKeywords}
		}
		list, err := s.WorkspaceList(ctx, &driver.WorkspaceListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("WorkspaceList: %d workspaces; want 2", len(list))
		}
		for _, w := range list {
			if d := cmp.Diff(out[w.ID], settings{w.UnconfirmedSends, w.OutsideWindow, w.OptOutKeywords}); d != "" {
				t.Errorf("WorkspaceList %s differs from WorkspaceGet (-get +list):\n%s", w.ID, d)
			}
		}
		return out
	}
	set := func(p *driver.WorkspaceSettingsParams) {
		t.Helper()
		if err := s.WorkspaceSetSettings(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	str := func(s string) *string { return &s }
	list := func(l ...string) *[]string { return &l }
	want := map[string]settings{"careful": {"fail", "", []string{"HALT"}}, "plain": {}}
	if d := cmp.Diff(want, read()); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}

	set(&driver.WorkspaceSettingsParams{WorkspaceID: "plain", UnconfirmedSends: str(record.UnconfirmedFail)})
	set(&driver.WorkspaceSettingsParams{WorkspaceID: "careful", OutsideWindow: str(record.OutsideWindowReject), OptOutKeywords: list("X")})
	want = map[string]settings{"careful": {"fail", "reject", []string{"X"}}, "plain": {Unconfirmed: "fail"}}
	if d := cmp.Diff(want, read()); d != "" {
		t.Errorf("after setting plain's policy and careful's other settings (-want +got):\n%s", d)
	}

	set(&driver.WorkspaceSettingsParams{WorkspaceID: "careful", UnconfirmedSends: str("")})
	want["careful"] = settings{"", "reject", []string{"X"}}
	if d := cmp.Diff(want, read()); d != "" {
		t.Errorf("after restoring careful's default (-want +got):\n%s", d)
	}

	err := s.WorkspaceSetSettings(ctx, &driver.WorkspaceSettingsParams{WorkspaceID: "careful", UnconfirmedSends: str(record.UnconfirmedFail),
		OptOutKeywords: list("Y"), Expect: &record.WorkspaceKeywords{OptOut: []string{"HALT"}}})
	wantErr(t, "WorkspaceSetSettings expecting lists changed since", err, messaging.ErrConflict)
	if d := cmp.Diff(want, read()); d != "" {
		t.Errorf("a refused compare-and-set changed the settings (-want +got):\n%s", d)
	}
	err = s.WorkspaceSetSettings(ctx, &driver.WorkspaceSettingsParams{WorkspaceID: "nope", UnconfirmedSends: str(record.UnconfirmedFail)})
	wantErr(t, "WorkspaceSetSettings of a missing workspace", err, messaging.ErrNotFound)
}
