package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
)

// Group commit. SQLite has one writer, and with synchronous=FULL every
// commit waits for the disk. Writes are therefore funnelled to one goroutine
// that runs every write request queued at the moment into one transaction,
// each under its own savepoint, and commits once: a request that fails rolls
// back to its savepoint without touching the others, and every caller
// returns only after the commit that holds its work (or with its error).
// Under concurrency this amortises one disk sync over many writes; a lone
// writer pays only for a savepoint.

// maxBatch bounds the requests committed together.
const maxBatch = 128

// errClosed is returned by writes on a closed store.
var errClosed = errors.New("sqlitestore: store is closed")

// Request states.
const (
	reqQueued int32 = iota
	reqRunning
	reqAbandoned
)

type writeReq struct {
	ctx context.Context
	fn  func(tx *sql.Tx) error
	// single is true when fn changes the database with one statement at
	// most: if that statement fails, SQLite undoes it by itself, so fn
	// needs no savepoint of its own.
	single bool
	state  atomic.Int32
	done   chan error
}

// writeTx runs fn in a write transaction, possibly shared with other
// concurrent writes (see group commit above), and returns once that
// transaction committed. fn's changes are rolled back if it returns an
// error. The error is interpreted.
func (s *Store) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.write(ctx, &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

// writeOne is writeTx for a fn that changes the database with at most one
// statement, whatever it reads: it runs without a savepoint.
func (s *Store) writeOne(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.write(ctx, &writeReq{ctx: ctx, fn: fn, single: true, done: make(chan error, 1)})
}

// write queues req for the writer and waits for its outcome.
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
	for {
		var first *writeReq
		select {
		case first = <-s.writes:
		case <-s.closing:
			return
		}
		batch := []*writeReq{first}
	collect:
		for len(batch) < maxBatch {
			select {
			case r := <-s.writes:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		s.runBatch(batch)
	}
}

// runBatch runs batch in one transaction and reports each request's outcome.
func (s *Store) runBatch(batch []*writeReq) {
	results := make([]error, len(batch))
	ran := make([]bool, len(batch))
	tx, err := s.w.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range batch {
			if r.state.CompareAndSwap(reqQueued, reqRunning) {
				r.done <- interpretError(err)
			}
		}
		return
	}
	for i, r := range batch {
		if !r.state.CompareAndSwap(reqQueued, reqRunning) {
			continue // the caller gave up before it ran
		}
		ran[i] = true
		if err := r.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		switch {
		case len(batch) == 1:
			results[i] = runAlone(tx, r)
		case r.single:
			results[i] = runSingle(tx, r)
		default:
			results[i] = s.runSavepoint(tx, r)
		}
	}
	commitErr := tx.Commit()
	if errors.Is(commitErr, sql.ErrTxDone) {
		commitErr = nil // a lone failed request rolled the transaction back
	}
	for i, r := range batch {
		if !ran[i] {
			continue
		}
		err := results[i]
		if err == nil && commitErr != nil {
			err = commitErr
		}
		r.done <- interpretError(err)
	}
}

// runSavepoint runs one request under a savepoint of tx, rolling back to it
// when the request fails or panics.
func (s *Store) runSavepoint(tx *sql.Tx, r *writeReq) (err error) {
	if _, err := s.stmt(tx, "SAVEPOINT w").Exec(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlitestore: panic in write: %v", p)
		}
		if err != nil {
			if _, rerr := s.stmt(tx, "ROLLBACK TO w").Exec(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		if _, rerr := s.stmt(tx, "RELEASE w").Exec(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	return r.fn(tx)
}

// runSingle runs a request whose fn changes at most one statement's worth
// (see writeReq.single): a failed statement has undone itself.
func runSingle(tx *sql.Tx, r *writeReq) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlitestore: panic in write: %v", p)
		}
	}()
	return r.fn(tx)
}

// runAlone runs the only request of a batch; if it fails, the commit that
// follows commits nothing of it because the whole transaction is rolled
// back instead.
func runAlone(tx *sql.Tx, r *writeReq) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlitestore: panic in write: %v", p)
		}
		if err != nil {
			if rerr := tx.Rollback(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}()
	return r.fn(tx)
}

// stmt returns tx's use of q: a statement prepared once on the writer
// connection at Open when q is one of the hot writes (hotWrites), so they
// skip SQLite's parser, or q prepared in tx otherwise.
func (s *Store) stmt(tx *sql.Tx, q string) *sql.Stmt {
	if st, ok := s.stmts[q]; ok {
		return tx.Stmt(st)
	}
	st, err := tx.Prepare(q)
	if err != nil {
		return tx.Stmt(s.stmts["SAVEPOINT w"]) // never reached with valid SQL
	}
	return st
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
