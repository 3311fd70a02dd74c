package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/mattn/go-sqlite3"
	"github.com/ujumbe/messaging"
)

// Group commit. SQLite has one writer, and with synchronous=FULL every
// commit waits for the disk. Writes are therefore funnelled to one goroutine
// that runs every write request queued at the moment into one transaction,
// each under its own savepoint, and commits once: a request that fails rolls
// back to its savepoint without touching the others, and every caller
// returns only after the commit that holds its work (or with its error).
// Under concurrency this amortises one disk sync over many writes; a lone
// writer pays only for a savepoint.
//
// A caller's context decides only whether its write is handed over: once
// the writer has taken a request, it runs under a context that the caller
// cannot cancel (context.WithoutCancel), so one caller hanging up never
// interrupts a statement of the shared transaction, and the caller is told
// the outcome of the commit even if it no longer listens. After every
// request the writer checks that the transaction is still open: when SQLite
// rolled it back by itself (an I/O error, a full disk, a panic half-way
// through a request without savepoint), every request that ran in it is
// failed, none of them is committed, and the requests that had not run yet
// run in a new transaction. Nothing of a batch ever runs in autocommit.
//
// The writer keeps its statement journals in memory (PRAGMA temp_store =
// MEMORY, see Open): they hold the pages a statement or savepoint changes,
// a few dozen for the writes of a batch. A write that may change an
// unbounded number of rows (writeLarge: failing or deleting every pending
// delivery of a webhook endpoint) runs in a transaction of its own with
// its journal on disk, as SQLite keeps it by default, so that memory stays
// bounded however large the backlog.

// maxBatch bounds the requests committed together.
const maxBatch = 128

// errClosed is returned by writes on a closed store.
var errClosed = errors.New("sqlitestore: store is closed")

// errTxLost is returned to the requests of a transaction that SQLite rolled
// back because of another request of the same batch: nothing of theirs was
// stored.
var errTxLost = fmt.Errorf("sqlitestore: %w: the write transaction was rolled back by a failure of another write; nothing was stored", messaging.ErrUnavailable)

// Request states.
const (
	reqQueued int32 = iota
	reqRunning
	reqAbandoned
)

// writeFn is the work of a write request. ctx is the writer's context for
// the request: it carries the caller's values but not its cancellation.
type writeFn func(ctx context.Context, tx *sql.Tx) error

type writeReq struct {
	ctx context.Context
	fn  writeFn
	// single is true when fn changes the database with one statement at
	// most and returns an error only when that statement failed or changed
	// nothing: a failed statement is undone by SQLite by itself, so fn
	// needs no savepoint of its own.
	single bool
	// large is true when fn may change more pages than should be held in
	// memory: it runs alone, with the writer's temporary files on disk.
	large bool
	state atomic.Int32
	done  chan error
}

// writeTx runs fn in a write transaction, possibly shared with other
// concurrent writes (see group commit above), and returns once that
// transaction committed. fn's changes are rolled back if it returns an
// error. fn must use the context it is given, not the caller's. The error
// is interpreted.
func (s *Store) writeTx(ctx context.Context, fn writeFn) error {
	return s.write(ctx, &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

// writeOne is writeTx for a fn that changes the database with at most one
// statement, whatever it reads: it runs without a savepoint.
func (s *Store) writeOne(ctx context.Context, fn writeFn) error {
	return s.write(ctx, &writeReq{ctx: ctx, fn: fn, single: true, done: make(chan error, 1)})
}

// writeLarge is writeTx for a fn that may change an unbounded number of
// rows: it runs in a transaction of its own, with its statement journal on
// disk rather than in memory.
func (s *Store) writeLarge(ctx context.Context, fn writeFn) error {
	return s.write(ctx, &writeReq{ctx: ctx, fn: fn, large: true, done: make(chan error, 1)})
}

// write queues req for the writer and waits for its outcome. A cancelled
// ctx ends the wait only while the request has not started: a request that
// started is committed or failed as a unit, and its outcome is returned.
func (s *Store) write(ctx context.Context, req *writeReq) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.writes <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closing:
		return errClosed
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		if req.state.CompareAndSwap(reqQueued, reqAbandoned) {
			return ctx.Err() // never ran
		}
		return <-req.done // running: its outcome is decided by the commit
	}
}

