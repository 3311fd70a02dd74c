package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// within runs fn and fails the test if it does not return within d: a
// write must never hang.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// A write submitted after Close fails with errClosed at once, and is never
// committed.
func TestWriteAfterCloseFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "a write after Close", func() {
		err = s.WorkspaceCreate(context.Background(), &messaging.WorkspaceInfo{ID: "a", CreatedAt: t0})
	})
	if !errors.Is(err, errClosed) {
		t.Errorf("write after Close: %v, want errClosed", err)
	}
	if workspaceStored(t, openTest(t, path), "a") {
		t.Error("a write after Close was committed")
	}
}

// txRecorder wraps writes so that each records the transaction it ran in:
// the writes of one batch share it.
type txRecorder struct {
	mu  sync.Mutex
	txs map[int]*sql.Tx
}

func (r *txRecorder) wrap(i int, fn writeFn) writeFn {
	return func(ctx context.Context, tx *sql.Tx) error {
		r.mu.Lock()
		if r.txs == nil {
			r.txs = map[int]*sql.Tx{}
		}
		r.txs[i] = tx
		r.mu.Unlock()
		return fn(ctx, tx)
	}
}

// sharing returns the writes (other than i) that ran in the transaction of
// write i; it fails the test when there are none, for then the batch path
// under test was not taken.
func (r *txRecorder) sharing(t *testing.T, i int) []int {
	t.Helper()
	var out []int
	for j, tx := range r.txs {
		if j != i && tx == r.txs[i] {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		t.Fatalf("write %d ran alone (transactions %v): the batch was not formed", i, r.txs)
	}
	return out
}

// A write that panics in a batch (under its savepoint) fails alone, with
// the panic reported as its error: its changes are rolled back to its
// savepoint, and the other writes of the batch commit.
func TestPanicInBatchFailsOnlyThatWrite(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	var rec txRecorder
	fns := []writeFn{insertFn("a"), func(ctx context.Context, tx *sql.Tx) error {
		if err := insertFn("b")(ctx, tx); err != nil {
			return err
		}
		panic("after the insert")
	}, insertFn("c")}
	for i := range fns {
		fns[i] = rec.wrap(i, fns[i])
	}
	errs, _ := batchOf(t, s, fns, nil)
	rec.sharing(t, 1)
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "panic in write: after the insert") {
		t.Errorf("the panicking write: error %v, want the panic reported", errs[1])
	}
	if workspaceStored(t, s, "b") {
		t.Error("the panicking write's insert was committed")
	}
	for _, i := range []int{0, 2} {
		id := string(rune('a' + i))
		if errs[i] != nil || !workspaceStored(t, s, id) {
			t.Errorf("write %s of the same batch: error %v, stored %v; want done and stored", id, errs[i], workspaceStored(t, s, id))
		}
	}
}

// A write that panics alone in its transaction fails with the panic as its
// error and stores nothing; the store keeps working.
func TestPanicAloneStoresNothing(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	var err error
	within(t, 5*time.Second, "a panicking write", func() {
		err = s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if err := insertFn("a")(ctx, tx); err != nil {
				return err
			}
			panic("after the insert")
		})
	})
	if err == nil || !strings.Contains(err.Error(), "panic in write: after the insert") {
		t.Errorf("the panicking write: error %v, want the panic reported", err)
	}
	if workspaceStored(t, s, "a") {
		t.Error("the panicking write's insert was committed")
	}
	if err := s.writeTx(ctx, insertFn("b")); err != nil || !workspaceStored(t, s, "b") {
		t.Errorf("write after the panic: %v", err)
	}
}

// When the writer cannot begin its transaction (here another connection
// holds the database's write lock past the busy timeout), every write
// waiting for it fails, promptly, and none is stored, then or later.
func TestBeginFailureFailsEveryWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := Open(context.Background(), path, &Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	other, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// The first write holds the writer in BEGIN for the busy timeout; the
	// others queue meanwhile and are taken as the next batch.
	const n = 8
	errs := make([]error, n)
	within(t, 10*time.Second, "writes while the database is locked", func() {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.writeTx(ctx, insertFn(fmt.Sprintf("ws%d", i)))
			}()
		}
		wg.Wait()
	})
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if !errors.Is(err, messaging.ErrUnavailable) {
			t.Errorf("write %d while the database is locked: %v, want ErrUnavailable", i, err)
		}
	}
	if err := s.writeTx(ctx, insertFn("after")); err != nil {
		t.Fatalf("write once the lock is released: %v", err)
	}
	for i := range n {
		if workspaceStored(t, s, fmt.Sprintf("ws%d", i)) {
			t.Errorf("write %d failed to begin but was stored", i)
		}
	}
}

