package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/internal/sqlrows"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) driver.Store {
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
	// The writer's statement journals stay in memory (a temporary file per
	// batch otherwise: BenchmarkMessageCreate).
	var temp int
	if err := s.w.QueryRow("PRAGMA temp_store").Scan(&temp); err != nil {
		t.Fatal(err)
	}
	if temp != 2 {
		t.Errorf("writer: temp_store=%d, want 2 (MEMORY)", temp)
	}
	if _, err := s.r.Exec("CREATE TABLE nope (x)"); err == nil {
		t.Error("a reader connection could write")
	}
}

// explain returns the EXPLAIN QUERY PLAN lines of q.
func explain(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.r.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// checkListPlans checks, and logs, the query plans of every statement
// ContactList runs: each reads indexes only (the page's rows come by
// their position in contacts_list), never scans the table or a whole
// index, and sorts only a search's collected matches.
func checkListPlans(t *testing.T, s *Store) {
	t.Helper()
	type stmt struct {
		name, q string
		args    []any
		want    []string // substrings of the plan
	}
	ws := sql.Named("ws", "a")
	page := []any{ws, sql.Named("limit", 25), sql.Named("offset", 0), sql.Named("floor", 0)}
	stmts := []stmt{
		{"list total", qContactListTotal, []any{ws},
			[]string{"SEARCH contacts USING COVERING INDEX contacts_list (workspace_id=?)"}},
		{"list page", qContactListPage,
			[]any{ws, sql.Named("hi", 100), sql.Named("lo", 75)},
			[]string{"SEARCH contacts USING INDEX contacts_list (workspace_id=? AND list_pos>? AND list_pos<?)"}},
	}
	for _, p := range []*driver.ContactListParams{
		{WorkspaceID: "a", Search: "ami"},
		{WorkspaceID: "a", Search: "2547", PhoneDigits: "2547"},
	} {
		ts := searchTerms(p)
		var counts []string
		for _, term := range ts {
			counts = append(counts, "SEARCH contacts USING COVERING INDEX "+term.index+" (workspace_id=? AND ")
		}
		args := searchArgs(p)
		stmts = append(stmts,
			stmt{"count " + p.Search, countSQL(ts), args, counts},
			stmt{"walk " + p.Search, pageSQL(walkSQL(ts)), append(args, page...),
				[]string{"SEARCH contacts USING COVERING INDEX contacts_list (workspace_id=? AND list_pos>?)",
					"SEARCH contacts USING INDEX contacts_list (workspace_id=? AND list_pos=?)"}},
			stmt{"collect " + p.Search, pageSQL(collectSQL(ts)), append(args, page...),
				append(counts, "SEARCH contacts USING INDEX contacts_list (workspace_id=? AND list_pos=?)")})
	}
	for _, st := range stmts {
		plan := explain(t, s, st.q, st.args...)
		t.Logf("plan of %s:\n%s", st.name, plan)
		for _, w := range st.want {
			if !strings.Contains(plan, w) {
				t.Errorf("plan of %s lacks %q:\n%s", st.name, w, plan)
			}
		}
		if strings.Contains(strings.ReplaceAll(plan, "SCAN CONSTANT ROW", ""), "SCAN ") {
			t.Errorf("plan of %s scans:\n%s", st.name, plan)
		}
		if strings.Contains(plan, "TEMP B-TREE FOR ORDER BY") && !strings.HasPrefix(st.name, "collect") {
			t.Errorf("plan of %s sorts:\n%s", st.name, plan)
		}
	}
}

// insertContacts inserts contacts directly, in one transaction.
func insertContacts(t *testing.T, s *Store, cs []*messaging.Contact) {
	t.Helper()
	tx, err := s.w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, c := range cs {
		if _, err := tx.Exec(`INSERT INTO contacts (`+sqlrows.ContactColumns+`, last_fold, full_fold, phone_digits)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', '', '', '', 'api', '[]', '', 1, ?, ?, ?, ?, ?)`,
			c.ID, c.WorkspaceID, c.FirstName, c.LastName, c.FullName, c.Phone, c.Email, c.EmailKey,
			fmtTime(c.CreatedAt), fmtTime(c.CreatedAt),
			driver.SearchFold(c.LastName), driver.SearchFold(c.FullName), driver.PhoneDigits(c.Phone)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func testContact(ws string, i int, first, last string, at time.Time) *messaging.Contact {
	phone := fmt.Sprintf("+2547%08d", i)
	email := fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(first), strings.ToLower(last), i)
	return &messaging.Contact{ID: fmt.Sprintf("ct_%06d", i), WorkspaceID: ws, FirstName: first, LastName: last,
		FullName: strings.TrimSpace(first + " " + last), Phone: phone, Email: email, EmailKey: email, CreatedAt: at}
}

func TestContactListUsesIndexes(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	checkListPlans(t, s)

	// With statistics gathered on a workspace of many contacts, the plans
	// stay the same.
	for _, ws := range []string{"a", "b"} {
		if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: ws, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	var cs []*messaging.Contact
	for i := range 3000 {
		ws := "a"
		if i%10 == 0 {
			ws = "b"
		}
		cs = append(cs, testContact(ws, i, fmt.Sprintf("First%d", i), fmt.Sprintf("Last%d", i%97), t0))
	}
	insertContacts(t, s, cs)
	if _, err := s.w.Exec("ANALYZE"); err != nil {
		t.Fatal(err)
	}
	// Reader connections load statistics when they open.
	s.r.SetMaxIdleConns(0)
	s.r.SetMaxIdleConns(4)
	checkListPlans(t, s)

	got, total, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Search: "first12", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	// first12, first120..first129 (first120 is in b), first1200..first1299
	// (every tenth in b).
	if want := 1 + 9 + 90; total != want || len(got) != 5 {
		t.Errorf("search first12: total %d, page %d; want %d and 5", total, len(got), want)
	}
}

// TestContactListPositions checks that list positions follow the list
// order whatever the order of inserts, and that both ways of paging a
// search (walk and collect) give the pages and totals of a brute-force
// filter, at every offset.
func TestContactListPositions(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	for _, ws := range []string{"a", "b"} {
		if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: ws, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	firsts := []string{"Amina", "Amos", "Otis", "Zoe", "Émile", "Ann Marie"}
	lasts := []string{"Otieno", "Amani", "Zola", "", "Kamau"}
	rng := rand.New(rand.NewPCG(1, 1))
	var all []*messaging.Contact
	for i := range 1500 {
		ws := "a"
		if i%7 == 0 {
			ws = "b"
		}
		// Times collide and arrive out of order.
		at := t0.Add(time.Duration(rng.IntN(400)) * time.Second)
		c := testContact(ws, i, firsts[rng.IntN(len(firsts))], lasts[rng.IntN(len(lasts))], at)
		all = append(all, c)
	}
	// Some in bulk, some one by one through the store.
	insertContacts(t, s, all[:1200])
	for _, c := range all[1200:] {
		c.Tags = []string{}
		if err := s.ContactCreate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, ws := range []string{"a", "b"} {
		var bad int
		if err := s.r.QueryRow(`SELECT count(*) FROM (SELECT list_pos, row_number() OVER (ORDER BY created_at, id) AS n
			FROM contacts WHERE workspace_id = ?) WHERE list_pos <> n`, ws).Scan(&bad); err != nil {
			t.Fatal(err)
		}
		if bad != 0 {
			t.Errorf("workspace %s: %d contacts out of position", ws, bad)
		}
	}
	var inA []*messaging.Contact
	for _, c := range all {
		if c.WorkspaceID == "a" {
			inA = append(inA, c)
		}
	}
	slices.SortFunc(inA, func(x, y *messaging.Contact) int {
		if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(y.ID, x.ID)
	})
	for _, q := range []string{"", "a", "am", "amina", "amina ot", "ot", "zo", "émile", "ann marie", "2547", "+254700000", "25470000012", "zz", "amina.otieno1"} {
		search, digits := driver.ContactSearchQuery(q)
		var want []string
		for _, c := range inA {
			if q == "" || strings.HasPrefix(driver.SearchFold(c.FullName), search) || strings.HasPrefix(driver.SearchFold(c.LastName), search) ||
				strings.HasPrefix(c.EmailKey, search) || (digits != "" && strings.HasPrefix(driver.PhoneDigits(c.Phone), digits)) {
				want = append(want, c.ID)
			}
		}
		for _, strategy := range []int{strategyAuto, strategyWalk, strategyCollect} {
			for _, offset := range []int{0, 1, 24, 100, len(want) - 3, len(want), len(want) + 5} {
				if offset < 0 {
					continue
				}
				p := &driver.ContactListParams{WorkspaceID: "a", Search: search, PhoneDigits: digits, Offset: offset, Limit: 25}
				got, total, err := s.contactList(ctx, p, strategy)
				if err != nil {
					t.Fatal(err)
				}
				wantPage := append([]string{}, want[min(offset, len(want)):min(offset+25, len(want))]...)
				if total != len(want) {
					t.Errorf("search %q strategy %d offset %d: total %d, want %d", q, strategy, offset, total, len(want))
				}
				if d := cmp.Diff(wantPage, idsOf(got)); d != "" {
					t.Errorf("search %q strategy %d offset %d (-want +got):\n%s", q, strategy, offset, d)
				}
			}
		}
	}
}

func idsOf(cs []*messaging.Contact) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
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

// TestClaimFaults runs the claim-fault conformance case: a trigger makes a
// claim by storetest.FailingOwner insert a row that violates a deferred
// foreign key, so the claim's statements succeed and return their rows and
// the shared transaction fails at COMMIT.
func TestClaimFaults(t *testing.T) {
	storetest.RunClaimFaults(t, func(t *testing.T) driver.Store {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		s, err := Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite3", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{
			`CREATE TABLE fault_parent (id TEXT PRIMARY KEY)`,
			`CREATE TABLE fault_child (p TEXT REFERENCES fault_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
			`CREATE TRIGGER fault_messages AFTER UPDATE OF lease_owner ON messages
				WHEN NEW.lease_owner LIKE '` + storetest.FailingOwner + `%'
				BEGIN INSERT INTO fault_child VALUES ('missing'); END`,
			`CREATE TRIGGER fault_hooks AFTER UPDATE OF lease_owner ON webhook_deliveries
				WHEN NEW.lease_owner LIKE '` + storetest.FailingOwner + `%'
				BEGIN INSERT INTO fault_child VALUES ('missing'); END`,
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		return s
	})
}
