package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/pgstore"
)

// Figure 9: the product beside River (github.com/riverqueue/river), the Go
// job queue on SQLite and PostgreSQL a program would otherwise put its
// outgoing messages in. Each row is the product's rate over River's, on
// the same database engine and durability; each side starts from a fresh
// database (River's schema made by its own rivermigrate).
//
// Accept (9a SQLite, 9c PostgreSQL): the product is Messages.Send of a
// text message (channel, recipient, body; no idempotency key, which River
// has no counterpart of without unique jobs) from 8 callers, each call
// returning once its message is committed; River is Client.Insert of one
// job whose arguments are the same recipient, channel, type and body (a
// JSON object of about the same bytes), from the same 8 callers, each call
// returning once its job is committed. Both sides do what their API does
// per call and nothing less: the product also validates the recipient and
// keeps its conversation; River writes its job row (and, on PostgreSQL,
// notifies its producers).
//
// Dispatch (9b SQLite, 9d PostgreSQL): N messages queued beforehand (by
// Messages.Send, not timed) moved to sent by the product's dispatcher (8
// workers, no per-sender pacing, a provider that answers at once) vs N
// jobs inserted beforehand (InsertMany, not timed) worked by a River
// client with one queue of MaxWorkers 8 and a worker that returns at once.
// Both are timed from Start until all N are recorded done in the database:
// the product's sent events are published after the status is stored, and
// River's completed events after its completer has written them (it marks
// finished jobs completed asynchronously, in batches: every 50 ms once 100
// are waiting, else every 250 ms; on SQLite one UPDATE per job in one
// transaction per batch, on PostgreSQL one UPDATE per batch); afterwards
// the database must hold N sent messages, or N completed jobs.
//
// River's producer fetches at most as many jobs as it has idle workers,
// and at most once per FetchCooldown, so with 8 workers it works at most 8
// jobs per cooldown: its default (100 ms) would hold it under 80 jobs/s,
// and the 2 ms of River's own benchmark (cmd/river riverbench, which runs
// 2,000 workers) under 4,000. River is given its best: FetchCooldown 1 ms,
// the least it accepts, and riverbench's FetchPollInterval, 20 ms.

// SQLite: the product is sqlitestore on a file on disk; River's
// database/sql pool on mattn/go-sqlite3 is opened with the PRAGMAs of
// sqlitestore's writer (journal_mode=WAL, synchronous=FULL, busy_timeout
// 5 s, foreign keys, BEGIN IMMEDIATE, temp_store=MEMORY; openRaw) on one
// connection, as riversqlite asks (SQLite has one writer; the product too
// writes through one connection, and reads through a pool of its own).
// PostgreSQL: each side has its own database on the -postgres server,
// pgstore.Open with its defaults vs a pgxpool with its defaults (the same
// pool size, the larger of 4 and the CPUs), so the same server settings
// (synchronous_commit) apply to both.

// riverVersion is the version of River in go.mod, printed in the rows.
const riverVersion = "v0.51.2"

// riverMessage is the arguments of River's job: the message the product
// accepts.
type riverMessage struct {
	To      string `json:"to"`
	Channel string `json:"channel"`
	Type    string `json:"type"`
	Text    string `json:"text"`
}

// Kind is the River job kind of riverMessage.
func (riverMessage) Kind() string { return "message" }

// riverNoopWorker works a riverMessage job by doing nothing, as the no-op
// provider sends at once.
type riverNoopWorker struct {
	river.WorkerDefaults[riverMessage]
}

// Work returns at once.
func (riverNoopWorker) Work(context.Context, *river.Job[riverMessage]) error { return nil }

// benchText is the body of every message and job.
const benchText = "Your order A-1042 has shipped."

