// Package pgstore is a driver.Store and sms.Store on PostgreSQL, for
// running several server instances on one database. It uses
// github.com/jackc/pgx/v5 through a pgxpool.Pool.
//
// # Several instances
//
// Every claim of work (queued messages by the dispatcher, pending webhook
// deliveries, due SMS) is one statement that picks its batch with
// SELECT ... ORDER BY due_at LIMIT n FOR UPDATE SKIP LOCKED through a
// partial index holding only pending rows, and moves the rows' due time to
// the end of a lease in the same statement. Two dispatchers in two
// processes therefore never hold the same message, do not wait for each
// other's locks, and a process that dies leaves its leased rows to be
// claimed again when the lease ends. Leases compare the instances' own
// clocks (the Service's Clock) with each other: keep the machines'
// clocks synchronised (NTP) to well within a lease.
//
// Uniqueness (contact phone and email, template name and language,
// idempotency keys, API key hashes, the channel and account id of a live
// channel connection) is enforced by unique indexes (a live connection's
// WABA id by ConnectionPut under an advisory lock), and one
// function, interpretError, turns PostgreSQL's errors into the store
// sentinels. The SMS credit is debited by one conditional UPDATE (credit
// >= cost) and guarded by a CHECK constraint, so it never goes negative.
//
// Contact search is index-backed as in sqlitestore: the folded names, the
// email key and the phone digits are stored in their own COLLATE "C"
// columns, each indexed with the workspace id, and a prefix search is a
// disjunction of btree range scans (col >= prefix AND col < successor),
// never LIKE, so '%' and '_' in a query are literal.
//
// # Schema and migrations
//
// The schema is embedded (migrations/NNNN_name.sql) and migrated by Open
// and New inside one transaction that first takes
// pg_advisory_xact_lock, so instances starting at the same time migrate
// one after the other; the applied versions are rows of the table
// schema_migrations. The runner is the forty lines of migrate, on purpose
// rather than pressly/goose: goose's classic API keeps its dialect and file
// system in package-level variables (this project allows no global state),
// goes through database/sql rather than pgx, and would run the migrations
// outside the transaction that holds the advisory lock. Migrations only
// ever move forward; a database newer than the program is refused.
//
// Timestamps are stored as BIGINT nanoseconds since the Unix epoch, because
// timestamptz keeps only microseconds and the stores keep Go times exactly.
//
// # Rate limits
//
// RateLimiter returns an httpapi.Limiter whose token buckets live in the
// database (one UPSERT per request), so the limits of the REST API hold
// across instances.
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/migrationfiles"
)

var _ driver.Store = (*Store)(nil)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure a Store. A nil *Options means all defaults.
type Options struct {
	// Schema is the PostgreSQL schema holding the store's tables. Open
	// creates it if missing and makes it the search_path of every
	// connection. Default: empty, the connection's own search_path
	// (usually public). Only Open takes it: with New, set search_path in
	// the pool's ConnConfig.RuntimeParams.
	Schema string
	// MaxConns is the size of the connection pool Open creates. Default:
	// pool_max_conns of the connection string, else pgxpool's default
	// (the larger of 4 and the number of CPUs). Only Open takes it.
	MaxConns int32
}

// Store is a driver.Store and sms.Store on PostgreSQL. It is safe for
// concurrent use, by any number of Stores in any number of processes on
// the same database. Create it with Open or New and release it with
// Close.
type Store struct {
	pool      *pgxpool.Pool
	ownPool   bool
	closeOnce sync.Once
	// limiter is the store's RateLimiter, created on first use.
	limiterOnce sync.Once
	limiter     *RateLimiter
}

// Open connects to the database of connString (a postgres:// URL or a
// key=value DSN, as pgxpool.ParseConfig takes it), migrates its schema to
// the latest version and returns a Store owning the pool. A nil opts means
// defaults.
func Open(ctx context.Context, connString string, opts *Options) (*Store, error) {
	o := defaults.Of(opts)
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("pgstore: Open: %w", err)
	}
	if o.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.Schema}.Sanitize()
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: Open: %w", err)
	}
	if err := migrate(ctx, pool, o.Schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: migrate: %w", err)
	}
	return &Store{pool: pool, ownPool: true}, nil
}

// New returns a Store on an existing pool, after migrating the schema of
// the pool's search_path to the latest version. Close does not close the
// pool. opts.Schema and opts.MaxConns must be empty: configure the pool
// instead.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New: pool is nil")
	}
	if opts != nil && (opts.Schema != "" || opts.MaxConns != 0) {
		return nil, errors.New("pgstore: New: Options.Schema and Options.MaxConns apply to Open; set search_path and the pool size on the pool's config")
	}
	if err := migrate(ctx, pool, ""); err != nil {
		return nil, fmt.Errorf("pgstore: migrate: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool if Open created it, waiting for connections in use
// to be released. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.ownPool {
			s.pool.Close()
		}
	})
	return nil
}

// migrations returns the embedded migrations, ordered by version. Files are
// named NNNN_description.sql with versions 1, 2, 3... without gaps.
func migrations() ([]migrationfiles.Migration, error) {
	return migrationfiles.Load(migrationFS, "migrations")
}

// SchemaVersion is the schema version this package migrates databases to.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// advisoryLockKey is the key of the advisory lock that serialises the
// migrations of one schema across processes.
func advisoryLockKey(schema string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("github.com/ujumbe/messaging/store/pgstore\x00" + schema))
	return int64(h.Sum64())
}