// writer runs write requests until the store closes.
func (s *Store) writer() {
	defer close(s.writerDone)
	var held *writeReq // a large request taken while collecting: the next batch
	for {
		first := held
		held = nil
		if first == nil {
			select {
			case first = <-s.writes:
			case <-s.closing:
				return
			}
		}
		if first.large {
			s.runLarge(first)
			continue
		}
		batch := []*writeReq{first}
		// Let the goroutines that are ready to run (callers preparing
		// their next write, handlers decoding a request) reach the queue
		// before the batch is closed: a commit costs the same for one
		// write as for many. When none is ready this returns at once.
		runtime.Gosched()
	collect:
		for len(batch) < maxBatch {
			select {
			case r := <-s.writes:
				if r.large {
					held = r
					break collect
				}
				batch = append(batch, r)
			default:
				break collect
			}
		}
		s.runBatch(batch)
	}
}

// runLarge runs a large request (see writeLarge) in a transaction of its
// own with the writer's temporary files on disk, then puts them back in
// memory. SQLite fixes where a transaction's statement journal lives when
// the transaction begins writing, so the setting is changed between
// transactions. Should the request fail to move the journal to disk (a
// defence: nothing is known to make that PRAGMA fail between
// transactions), it is failed with nothing written; should the journal
// fail to come back to memory, the writer only goes on with it on disk
// (slower, never wrong).
func (s *Store) runLarge(r *writeReq) {
	s.larges.Add(1)
	if _, err := s.w.ExecContext(context.Background(), "PRAGMA temp_store = FILE"); err != nil {
		if r.state.CompareAndSwap(reqQueued, reqRunning) {
			r.done <- interpretError(err)
		}
		return
	}
	s.runBatch([]*writeReq{r})
	_, _ = s.w.ExecContext(context.Background(), "PRAGMA temp_store = MEMORY")
}

// runBatch runs batch in one transaction (more than one when SQLite rolls
// a transaction back by itself) and reports each request's outcome exactly
// once.
func (s *Store) runBatch(batch []*writeReq) {
	for len(batch) > 0 {
		batch = s.runTx(batch)
	}
}

// runTx runs the requests of todo in one transaction until they are all
// done or the transaction is lost; it reports the outcome of every request
// that ran and returns those that did not run yet. A request is taken
// (marked running, after which its caller can no longer abandon it) only
// once the transaction has begun: while the writer waits for the database
// (another process holding its lock), callers may still give up.
func (s *Store) runTx(todo []*writeReq) (rest []*writeReq) {
	bg := context.Background()
	conn, err := s.w.Conn(bg)
	if err != nil {
		failReqs(todo, err)
		return nil
	}
	defer conn.Close()
	tx, err := conn.BeginTx(bg, nil)
	if err != nil {
		failReqs(todo, err)
		return nil
	}
	// The requests still wanted; the others' callers gave up before they
	// ran.
	taken := todo[:0:0]
	for _, r := range todo {
		if takeReq(r) {
			taken = append(taken, r)
		}
	}
	todo = taken
	results := make([]error, 0, len(todo))
	for i, r := range todo {
		if err := r.ctx.Err(); err != nil {
			results = append(results, err) // cancelled before it ran: nothing to undo
			continue
		}
		ctx := context.WithoutCancel(r.ctx)
		var err error
		switch {
		case len(todo) == 1:
			err = runAlone(ctx, tx, r)
		case r.single:
			err = runSingle(ctx, tx, r)
		default:
			err = s.runSavepoint(ctx, tx, r)
		}
		results = append(results, err)
		if len(todo) == 1 && err != nil {
			break // runAlone rolled the transaction back
		}
		if open, cerr := inTx(conn); cerr != nil || !open {
			// SQLite rolled the transaction back (or it cannot be told
			// whether it did): every request that ran in it is undone.
			for j, r := range todo[:i+1] {
				if results[j] == nil {
					results[j] = errors.Join(errTxLost, cerr)
				}
				r.done <- interpretError(results[j])
			}
			_ = tx.Rollback() // undoes what is left, if anything
			return todo[i+1:]
		}
	}
	s.commitTx(conn, tx, todo, results)
	return nil
}

// takeReq marks r running unless its caller gave up first, and reports
// whether r is the writer's to run and to report.
func takeReq(r *writeReq) bool {
	return r.state.Load() == reqRunning || r.state.CompareAndSwap(reqQueued, reqRunning)
}

// failReqs reports err to each request of rs the writer can take.
func failReqs(rs []*writeReq, err error) {
	for _, r := range rs {
		if takeReq(r) {
			r.done <- interpretError(err)
		}
	}
}

