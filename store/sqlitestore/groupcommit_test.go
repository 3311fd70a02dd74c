package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// batchOf runs the writes fns concurrently so that the writer takes them in
// one batch: a first write holds the writer until every other write is
// waiting to be handed over. It returns each write's error and the order in
// which the writer ran them (by index).
func batchOf(t *testing.T, s *Store, fns []writeFn, single []bool) (errs []error, order []int) {
	t.Helper()
	ctx := context.Background()
	hold := make(chan struct{})
	held := make(chan struct{})
	go func() {
		_ = s.writeTx(ctx, func(context.Context, *sql.Tx) error {
			close(held)
			<-hold
			return nil
		})
	}()
	<-held
	var mu sync.Mutex
	errs = make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wrapped := func(ctx context.Context, tx *sql.Tx) error {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				return fn(ctx, tx)
			}
			if single != nil && single[i] {
				errs[i] = s.writeOne(ctx, wrapped)
			} else {
				errs[i] = s.writeTx(ctx, wrapped)
			}
		}()
	}
	// Let every write reach the writer's unbuffered queue, where the
	// writer collects them into one batch once it is free.
	time.Sleep(100 * time.Millisecond)
	close(hold)
	wg.Wait()
	return errs, order
}

func insertFn(id string) writeFn {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`, id, "W "+id, fmtTime(t0))
		return err
	}
}

func workspaceStored(t *testing.T, s *Store, id string) bool {
	t.Helper()
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM workspaces WHERE id = ?`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// A write that makes SQLite roll the shared transaction back (here by
// ending it; in production an I/O error, a full disk or an interrupt) must
// not leave the writes after it to run in autocommit, nor the writes before
// it reported done: those before are reported failed and are not stored,
// those after run in a new transaction and are stored.
func TestLostTransactionFailsOnlyWhatRanInIt(t *testing.T) {
	for _, single := range []bool{false, true} {
		t.Run(fmt.Sprintf("single=%v", single), func(t *testing.T) {
			s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
			const n = 9
			fns := make([]writeFn, n)
			singles := make([]bool, n)
			for i := range fns {
				fns[i] = insertFn(fmt.Sprintf("ws%d", i))
				singles[i] = single
			}
			// Write 4 ends the transaction behind the writer's back.
			fns[4] = func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `ROLLBACK`)
				return err
			}
			singles[4] = true
			errs, order := batchOf(t, s, fns, singles)
			if len(order) != n {
				t.Fatalf("ran %d writes, want %d (order %v)", len(order), n, order)
			}
			pos := slices.Index(order, 4)
			if pos == 0 || pos == n-1 {
				t.Logf("the losing write ran at position %d of %v: the test proves less", pos, order)
			}
			for p, i := range order {
				if i == 4 {
					continue
				}
				id := fmt.Sprintf("ws%d", i)
				stored := workspaceStored(t, s, id)
				if (errs[i] == nil) != stored {
					t.Errorf("write %d (position %d, losing write at %d): error %v, stored %v", i, p, pos, errs[i], stored)
				}
				if p > pos && errs[i] != nil {
					t.Errorf("write %d ran after the lost transaction, in a new one, but failed: %v", i, errs[i])
				}
				if p < pos && errs[i] == nil {
					t.Errorf("write %d ran in the lost transaction but was reported done", i)
				}
			}
			if errs[4] == nil {
				t.Errorf("the write that lost the transaction was reported done")
			}
			// The store still works.
			if err := s.writeTx(context.Background(), insertFn("after")); err != nil || !workspaceStored(t, s, "after") {
				t.Fatalf("write after the batch: %v", err)
			}
		})
	}
}

// A write of a batch that panics after its statement, without a savepoint,
// cannot be undone alone: the batch's transaction is rolled back and the
// writes that ran in it are reported failed.
func TestPanicWithoutSavepointDoesNotCommitHalf(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	fns := []writeFn{insertFn("a"), func(ctx context.Context, tx *sql.Tx) error {
		if err := insertFn("b")(ctx, tx); err != nil {
			return err
		}
		panic("after the insert")
	}, insertFn("c")}
	errs, order := batchOf(t, s, fns, []bool{false, true, false})
	for _, i := range order {
		id := string(rune('a' + i))
		if stored := workspaceStored(t, s, id); (errs[i] == nil) != stored {
			t.Errorf("write %s: error %v, stored %v (order %v)", id, errs[i], stored, order)
		}
	}
	if errs[1] == nil || workspaceStored(t, s, "b") {
		t.Errorf("the panicking write: error %v, stored %v; want an error and nothing stored", errs[1], workspaceStored(t, s, "b"))
	}
}