func runRiver(ctx context.Context, c *config) ([]*row, error) {
	d := pick(c, 3*time.Second, 300*time.Millisecond)
	nSQLite := pick(c, 12_000, 300)
	nPG := pick(c, 8_000, 300)
	rows := []*row{
		{figure: "9a", name: "SQLite accept: Messages.Send of a text message, 8 callers, vs River Client.Insert of one job of the same payload per call",
			unit: "msg/s", higherBetter: true, goal: 1,
			baselineName: "River " + riverVersion + " (riversqlite, database/sql on one connection with sqlitestore's PRAGMAs): Client.Insert of one job per call, 8 callers"},
		{figure: "9b", name: fmt.Sprintf("SQLite dispatch: %s queued messages -> sent by the dispatcher, 8 workers, no-op provider, vs River working as many jobs", commas(int64(nSQLite))),
			unit: "msg/s", higherBetter: true, goal: 1,
			baselineName: fmt.Sprintf("River %s (riversqlite, as 9a): %s jobs inserted beforehand, one queue of MaxWorkers 8, no-op worker, FetchCooldown 1 ms (its least), until all are completed in the database", riverVersion, commas(int64(nSQLite)))},
		{figure: "9c", name: "PostgreSQL accept: Messages.Send of a text message on pgstore, 8 callers, vs River Client.Insert of one job of the same payload per call",
			unit: "msg/s", higherBetter: true, goal: 1,
			baselineName: "River " + riverVersion + " (riverpgxv5 on a pgxpool, database of its own): Client.Insert of one job per call, 8 callers"},
		{figure: "9d", name: fmt.Sprintf("PostgreSQL dispatch: %s queued messages on pgstore -> sent by the dispatcher, 8 workers, no-op provider, vs River working as many jobs", commas(int64(nPG))),
			unit: "msg/s", higherBetter: true, goal: 1,
			baselineName: fmt.Sprintf("River %s (riverpgxv5, as 9c): %s jobs inserted beforehand, one queue of MaxWorkers 8, no-op worker, FetchCooldown 1 ms (its least), until all are completed in the database", riverVersion, commas(int64(nPG)))},
	}
	tmpl, err := queuedDB(ctx, c, "river-queued", nSQLite)
	if err != nil {
		return nil, err
	}
	sides := []func(dir string, product bool) (float64, error){
		func(dir string, product bool) (float64, error) {
			if product {
				st, svc, err := newStoreService(ctx, dir, noopProvider{}, nil)
				if err != nil {
					return 0, err
				}
				defer st.Close()
				return sendLoop(ctx, svc, d)
			}
			return riverSQLite(ctx, dir, func(drv *riversqlite.Driver, _ *sql.DB) (float64, error) {
				return riverInsertLoop(ctx, drv, d)
			})
		},
		func(dir string, product bool) (float64, error) {
			if product {
				path := filepath.Join(dir, "queued.sqlite")
				if err := copyDB(tmpl, path); err != nil {
					return 0, err
				}
				t, err := dispatchProduct(ctx, path, nSQLite, noopProvider{}, 8)
				if err != nil {
					return 0, err
				}
				db, err := openRaw(ctx, path)
				if err != nil {
					return 0, err
				}
				defer db.Close()
				return float64(nSQLite) / t.Seconds(), checkCount("sent messages", nSQLite, db.QueryRowContext(ctx, sentMessages).Scan)
			}
			return riverSQLite(ctx, dir, func(drv *riversqlite.Driver, db *sql.DB) (float64, error) {
				return riverWork(ctx, drv, nSQLite, func(ctx context.Context) error {
					return checkCount("completed jobs", nSQLite, db.QueryRowContext(ctx, completedJobs).Scan)
				})
			})
		},
		func(_ string, product bool) (float64, error) {
			if product {
				return pgProduct(ctx, c, "river-accept-product", func(svc *messaging.Service, _ string) (float64, error) {
					return sendLoop(ctx, svc, d)
				})
			}
			return riverPG(ctx, c, "river-accept-river", func(drv *riverpgxv5.Driver, _ *pgxpool.Pool) (float64, error) {
				return riverInsertLoop(ctx, drv, d)
			})
		},
		func(_ string, product bool) (float64, error) {
			if product {
				return pgProduct(ctx, c, "river-dispatch-product", func(svc *messaging.Service, url string) (float64, error) {
					if err := queue(ctx, svc, nPG); err != nil {
						return 0, err
					}
					t, err := dispatchService(ctx, svc, nPG)
					if err != nil {
						return 0, err
					}
					pool, err := pgxpool.New(ctx, url)
					if err != nil {
						return 0, err
					}
					defer pool.Close()
					return float64(nPG) / t.Seconds(), checkCount("sent messages", nPG, pool.QueryRow(ctx, sentMessages).Scan)
				})
			}
			return riverPG(ctx, c, "river-dispatch-river", func(drv *riverpgxv5.Driver, pool *pgxpool.Pool) (float64, error) {
				return riverWork(ctx, drv, nPG, func(ctx context.Context) error {
					return checkCount("completed jobs", nPG, pool.QueryRow(ctx, completedJobs).Scan)
				})
			})
		},
	}
	for i, r := range rows {
		if err := c.measure(r, "river-"+r.figure, sides[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", r.figure, err)
		}
	}
	return rows, nil
}

// The counts that check, after the timing, that each side's work is in its
// database.
const (
	sentMessages  = "SELECT count(*) FROM messages WHERE status = 'sent'"
	completedJobs = "SELECT count(*) FROM river_job WHERE state = 'completed'"
)

// checkCount scans a count with scan and fails unless it is want.
func checkCount(what string, want int, scan func(...any) error) error {
	var n int
	if err := scan(&n); err != nil {
		return err
	}
	if n != want {
		return fmt.Errorf("%d %s in the database, want %d", n, what, want)
	}
	return nil
}

// send sends the k-th text message of the bench workspace.
func send(ctx context.Context, ms *messaging.Messages, k int) error {
	_, err := ms.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: phone(k), Type: "text", Text: benchText})
	return err
}