// commitTx commits tx, the transaction in which the requests of todo ran on
// the writer's conn, and reports each request's outcome: results[i], or,
// for a request that succeeded, messaging.ErrUnavailable when the commit
// failed.
func (s *Store) commitTx(conn *sql.Conn, tx *sql.Tx, todo []*writeReq, results []error) {
	commitErr := tx.Commit()
	s.commits.Add(1)
	if errors.Is(commitErr, sql.ErrTxDone) {
		commitErr = nil // a lone failed request rolled the transaction back
	}
	if commitErr != nil {
		// A failed COMMIT may leave the transaction open (SQLITE_BUSY):
		// roll it back so that nothing of it is committed later.
		if open, err := inTx(conn); err != nil || open {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}
	for i, r := range todo {
		err := results[i]
		if err == nil && commitErr != nil {
			// A failed COMMIT is a fault of the storage (the schema
			// defers no constraint), never a verdict on one write:
			// every write of the batch may be retried.
			err = fmt.Errorf("sqlitestore: %w: the commit failed: %v", messaging.ErrUnavailable, commitErr)
		}
		r.done <- interpretError(err)
	}
}

// inTx reports whether the writer connection conn is inside a transaction
// (SQLite is not in autocommit mode).
func inTx(conn *sql.Conn) (open bool, err error) {
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("sqlitestore: writer connection is %T", dc)
		}
		open = !c.AutoCommit()
		return nil
	})
	return open, err
}

// runSavepoint runs one request under a savepoint of tx, rolling back to it
// when the request fails or panics.
func (s *Store) runSavepoint(ctx context.Context, tx *sql.Tx, r *writeReq) (err error) {
	if _, err := s.execTx(ctx, tx, "SAVEPOINT w"); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlitestore: panic in write: %v", p)
		}
		if err != nil {
			if _, rerr := s.execTx(ctx, tx, "ROLLBACK TO w"); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		if _, rerr := s.execTx(ctx, tx, "RELEASE w"); rerr != nil && err == nil {
			err = rerr
		}
	}()
	return r.fn(ctx, tx)
}

// errPanicSingle fails a request without savepoint that panicked: it may
// have changed the database before it panicked, so the transaction it ran
// in cannot be committed.
var errPanicSingle = errors.New("sqlitestore: panic in a write without savepoint")

// runSingle runs a request whose fn changes at most one statement's worth
// (see writeReq.single): a failed statement has undone itself. A panic may
// have come after the statement, so it rolls the whole transaction back
// (runTx then fails the requests that ran in it).
func runSingle(ctx context.Context, tx *sql.Tx, r *writeReq) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.Join(errPanicSingle, fmt.Errorf("%v", p))
			_ = tx.Rollback()
		}
	}()
	return r.fn(ctx, tx)
}

// runAlone runs the only request of a transaction; if it fails, the
// transaction is rolled back and the commit that follows commits nothing.
func runAlone(ctx context.Context, tx *sql.Tx, r *writeReq) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlitestore: panic in write: %v", p)
		}
		if err != nil {
			if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
				err = errors.Join(err, rerr)
			}
		}
	}()
	return r.fn(ctx, tx)
}

// stmt returns tx's use of q: a statement prepared once on the writer
// connection at Open when q is one of the hot writes (hotWrites), so they
// skip SQLite's parser, or q prepared in tx otherwise (an error preparing
// it is returned).
func (s *Store) stmt(tx *sql.Tx, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts[q]; ok {
		return tx.Stmt(st), nil
	}
	return tx.Prepare(q)
}

// execTx runs q in tx (prepared, see stmt).
func (s *Store) execTx(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	st, err := s.stmt(tx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// queryTx runs q in tx (prepared, see stmt) and returns its rows.
func (s *Store) queryTx(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(tx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// errScanner is a row whose statement could not run.
type errScanner struct{ err error }

// Scan returns the error that kept the statement from running.
func (e errScanner) Scan(...any) error { return e.err }

// rowTx runs q in tx (prepared, see stmt) and returns its one row; an error
// preparing q is returned by the row's Scan.
func (s *Store) rowTx(ctx context.Context, tx *sql.Tx, q string, args ...any) scanner {
	st, err := s.stmt(tx, q)
	if err != nil {
		return errScanner{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// prepareHot prepares hotWrites on the writer connection. It runs in Open,
// before the writer goroutine owns the connection.
func (s *Store) prepareHot(ctx context.Context) error {
	s.stmts = map[string]*sql.Stmt{}
	for _, q := range append([]string{"SAVEPOINT w", "ROLLBACK TO w", "RELEASE w"}, hotWrites...) {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("preparing %q: %w", q, err)
		}
		s.stmts[q] = st
	}
	return nil
}
