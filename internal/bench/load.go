package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ujumbe/messaging/record"

	_ "github.com/mattn/go-sqlite3"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// loop runs fn from workers goroutines, each calling it with its worker
// number and a counter of its own calls, until d has passed, and returns
// the number of calls completed per second. The first error stops
// everything.
func loop(ctx context.Context, workers int, d time.Duration, fn func(ctx context.Context, worker, i int) error) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var n atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				if err := fn(ctx, w, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return float64(n.Load()) / time.Since(start).Seconds(), nil
}

// each calls fn(k) for k from 0 to n-1 from workers goroutines and returns
// the first error.
func each(ctx context.Context, workers, n int, fn func(ctx context.Context, k int) error) error {
	var next atomic.Int64
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= n || ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
				if err := fn(ctx, k); err != nil {
					next.Store(int64(n)) // stop the others
					errs <- err
					return
				}
			}
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// benchWorkspace is the workspace every figure works in.
const benchWorkspace = "bench"

// benchKey is the API key of benchWorkspace (all scopes).
const benchKey = "bench_key_0123456789abcdef0123456789abcdef"

// newStoreService opens a fresh SQLite store in dir and a service on it with
// the bench workspace and its API key.
func newStoreService(ctx context.Context, dir string, p messaging.Provider, opts *messaging.Options) (*sqlitestore.Store, *messaging.Service, error) {
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "db.sqlite"), nil)
	if err != nil {
		return nil, nil, err
	}
	svc, err := messaging.New(st, p, opts)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	if err := ensureWorkspace(ctx, svc); err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return st, svc, nil
}

// ensureWorkspace creates the bench workspace and key unless they exist.
func ensureWorkspace(ctx context.Context, svc *messaging.Service) error {
	if _, err := svc.GetWorkspace(ctx, benchWorkspace); err == nil {
		return nil
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: benchWorkspace, Name: "Bench", Channels: svc.Channels()}); err != nil {
		return err
	}
	_, _, err := svc.Workspace(benchWorkspace).APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes(), Key: benchKey})
	return err
}

// openRaw opens path with database/sql on one connection with the PRAGMAs
// of sqlitestore's writer (WAL, synchronous=FULL, foreign keys, BEGIN
// IMMEDIATE, temporary files in memory), and checks that they took effect.
func openRaw(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_foreign_keys=1&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if _, err := db.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		_ = db.Close()
		return nil, err
	}
	var mode string
	var syncMode, fk, temp int
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&syncMode); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&temp); err != nil {
		_ = db.Close()
		return nil, err
	}
	if mode != "wal" || syncMode != 2 || fk != 1 || temp != 2 {
		_ = db.Close()
		return nil, errors.New("raw connection: PRAGMAs differ from sqlitestore's")
	}
	return db, nil
}

// phone returns a valid Kenyan mobile number (+254 70, 71 or 72), distinct
// for distinct i below 30,000,000.
func phone(i int) string {
	i %= 30_000_000
	return fmt.Sprintf("+2547%d%07d", i/10_000_000, i%10_000_000)
}