// A statement that cannot be prepared fails its write with the prepare
// error; it never runs something else in its place.
func TestPrepareErrorReachesTheCaller(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	err := s.writeTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		_, err := s.execTx(ctx, tx, `INSERT INTO no_such_table VALUES (1)`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("write with an unpreparable statement: %v, want the prepare error", err)
	}
	err = s.writeTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		return s.rowTx(ctx, tx, `SELECT nope FROM workspaces`).Scan(new(int))
	})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("row of an unpreparable statement: %v, want the prepare error", err)
	}
}

// A store write whose statement cannot be prepared (here because its
// table was dropped behind the store's back) fails with the prepare error
// and stores nothing: it must never report success for a write that did
// not happen, as it did when a statement that failed to prepare was
// replaced by the savepoint statement.
func TestUnpreparableStoreWriteFails(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	if err := s.SMSAccountCreate(ctx, &sms.Account{PartnerID: "p", KeyHash: []byte("h"), Senders: []string{"ACME"},
		Credit: sms.Credits(10), TimeZone: "UTC", CostPerSegment: sms.Credits(1), CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DROP TABLE sms_idempotency`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	msg := &sms.Message{ID: "sms_1", PartnerID: "p", Mobile: "254712345678", Text: "hi", Sender: "ACME", Encoding: sms.EncodingGSM7,
		Segments: 1, Cost: sms.Credits(1), Status: sms.StatusQueued, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}
	rec := &sms.Idempotency{PartnerID: "p", Key: "k", RequestHash: []byte("h"), Answer: []byte("{}"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	res, prev, err := s.SMSAcceptIdempotent(ctx, &sms.AcceptIdempotentParams{Record: rec, Messages: []*sms.Message{msg}})
	if err == nil || !strings.Contains(err.Error(), "sms_idempotency") {
		t.Fatalf("keyed accept without its table: results %v, previous %v, error %v; want the prepare error", res, prev, err)
	}
	a, err := s.SMSAccountGet(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if a.Credit != sms.Credits(10) {
		t.Errorf("credit after the failed accept = %v; want %v (nothing debited)", a.Credit, sms.Credits(10))
	}
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM sms_messages`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d messages stored by the failed accept (err %v); want 0", n, err)
	}
}

// A caller that cancels while its write runs is told the truth: the write
// runs to its end under the writer's context, and it is reported done
// because it was stored.
func TestCancelWhileRunningReportsTheCommit(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx, cancel := context.WithCancel(context.Background())
	err := s.writeTx(ctx, func(wctx context.Context, tx *sql.Tx) error {
		cancel()
		if wctx.Err() != nil {
			return errors.New("the write's context was cancelled with the caller's")
		}
		return insertFn("a")(wctx, tx)
	})
	if err != nil || !workspaceStored(t, s, "a") {
		t.Fatalf("write cancelled while running: error %v, stored %v; want done and stored", err, workspaceStored(t, s, "a"))
	}
}

// heldBatch runs call(0) … call(n-1) concurrently while the writer is held
// by another write, so that the writes they make are handed over together
// and the writer takes them as one batch (up to maxBatch). It returns once
// every call returned.
func heldBatch(t *testing.T, s *Store, n int, call func(i int)) {
	t.Helper()
	hold := make(chan struct{})
	held := make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		holder <- s.writeTx(context.Background(), func(context.Context, *sql.Tx) error {
			close(held)
			<-hold
			return nil
		})
	}()
	<-held
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call(i)
		}()
	}
	// Let every write reach the writer's unbuffered queue (as batchOf
	// does); the assertions never depend on it, only on what is stored.
	time.Sleep(100 * time.Millisecond)
	close(hold)
	wg.Wait()
	if err := <-holder; err != nil {
		t.Fatalf("holding write: %v", err)
	}
}

