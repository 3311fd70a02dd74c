package storetest

import (
	"context"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testWorkspaceList: workspaces list in byte order of their ids, with
// their channels (sorted, empty but not nil), paged by After and Limit.
func testWorkspaceList(t *testing.T, s driver.Store) {
	ctx := context.Background()
	if got, err := s.WorkspaceList(ctx, &driver.WorkspaceListParams{Limit: 10}); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	for _, id := range []string{"b", "B", "a-1", "a_1", "c"} {
		mustWorkspace(t, s, id)
	}
	for _, ch := range []string{"whatsapp", "instagram"} {
		if err := s.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: "b", Channel: ch, Connected: true, At: base}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(ws []*messaging.WorkspaceInfo) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.ID)
		}
		return out
	}
	all, err := s.WorkspaceList(ctx, &driver.WorkspaceListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"B", "a-1", "a_1", "b", "c"}, ids(all)); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	want := &messaging.WorkspaceInfo{ID: "b", Name: "WS b", Channels: []string{"instagram", "whatsapp"}, CreatedAt: base}
	if d := cmp.Diff(want, all[3]); d != "" {
		t.Errorf("workspace b (-want +got):\n%s", d)
	}
	if all[0].Channels == nil {
		t.Error("a workspace without channels lists nil Channels, want empty")
	}
	page, err := s.WorkspaceList(ctx, &driver.WorkspaceListParams{After: "a-1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a_1", "b"}, ids(page)); d != "" {
		t.Errorf("page after a-1, limit 2 (-want +got):\n%s", d)
	}
}

// testWorkspaceSettings: a workspace is created with its OutsideWindow
// policy and keyword lists, WorkspaceSetSettings changes each setting it
// is given and leaves the others, WorkspaceGet and WorkspaceList read them
// back (an empty keyword list is nil), and a missing workspace is
// ErrNotFound; with Expect, a change is made only while the stored lists
// are the expected ones, else ErrConflict.
func testWorkspaceSettings(t *testing.T, s driver.Store) {
	ctx := context.Background()
	type settings struct {
		OutsideWindow string
		OptOut, OptIn []string
	}
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "strict", Name: "S", Channels: []string{}, OutsideWindow: record.OutsideWindowReject,
		OptOutKeywords: []string{"HALT", "STOPALL"}, OptInKeywords: []string{"RESUME"}, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	mustWorkspace(t, s, "easy")
	read := func() map[string]settings {
		t.Helper()
		out := map[string]settings{}
		for _, id := range []string{"easy", "strict"} {
			w, err := s.WorkspaceGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out[id] = settings{w.OutsideWindow, w.OptOutKeywords, w.OptInKeywords}
		}
		list, err := s.WorkspaceList(ctx, &driver.WorkspaceListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range list {
			if d := cmp.Diff(out[w.ID], settings{w.OutsideWindow, w.OptOutKeywords, w.OptInKeywords}); d != "" {
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
	if d := cmp.Diff(map[string]settings{"easy": {}, "strict": {"reject", []string{"HALT", "STOPALL"}, []string{"RESUME"}}}, read()); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}
	set(&driver.WorkspaceSettingsParams{WorkspaceID: "easy", OutsideWindow: str("reject")})
	set(&driver.WorkspaceSettingsParams{WorkspaceID: "strict", OutsideWindow: str(""), OptOutKeywords: list("X")})
	if d := cmp.Diff(map[string]settings{"easy": {OutsideWindow: "reject"}, "strict": {"", []string{"X"}, []string{"RESUME"}}}, read()); d != "" {
		t.Errorf("after the first WorkspaceSetSettings (-want +got):\n%s", d)
	}
	set(&driver.WorkspaceSettingsParams{WorkspaceID: "strict", OptInKeywords: list()})
	set(&driver.WorkspaceSettingsParams{WorkspaceID: "easy", OptOutKeywords: list("ÅPA", `ONE,TWO"3`, "SITISHA"), OptInKeywords: list("ANZA")})
	want := map[string]settings{"easy": {"reject", []string{"ÅPA", `ONE,TWO"3`, "SITISHA"}, []string{"ANZA"}}, "strict": {"", []string{"X"}, nil}}
	if d := cmp.Diff(want, read()); d != "" {
		t.Errorf("after the second WorkspaceSetSettings (-want +got):\n%s", d)
	}
	err := s.WorkspaceSetSettings(ctx, &driver.WorkspaceSettingsParams{WorkspaceID: "nope", OutsideWindow: str("reject"), OptOutKeywords: list("A")})
	wantErr(t, "WorkspaceSetSettings of a missing workspace", err, messaging.ErrNotFound)

	// Expect: the change is made only while the stored lists are the
	// expected ones (empty and nil alike: the defaults).
	err = s.WorkspaceSetSettings(ctx, &driver.WorkspaceSettingsParams{WorkspaceID: "strict", OutsideWindow: str("reject"), OptInKeywords: list("X"),
		Expect: &record.WorkspaceKeywords{OptOut: []string{"X"}, OptIn: []string{"RESUME"}}})
	wantErr(t, "WorkspaceSetSettings expecting lists changed since", err, messaging.ErrConflict)
	if d := cmp.Diff(want, read()); d != "" {
		t.Errorf("a refused compare-and-set changed the settings (-want +got):\n%s", d)
	}
	set(&driver.WorkspaceSettingsParams{WorkspaceID: "strict", OutsideWindow: str("reject"), OptInKeywords: list("GO"),
		Expect: &record.WorkspaceKeywords{OptOut: []string{"X"}, OptIn: []string{}}})
	set(&driver.WorkspaceSettingsParams{WorkspaceID: "easy", OptOutKeywords: list(),
		Expect: &record.WorkspaceKeywords{OptOut: []string{"ÅPA", `ONE,TWO"3`, "SITISHA"}, OptIn: []string{"ANZA"}}})
	want = map[string]settings{"easy": {"reject", nil, []string{"ANZA"}}, "strict": {"reject", []string{"X"}, []string{"GO"}}}
	if d := cmp.Diff(want, read()); d != "" {
		t.Errorf("after the compare-and-sets (-want +got):\n%s", d)
	}
	err = s.WorkspaceSetSettings(ctx, &driver.WorkspaceSettingsParams{WorkspaceID: "nope", OptOutKeywords: list("A"), Expect: &record.WorkspaceKeywords{}})
	wantErr(t, "WorkspaceSetSettings expecting lists of a missing workspace", err, messaging.ErrNotFound)
}