// migrate applies the migrations newer than the schema's version, in one
// transaction holding a transaction-scoped advisory lock: a second process
// migrating at the same time waits for the first one's commit, then finds
// nothing left to do. With a non-empty schema the schema is created first.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, advisoryLockKey(schema)); err != nil {
		return err
	}
	if schema != "" {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	var cur int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&cur); err != nil {
		return err
	}
	if cur > len(ms) {
		return fmt.Errorf("database schema version %d is newer than this program's %d", cur, len(ms))
	}
	for _, m := range ms[cur:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return tx.Commit(ctx)
}

// PostgreSQL error codes the store interprets.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

// interpretError maps database errors to the store sentinels: no rows to
// messaging.ErrNotFound, unique violations to messaging.ErrConflict and
// foreign key violations (a record of a missing workspace or account) to
// messaging.ErrNotFound. The sentinels pass through unchanged; any other
// error is wrapped (context errors stay visible to errors.Is).
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	var optedOut *driver.OptedOutError
	if errors.Is(err, messaging.ErrNotFound) || errors.Is(err, messaging.ErrConflict) || errors.Is(err, driver.ErrStale) ||
		errors.Is(err, messaging.ErrUnavailable) || errors.As(err, &optedOut) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return messaging.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUniqueViolation:
			return messaging.ErrConflict
		case codeForeignKeyViolation:
			return messaging.ErrNotFound
		}
	}
	if unavailable(err) {
		return fmt.Errorf("pgstore: %w: %w", messaging.ErrUnavailable, err)
	}
	return fmt.Errorf("pgstore: %w", err)
}

// unavailable reports whether err says that the database could not be
// reached or could not do the work for now: a failed connect, a connection
// lost (class 08, an administrator's or a crash's shutdown, a server that
// is starting), or insufficient resources (class 53: disk full, out of
// memory, too many connections).
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "53") ||
			pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// retryable reports whether a transaction failed only because of
// concurrency (a deadlock or serialization failure) and may simply be run
// again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == codeDeadlockDetected || pe.Code == codeSerializationFailure)
}

// maxTxAttempts bounds the runs of a transaction that keeps failing on
// deadlocks.
const maxTxAttempts = 4

// tx runs fn in a transaction (READ COMMITTED) and commits it, running it
// again when PostgreSQL aborted it to resolve a deadlock. fn must set its
// results afresh on every run. The error is interpreted.
func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return interpretError(runAgainOnDeadlock(ctx, func() error { return pgx.BeginFunc(ctx, s.pool, fn) }))
}

// runAgainOnDeadlock runs fn, a transaction, and runs it again while
// PostgreSQL aborts it to resolve a deadlock, at most maxTxAttempts
// times in all. The error is not interpreted.
func runAgainOnDeadlock(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err != nil && attempt < maxTxAttempts && retryable(err) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// txValue is tx for a function that returns a value: fn's, once its
// transaction committed.
func txValue[T any](ctx context.Context, s *Store, fn func(tx pgx.Tx) (T, error)) (T, error) {
	var out T
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// writeCtx returns the context a write runs under. A caller's cancellation
// counts only until the write starts: a cancelled ctx is returned as it is,
// so the write fails before anything reaches the database; otherwise the
// write runs to its end (commit or failure) under a context the caller
// cannot cancel, so that the caller is told what the database did. Without
// it, a cancellation that lands after PostgreSQL committed (an autocommit
// statement, or during COMMIT) reports a stored write as failed.
func writeCtx(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// querier is what *pgxpool.Pool and pgx.Tx have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queryAll runs sql on q and returns its rows, each scanned by scan, or nil
// when there are none (pgx.AppendRows). The error is not interpreted.
func queryAll[T any](ctx context.Context, q querier, scan func(pgx.Row) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.AppendRows([]T(nil), rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

// Stored times are int64 nanoseconds since the Unix epoch. The zero time is
// zeroTime, the smallest int64; other times before 1678 or after 2262
// (beyond int64 nanoseconds) are stored as the nearest representable
// bound, a second inside the range.
const (
	zeroTime = math.MinInt64
	minSec   = math.MinInt64/int64(time.Second) + 1
	maxSec   = math.MaxInt64/int64(time.Second) - 1
)

// ts returns the stored form of t.
func ts(t time.Time) int64 {
	if t.IsZero() {
		return zeroTime
	}
	switch sec := t.Unix(); {
	case sec < minSec:
		return minSec * int64(time.Second)
	case sec > maxSec:
		return maxSec * int64(time.Second)
	}
	return t.UnixNano()
}

// tsPtr returns the stored form of *t, or nil (SQL NULL) for nil.
func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

// fromTS returns the time of a stored value, in UTC.
func fromTS(n int64) time.Time {
	if n == zeroTime {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// fromTSPtr returns the time of a nullable stored value.
func fromTSPtr(n *int64) *time.Time {
	if n == nil {
		return nil
	}
	t := fromTS(*n)
	return &t
}

// prefixSuccessor returns the smallest string greater than every string
// that starts with prefix, in code point order (the byte order of UTF-8,
// which COLLATE "C" compares): prefix with its last rune incremented,
// dropping trailing U+10FFFF runes. ok is false when there is no such
// string (prefix is empty or all U+10FFFF); then the range has no upper
// bound.
func prefixSuccessor(prefix string) (succ string, ok bool) {
	for prefix != "" {
		r, size := utf8.DecodeLastRuneInString(prefix)
		prefix = prefix[:len(prefix)-size]
		if r == utf8.MaxRune {
			continue
		}
		r++
		if r >= 0xD800 && r <= 0xDFFF { // surrogates are not runes of UTF-8
			r = 0xE000
		}
		return prefix + string(r), true
	}
	return "", false
}

// qualify returns cols (a comma-separated column list) with each column
// prefixed by alias and a dot.
func qualify(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