// Concurrent SMS accepts share one transaction; an accept that fails as a
// whole (here after debiting and inserting its first message, because its
// second is for a missing account) must leave nothing behind, while the
// valid accepts of the same batch commit: the credit and the stored rows
// are exactly those of the valid accepts.
func TestBatchKeepsNothingOfFailedWrites(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	if err := s.SMSAccountCreate(ctx, &sms.Account{PartnerID: "p", KeyHash: []byte("h"), Senders: []string{"ACME"},
		Credit: sms.Credits(1000), TimeZone: "UTC", CostPerSegment: sms.Credits(1), CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	msg := func(id, partner string, cost int64) *sms.Message {
		return &sms.Message{ID: id, PartnerID: partner, Mobile: "254712345678", Text: "hi", Sender: "ACME", Encoding: sms.EncodingGSM7,
			Segments: 1, Cost: sms.Credits(cost), Status: sms.StatusQueued, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}
	}
	// Of every three accepts, one is valid (cost 1), one debits and
	// inserts a message (cost 2) before failing on a missing account, and
	// one fails on a missing account at once.
	const n = 96
	errs := make([]error, n)
	heldBatch(t, s, n, func(i int) {
		var msgs []*sms.Message
		switch i % 3 {
		case 0:
			msgs = []*sms.Message{msg(fmt.Sprintf("ok%d", i), "p", 1)}
		case 1:
			msgs = []*sms.Message{msg(fmt.Sprintf("half%d", i), "p", 2), msg(fmt.Sprintf("ghost%d", i), "ghost", 1)}
		case 2:
			msgs = []*sms.Message{msg(fmt.Sprintf("ghost%d", i), "ghost", 1)}
		}
		_, errs[i] = s.SMSAccept(ctx, msgs)
	})
	valid := 0
	for i, err := range errs {
		if i%3 == 0 {
			valid++
			if err != nil {
				t.Errorf("valid accept %d: %v", i, err)
			}
		} else if !errors.Is(err, messaging.ErrNotFound) {
			t.Errorf("failing accept %d: %v, want ErrNotFound", i, err)
		}
	}
	a, err := s.SMSAccountGet(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	type state struct {
		Credit sms.Credit
		Rows   int
	}
	got := state{Credit: a.Credit}
	if err := s.r.QueryRow(`SELECT count(*) FROM sms_messages`).Scan(&got.Rows); err != nil {
		t.Fatal(err)
	}
	want := state{Credit: sms.Credits(1000 - int64(valid)), Rows: valid}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after %d valid and %d failing accepts in one batch (-want +got):\n%s", valid, n-valid, diff)
	}
}

// A write whose caller cancels once the write was taken into a batch is
// reported as the batch decided it: a write that ran before the
// cancellation was committed and is reported done, a write that had not run
// yet is not run and is reported cancelled. Never an error for a stored
// write, nor success for a write that is missing. The even writes cancel
// their own caller while they run (so some writes are always cancelled
// after they ran); the odd ones are cancelled by another write of the
// batch, wherever the writer runs it.
func TestCancelInBatchReportsTheCommit(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	const n = 16
	ctxs := make([]context.Context, n)
	cancels := make([]context.CancelFunc, n)
	for i := range ctxs {
		ctxs[i], cancels[i] = context.WithCancel(context.Background())
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	var mu sync.Mutex
	var ran []int // the writes that ran, in order; -1 is the canceller
	errs := make([]error, n)
	heldBatch(t, s, n+1, func(i int) {
		if i == n {
			// The canceller: cancels the odd callers when the writer
			// runs it, somewhere in the batch.
			_ = s.writeTx(context.Background(), func(context.Context, *sql.Tx) error {
				mu.Lock()
				ran = append(ran, -1)
				mu.Unlock()
				for j := 1; j < n; j += 2 {
					cancels[j]()
				}
				return nil
			})
			return
		}
		errs[i] = s.writeTx(ctxs[i], func(ctx context.Context, tx *sql.Tx) error {
			mu.Lock()
			ran = append(ran, i)
			mu.Unlock()
			if err := insertFn(fmt.Sprintf("ws%d", i))(ctx, tx); err != nil {
				return err
			}
			if i%2 == 0 {
				cancels[i]()
			}
			return nil
		})
	})
	pos := slices.Index(ran, -1)
	if pos < 0 {
		t.Fatalf("the canceller did not run (ran %v)", ran)
	}
	if pos == 0 || pos == len(ran)-1 {
		t.Logf("the canceller ran at position %d of %v: the odd writes prove less", pos, ran)
	}
	for i := range n {
		stored := workspaceStored(t, s, fmt.Sprintf("ws%d", i))
		ranBefore := i%2 == 0 || slices.Index(ran[:pos], i) >= 0
		if ranBefore && (errs[i] != nil || !stored) {
			t.Errorf("write %d ran before its caller cancelled (ran %v): error %v, stored %v; want done and stored", i, ran, errs[i], stored)
		}
		if !ranBefore && stored {
			t.Errorf("write %d was cancelled before it ran (ran %v) but was stored (error %v)", i, ran, errs[i])
		}
		if (errs[i] == nil) != stored {
			t.Errorf("write %d: error %v, stored %v", i, errs[i], stored)
		}
	}
}
