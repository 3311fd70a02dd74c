package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// TestSearchTotalsKeptAreNeverStale repeats a search between changes made
// through the store, through a second Store on the same file (another
// process) and directly in SQL: each total is the count of its own
// snapshot, whether it was counted or kept.
func TestSearchTotalsKeptAreNeverStale(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s := openTest(t, path)
	other := openTest(t, path)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "acme", Name: "Acme", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	insertContacts(t, s, []*messaging.Contact{
		testContact("acme", 1, "Mary", "Otieno", at), testContact("acme", 2, "Mark", "Wanjiru", at.Add(time.Second)),
		testContact("acme", 3, "Zed", "Mauta", at.Add(2*time.Second)), testContact("acme", 4, "Amina", "Kazi", at.Add(3*time.Second))})
	search := func(what string, want int) {
		t.Helper()
		for range 2 { // counted, then kept
			page, total, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "acme", Search: "ma", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if total != want || len(page) != want {
				t.Fatalf("%s: search ma: total %d, page %d; want %d", what, total, len(page), want)
			}
		}
	}
	search("at first", 3) // Mary, Mark, Zed Mauta

	c := testContact("acme", 5, "Mathew", "Kim", at.Add(4*time.Second))
	c.Version = 1
	if err := s.ContactCreate(ctx, c); err != nil {
		t.Fatal(err)
	}
	search("after a create", 4)

	mark, err := s.ContactGet(ctx, "acme", "ct_000002")
	if err != nil {
		t.Fatal(err)
	}
	renamed := *mark
	renamed.FirstName, renamed.FullName, renamed.Email, renamed.EmailKey, renamed.Version = "Otto", "Otto Wanjiru", "otto@example.com", "otto@example.com", mark.Version+1
	if err := other.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: &renamed, PrevVersion: mark.Version}); err != nil {
		t.Fatal(err)
	}
	search("after a rename by another Store on the file", 3)

	if _, err := other.w.ExecContext(ctx, `UPDATE contacts SET last_fold = 'mazur' WHERE id = 'ct_000004'`); err != nil {
		t.Fatal(err)
	}
	search("after a direct UPDATE of a folded name", 4)

	// Another workspace's change leaves the kept total valid, and its own
	// searches are kept apart.
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "other", Name: "Other", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	insertContacts(t, s, []*messaging.Contact{testContact("other", 9, "Maria", "X", at)})
	search("after another workspace's insert", 4)
	if _, total, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "other", Search: "ma", Limit: 10}); err != nil || total != 1 {
		t.Fatalf("other workspace: total %d, %v; want 1", total, err)
	}
}