// sendLoop calls Messages.Send from acceptCallers callers for d, after a
// warm-up of d/10, and returns the messages accepted per second.
func sendLoop(ctx context.Context, svc *messaging.Service, d time.Duration) (float64, error) {
	ms := svc.Workspace(benchWorkspace).Messages
	fn := func(ctx context.Context, w, i int) error { return send(ctx, ms, w*1_000_000+i) }
	if _, err := loop(ctx, acceptCallers, d/10, func(ctx context.Context, w, i int) error { return fn(ctx, w+100, i) }); err != nil {
		return 0, err
	}
	return loop(ctx, acceptCallers, d, fn)
}

// queue sends n messages through Messages.Send from acceptCallers callers,
// leaving them queued (svc is not started).
func queue(ctx context.Context, svc *messaging.Service, n int) error {
	ms := svc.Workspace(benchWorkspace).Messages
	return each(ctx, acceptCallers, n, func(ctx context.Context, k int) error { return send(ctx, ms, k) })
}

// pgProduct runs fn on a service dispatching with 8 workers and a no-op
// provider, on pgstore in a fresh database (whose URL fn is given too),
// with the bench workspace.
func pgProduct(ctx context.Context, c *config, name string, fn func(*messaging.Service, string) (float64, error)) (float64, error) {
	url, drop, err := c.freshPostgres(ctx, name)
	if err != nil {
		return 0, err
	}
	defer drop()
	st, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	svc, err := messaging.New(st, noopProvider{}, dispatchOptions(8))
	if err != nil {
		return 0, err
	}
	if err := ensureWorkspace(ctx, svc); err != nil {
		return 0, err
	}
	return fn(svc, url)
}