// When the batch's COMMIT fails (here a deferred foreign key that one write
// of the batch violates), every write of the batch is reported failed and
// nothing of it is stored, then or by a later commit: the failed
// transaction is rolled back, not left open on the writer connection.
func TestCommitFailureFailsTheWholeBatch(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	if err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range []string{
			`CREATE TABLE fault_parent (id TEXT PRIMARY KEY)`,
			`CREATE TABLE fault_child (p TEXT REFERENCES fault_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var rec txRecorder
	fns := []writeFn{insertFn("a"), func(ctx context.Context, tx *sql.Tx) error {
		if err := insertFn("b")(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO fault_child VALUES ('missing')`)
		return err
	}, insertFn("c")}
	for i := range fns {
		fns[i] = rec.wrap(i, fns[i])
	}
	errs, _ := batchOf(t, s, fns, nil)
	batch := append(rec.sharing(t, 1), 1)
	for _, i := range batch {
		id := string(rune('a' + i))
		if errs[i] == nil {
			t.Errorf("write %s of the batch whose commit failed was reported done", id)
		} else if i != 1 && !errors.Is(errs[i], messaging.ErrUnavailable) {
			// A write that did nothing wrong may be retried: the
			// failed commit is not a verdict on it.
			t.Errorf("write %s of the batch whose commit failed: %v, want messaging.ErrUnavailable", id, errs[i])
		}
	}
	if err := s.writeTx(ctx, insertFn("after")); err != nil || !workspaceStored(t, s, "after") {
		t.Fatalf("write after the failed commit: %v", err)
	}
	for _, i := range batch {
		id := string(rune('a' + i))
		if workspaceStored(t, s, id) {
			t.Errorf("write %s of the batch whose commit failed was stored", id)
		}
	}
}

// A large write (writeLarge) runs in a transaction of its own with the
// writer's temporary files on disk, even when it is handed over together
// with other writes, which share a transaction with the journal in memory;
// the writes after it have it in memory again. The writer changes
// temp_store only between transactions, so the setting each write reads
// is its transaction's.
func TestLargeWriteRunsAloneWithItsJournalOnDisk(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	const large = 2
	var rec txRecorder
	var mu sync.Mutex
	temp := map[int]int{}
	heldBatch(t, s, 5, func(i int) {
		fn := rec.wrap(i, func(ctx context.Context, tx *sql.Tx) error {
			var v int
			if err := tx.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&v); err != nil {
				return err
			}
			mu.Lock()
			temp[i] = v
			mu.Unlock()
			return nil
		})
		write := s.writeTx
		if i == large {
			write = s.writeLarge
		}
		if err := write(context.Background(), fn); err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	})
	for i, v := range temp {
		want := 2 // MEMORY
		if i == large {
			want = 1 // FILE
		}
		if v != want {
			t.Errorf("write %d (large %v) ran with temp_store=%d, want %d", i, i == large, v, want)
		}
	}
	for j, tx := range rec.txs {
		if j != large && tx == rec.txs[large] {
			t.Errorf("the large write shared its transaction with write %d", j)
		}
	}
	batched := false
	for i := range 5 {
		for j := range i {
			batched = batched || (i != large && j != large && rec.txs[i] == rec.txs[j])
		}
	}
	if !batched {
		t.Fatalf("no two writes shared a transaction (%v): the batch was not formed", rec.txs)
	}
	var after int
	if err := s.writeTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&after)
	}); err != nil {
		t.Fatal(err)
	}
	if after != 2 {
		t.Errorf("a write after the large one: temp_store=%d, want 2 (MEMORY)", after)
	}
}

// The writes that may change every pending delivery of a webhook endpoint
// (disabling it by hand or on a 410, deleting it with its deliveries) are
// large writes; other updates of an endpoint are not.
func TestWebhookBacklogWritesAreLarge(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", Name: "A", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.WebhookEndpointCreate(ctx, &messaging.WebhookEndpoint{ID: "we_1", WorkspaceID: "a", URL: "https://hooks.example/1",
		SecretSealed: []byte("sealed"), CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	on, off, desc := true, false, "billing"
	for _, c := range []struct {
		name  string
		large bool
		call  func() error
	}{
		{"a new description", false, func() error {
			_, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_1", Description: &desc, At: at})
			return err
		}},
		{"disabling", true, func() error {
			_, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_1", Enabled: &off, At: at})
			return err
		}},
		{"enabling", false, func() error {
			_, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_1", Enabled: &on, At: at})
			return err
		}},
		{"a 410 that disables the endpoint", true, func() error {
			// No such delivery (not the sender's any more: nil); what
			// matters is how the write ran.
			return s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: 1, Owner: "h", State: record.DeliveryFailed,
				LastStatus: 410, DisableEndpoint: true, At: at})
		}},
		{"deleting", true, func() error { return s.WebhookEndpointDelete(ctx, "a", "we_1") }},
	} {
		before := s.larges.Load()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := s.larges.Load() - before; got != map[bool]int64{true: 1}[c.large] {
			t.Errorf("%s: %d large writes, want large=%v", c.name, got, c.large)
		}
	}
}
