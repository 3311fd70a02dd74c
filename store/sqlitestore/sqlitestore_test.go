package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) messaging.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func openTest(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

func TestReopenKeepsDataAndMigrationIsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := Open(ctx, path, &Options{BusyTimeout: time.Second, MaxReaders: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", Name: "A", Channels: []string{"whatsapp"}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for i := range 2 {
		s := openTest(t, path)
		var v int
		if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != SchemaVersion() || v < 1 {
			t.Errorf("open %d: user_version %d, want %d", i, v, SchemaVersion())
		}
		w, err := s.WorkspaceGet(ctx, "a")
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if w.Name != "A" || !w.CreatedAt.Equal(t0) || len(w.Channels) != 1 || w.Channels[0] != "whatsapp" {
			t.Errorf("open %d: got %+v", i, w)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s := openTest(t, path)
	if _, err := s.w.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if s2, err := Open(context.Background(), path, nil); err == nil {
		_ = s2.Close()
		t.Fatal("Open of a database with a newer schema succeeded")
	}
}

func TestPragmas(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	var mode string
	if err := s.r.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var fk, sync int
	if err := s.w.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if err := s.w.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if fk != 1 || sync != 2 {
		t.Errorf("writer: foreign_keys=%d synchronous=%d, want 1 and 2 (FULL)", fk, sync)
	}
	if _, err := s.r.Exec("CREATE TABLE nope (x)"); err == nil {
		t.Error("a reader connection could write")
	}
}

// queryPlan returns the EXPLAIN QUERY PLAN lines of the contact queries
// ContactList runs for p.
func queryPlan(t *testing.T, s *Store, p *messaging.ContactListParams) []string {
	t.Helper()
	where, args := contactFilter(p)
	var out []string
	for _, q := range []string{
		`SELECT count(*) FROM contacts WHERE ` + where,
		`SELECT ` + contactCols + ` FROM contacts WHERE ` + where + ` ORDER BY created_at DESC, id DESC LIMIT 25 OFFSET 0`,
	} {
		rows, err := s.r.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func checkSearchPlan(t *testing.T, s *Store) {
	t.Helper()
	for _, p := range []*messaging.ContactListParams{
		{WorkspaceID: "a", Search: "ami", Limit: 25},
		{WorkspaceID: "a", Search: "2547", PhoneDigits: "2547", Limit: 25},
	} {
		plan := queryPlan(t, s, p)
		text := strings.Join(plan, "\n")
		t.Logf("plan of search %q/%q:\n%s", p.Search, p.PhoneDigits, text)
		missing := false
		for _, idx := range []string{"contacts_first_fold", "contacts_last_fold", "contacts_full_fold", "contacts_email_key"} {
			missing = missing || !strings.Contains(text, idx)
		}
		if strings.Contains(text, "SCAN contacts") || missing ||
			(p.PhoneDigits != "" && !strings.Contains(text, "contacts_phone_digits")) {
			t.Errorf("search %+v does not use the search indexes:\n%s", p, text)
		}
	}
	plan := strings.Join(queryPlan(t, s, &messaging.ContactListParams{WorkspaceID: "a", Limit: 25}), "\n")
	if strings.Contains(plan, "SCAN contacts") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("listing does not walk the (workspace_id, created_at, id) index:\n%s", plan)
	}
}

func TestContactSearchUsesIndexes(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	checkSearchPlan(t, s)

	// With statistics gathered on a workspace of many contacts, the planner
	// must still prefer the search indexes to walking the whole workspace.
	for _, ws := range []string{"a", "b"} {
		if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: ws, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		ws := "a"
		if i%10 == 0 {
			ws = "b"
		}
		first, last := fmt.Sprintf("First%d", i), fmt.Sprintf("Last%d", i%97)
		phone := fmt.Sprintf("+2547%08d", i)
		if _, err := tx.Exec(`INSERT INTO contacts (`+contactCols+`, first_fold, last_fold, full_fold, phone_digits)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', '', '', '', 'api', '[]', '', 1, ?, ?, ?, ?, ?, ?)`,
			fmt.Sprintf("ct_%05d", i), ws, first, last, first+" "+last, phone,
			fmt.Sprintf("p%d@example.com", i), fmt.Sprintf("p%d@example.com", i), fmtTime(t0), fmtTime(t0),
			messaging.SearchFold(first), messaging.SearchFold(last), messaging.SearchFold(first+" "+last), messaging.PhoneDigits(phone)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec("ANALYZE"); err != nil {
		t.Fatal(err)
	}
	// Reader connections load statistics when they open.
	s.r.SetMaxIdleConns(0)
	s.r.SetMaxIdleConns(4)
	checkSearchPlan(t, s)

	got, total, err := s.ContactList(ctx, &messaging.ContactListParams{WorkspaceID: "a", Search: "first12", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	// first12, first120..first129 (first120 is in b), first1200..first1299
	// (every tenth in b).
	if want := 1 + 9 + 90; total != want || len(got) != 5 {
		t.Errorf("search first12: total %d, page %d; want %d and 5", total, len(got), want)
	}
}

func TestContextCanceled(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", CreatedAt: t0})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WorkspaceCreate with a canceled context: %v", err)
	}
	_, err = s.WorkspaceGet(ctx, "a")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WorkspaceGet with a canceled context: %v", err)
	}
}

func TestZeroTimesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	w, err := s.WorkspaceGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if !w.CreatedAt.IsZero() || w.Channels == nil {
		t.Errorf("got %+v, want zero CreatedAt and non-nil empty Channels", w)
	}
}

func TestReadsDoNotWaitForTheWriter(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	// Hold the writer in an open write transaction.
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(`UPDATE workspaces SET name = 'uncommitted' WHERE id = 'a'`); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w, err := s.WorkspaceGet(rctx, "a")
	if err != nil {
		t.Fatalf("read during a write transaction: %v", err)
	}
	if w.Name != "" {
		t.Errorf("read saw uncommitted name %q", w.Name)
	}
	// A second write waits for the first (one writer) and honours its
	// context.
	wctx, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel2()
	err = s.WorkspaceCreate(wctx, &messaging.WorkspaceInfo{ID: "b", CreatedAt: t0})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("write while the writer is busy: %v, want context.DeadlineExceeded", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "b", CreatedAt: t0}); err != nil {
		t.Errorf("write after the writer is free: %v", err)
	}
}