// riverSQLite runs fn on River's SQLite driver over a fresh, migrated
// database file in dir, opened as openRaw opens the baselines' files.
func riverSQLite(ctx context.Context, dir string, fn func(*riversqlite.Driver, *sql.DB) (float64, error)) (float64, error) {
	db, err := openRaw(ctx, filepath.Join(dir, "river.sqlite"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	drv := riversqlite.New(db)
	if err := riverMigrate(ctx, drv); err != nil {
		return 0, err
	}
	return fn(drv, db)
}

// riverPG runs fn on River's pgx driver over a pgxpool on a fresh,
// migrated database.
func riverPG(ctx context.Context, c *config, name string, fn func(*riverpgxv5.Driver, *pgxpool.Pool) (float64, error)) (float64, error) {
	url, drop, err := c.freshPostgres(ctx, name)
	if err != nil {
		return 0, err
	}
	defer drop()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	drv := riverpgxv5.New(pool)
	if err := riverMigrate(ctx, drv); err != nil {
		return 0, err
	}
	return fn(drv, pool)
}

// riverMigrate brings River's schema up to date with rivermigrate.
func riverMigrate[TTx any](ctx context.Context, drv riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(drv, nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// newRiverClient returns a River client whose one queue, when workers is
// above 0, runs riverNoopWorker with that many workers, fetching as often
// as River allows; with workers 0 it only inserts.
func newRiverClient[TTx any](drv riverdriver.Driver[TTx], workers int) (*river.Client[TTx], error) {
	ws := river.NewWorkers()
	river.AddWorker(ws, riverNoopWorker{})
	cfg := &river.Config{
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Workers: ws,
	}
	if workers > 0 {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}}
		cfg.FetchCooldown = river.FetchCooldownMin
		cfg.FetchPollInterval = 20 * time.Millisecond
	}
	return river.NewClient(drv, cfg)
}

// riverArgs returns the arguments of the k-th job: the k-th message.
func riverArgs(k int) riverMessage {
	return riverMessage{To: phone(k), Channel: "whatsapp", Type: "text", Text: benchText}
}

// riverInsertLoop calls Client.Insert from acceptCallers callers for d,
// after a warm-up of d/10, and returns the jobs inserted per second.
func riverInsertLoop[TTx any](ctx context.Context, drv riverdriver.Driver[TTx], d time.Duration) (float64, error) {
	client, err := newRiverClient(drv, 0)
	if err != nil {
		return 0, err
	}
	fn := func(ctx context.Context, w, i int) error {
		_, err := client.Insert(ctx, riverArgs(w*1_000_000+i), nil)
		return err
	}
	if _, err := loop(ctx, acceptCallers, d/10, func(ctx context.Context, w, i int) error { return fn(ctx, w+100, i) }); err != nil {
		return 0, err
	}
	return loop(ctx, acceptCallers, d, fn)
}

// riverWork inserts n jobs (not timed), then starts a client working them
// with 8 workers and returns the jobs completed per second, counted by
// River's completed events (sent once the completer has stored them); then
// check checks the database.
func riverWork[TTx any](ctx context.Context, drv riverdriver.Driver[TTx], n int, check func(context.Context) error) (float64, error) {
	client, err := newRiverClient(drv, 8)
	if err != nil {
		return 0, err
	}
	const batch = 5_000
	params := make([]river.InsertManyParams, 0, batch)
	for k := 0; k < n; k += batch {
		params = params[:0]
		for j := k; j < min(k+batch, n); j++ {
			params = append(params, river.InsertManyParams{Args: riverArgs(j)})
		}
		if _, err := client.InsertMany(ctx, params); err != nil {
			return 0, err
		}
	}
	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{ChanSize: n,
		Kinds: []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled}})
	defer cancel()
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		return 0, err
	}
	defer func() { _ = client.Stop(context.Background()) }()
	timeout := time.After(5 * time.Minute)
	for done := 0; done < n; {
		select {
		case e, ok := <-events:
			if !ok {
				return 0, fmt.Errorf("river: subscription closed after %d of %d jobs", done, n)
			}
			if e.Kind != river.EventKindJobCompleted {
				return 0, fmt.Errorf("river: job %d: %s", e.Job.ID, e.Kind)
			}
			done++
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-timeout:
			return 0, fmt.Errorf("river: %d of %d jobs completed after 5 minutes", done, n)
		}
	}
	elapsed := time.Since(start)
	if err := check(ctx); err != nil {
		return 0, fmt.Errorf("river: %w", err)
	}
	return float64(n) / elapsed.Seconds(), nil
}
