package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testWorkspaceList: workspaces list in byte order of their ids, with
// their channels (sorted, empty but not nil), paged by After and Limit.
func testWorkspaceList(t *testing.T, s messaging.Store) {
	ctx := context.Background()
	if got, err := s.WorkspaceList(ctx, &messaging.WorkspaceListParams{Limit: 10}); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	for _, id := range []string{"b", "B", "a-1", "a_1", "c"} {
		mustWorkspace(t, s, id)
	}
	for _, ch := range []string{"whatsapp", "instagram"} {
		if err := s.WorkspaceSetChannel(ctx, &messaging.ChannelParams{WorkspaceID: "b", Channel: ch, Connected: true, At: base}); err != nil {
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
	all, err := s.WorkspaceList(ctx, &messaging.WorkspaceListParams{Limit: 10})
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
	page, err := s.WorkspaceList(ctx, &messaging.WorkspaceListParams{After: "a-1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a_1", "b"}, ids(page)); d != "" {
		t.Errorf("page after a-1, limit 2 (-want +got):\n%s", d)
	}
}

// testWorkspaceSettings: a workspace is created with its OutsideWindow
// policy, WorkspaceSetSettings changes it, WorkspaceGet and WorkspaceList
// read it back, and a missing workspace is ErrNotFound.
func testWorkspaceSettings(t *testing.T, s messaging.Store) {
	ctx := context.Background()
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "strict", Name: "S", Channels: []string{}, OutsideWindow: messaging.OutsideWindowReject, CreatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	mustWorkspace(t, s, "easy")
	policies := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, id := range []string{"easy", "strict"} {
			w, err := s.WorkspaceGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out[id] = w.OutsideWindow
		}
		list, err := s.WorkspaceList(ctx, &messaging.WorkspaceListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range list {
			if w.OutsideWindow != out[w.ID] {
				t.Errorf("WorkspaceList %s: OutsideWindow %q, WorkspaceGet %q", w.ID, w.OutsideWindow, out[w.ID])
			}
		}
		return out
	}
	if d := cmp.Diff(map[string]string{"easy": "", "strict": "reject"}, policies()); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}
	if err := s.WorkspaceSetSettings(ctx, &messaging.WorkspaceSettingsParams{WorkspaceID: "easy", OutsideWindow: "reject"}); err != nil {
		t.Fatal(err)
	}
	if err := s.WorkspaceSetSettings(ctx, &messaging.WorkspaceSettingsParams{WorkspaceID: "strict"}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]string{"easy": "reject", "strict": ""}, policies()); d != "" {
		t.Errorf("after WorkspaceSetSettings (-want +got):\n%s", d)
	}
	err := s.WorkspaceSetSettings(ctx, &messaging.WorkspaceSettingsParams{WorkspaceID: "nope", OutsideWindow: "reject"})
	wantErr(t, "WorkspaceSetSettings of a missing workspace", err, messaging.ErrNotFound)
}
