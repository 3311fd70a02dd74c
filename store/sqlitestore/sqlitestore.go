// Package sqlitestore is a driver.Store on a SQLite database file, for a
// single server. It uses github.com/mattn/go-sqlite3 (cgo).
//
// The database runs in WAL mode with foreign keys on and synchronous=FULL,
// so a write that returned is durable across power loss. A Store holds one
// writer connection, through which every write goes (writes are serialized,
// and write transactions start with BEGIN IMMEDIATE so they never fail on a
// lock upgrade), and a pool of query-only reader connections, so reads run
// concurrently with each other and with the writer.
//
// The schema is embedded in the binary, versioned with PRAGMA user_version
// and migrated automatically, in one transaction, by Open. Uniqueness
// (contact phone and email, template name and language, message idempotency
// keys, API key hashes, the channel and account id of a live channel
// connection) is enforced by unique indexes in the schema; a live
// connection's WABA id by ConnectionPut on the serialized writer.
//
// Contacts are listed and searched from indexes alone, however large the
// workspace: each contact carries its position in its workspace's list
// order (kept by a trigger), so a page of the list, however deep, is a range
// of positions; a search counts its matches exactly with index-only range
// scans of the folded full and last names, the email key and the phone
// digits, and reads its page either by walking the list index or by
// collecting the matches, whichever is cheaper (see contacts.go).
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/migrationfiles"

	"github.com/mattn/go-sqlite3"
	"github.com/ujumbe/messaging"
)

var _ driver.Store = (*Store)(nil)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure a Store. A nil *Options means all defaults.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by another
	// connection (for example another process on the same file) before
	// failing with SQLITE_BUSY. Default: 5 seconds.
	BusyTimeout time.Duration
	// MaxReaders is the number of reader connections, the number of reads
	// that can run at the same time. Default: the number of CPUs, at least
	// 4.
	MaxReaders int
	// ReaderCacheKiB is the page cache of each reader connection, in KiB
	// (SQLite's cache_size). While the writer commits, a reader's cache
	// only lasts one read transaction (SQLite empties it when the
	// database changed since the reader's last one), so it bounds what one
	// read holds rather than keeping pages warm; 1 MiB holds the pages of
	// the broadest contact search of a 1,000,000-contact workspace. The
	// writer keeps SQLite's default (2,000 KiB), which stays warm across
	// its own commits. Default: 1024.
	ReaderCacheKiB int
}

// Default option values.
const (
	// DefaultBusyTimeout is the default Options.BusyTimeout.
	DefaultBusyTimeout = 5 * time.Second
	// MinDefaultReaders is the smallest default Options.MaxReaders.
	MinDefaultReaders = 4
	// DefaultReaderCacheKiB is the default Options.ReaderCacheKiB.
	DefaultReaderCacheKiB = 1024
)

// Store is a driver.Store on a SQLite database. It is safe for concurrent
// use. Create it with Open and release it with Close.
type Store struct {
	// w is the writer: a pool of exactly one connection, so writes are
	// serialized. Its transactions are BEGIN IMMEDIATE.
	w *sql.DB
	// r is the pool of query-only reader connections.
	r *sql.DB
	// writes feeds the writer goroutine (see groupcommit.go).
	writes     chan *writeReq
	closing    chan struct{}
	writerDone chan struct{}
	closeOnce  sync.Once
	// counts keeps the totals of recent contact searches (searchcounts.go).
	counts searchCounts
	// commits counts the writer's commits (BenchmarkMessageCreate reports
	// the mean batch from it).
	commits atomic.Int64
	// larges counts the large writes run (writeLarge), for tests.
	larges atomic.Int64
	// stmts holds the hot writes prepared on the writer connection; it is
	// read-only after Open.
	stmts map[string]*sql.Stmt
	// reads holds the hot reads prepared on the reader pool (database/sql
	// prepares each on every reader connection that runs it, once); it is
	// read-only after Open.
	reads map[string]*sql.Stmt
}

// Open opens (creating it if needed, with mode 0600, as its -wal and -shm
// files) the SQLite database at path, a file name, and migrates its schema
// to the latest version. A nil opts means
// defaults. In-memory databases are not supported: WAL mode and separate
// reader connections need a file.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlitestore: Open: path must be a plain file name (got %q)", path)
	}
	o := defaults.Of(opts)
	defaults.Positive(&o.BusyTimeout, DefaultBusyTimeout)
	defaults.Positive(&o.MaxReaders, max(MinDefaultReaders, runtime.NumCPU()))
	defaults.Positive(&o.ReaderCacheKiB, DefaultReaderCacheKiB)
	if err := createOwnerOnly(path); err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	base := "file:" + escapePath(path)
	busy := strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10)
	w, err := openWriter(ctx, path, base, busy)
	if err != nil {
		return nil, err
	}
	r, err := openReaders(ctx, base, busy, &o)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	st := &Store{w: w, r: r, writes: make(chan *writeReq), closing: make(chan struct{}), writerDone: make(chan struct{})}
	err = st.prepareHot(ctx)
	if err == nil {
		err = st.prepareReads(ctx)
	}
	if err != nil {
		st.closeStmts()
		_ = r.Close()
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	go st.writer()
	return st, nil
}

// openWriter opens the writer's one connection to the database file at
// path (whose URI is base), in WAL mode, and migrates the database.
func openWriter(ctx context.Context, path, base, busy string) (*sql.DB, error) {
	wq := url.Values{}
	wq.Set("_busy_timeout", busy)
	wq.Set("_journal_mode", "WAL")
	wq.Set("_synchronous", "FULL")
	wq.Set("_foreign_keys", "1")
	wq.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite3", base+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: journal mode is %q, want wal", path, mode)
	}
	if err := migrate(ctx, w); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: migrate %s: %w", path, err)
	}
	// The writer keeps its temporary files in memory, chiefly the
	// statement journal: in a transaction of several writes, SQLite saves
	// each page a statement changes first so that a failed statement can be
	// undone alone, and an insert of a message changes more pages than the
	// 64 KiB it keeps in memory, so each batch created, wrote (two calls a
	// page) and dropped a temporary file. These records serve only to undo
	// a statement within its transaction; a crash is recovered from the
	// WAL alone, so durability is unchanged. Set after the migrations, whose
	// index builds may sort more than should be held in memory; the writes
	// that may change an unbounded number of rows run with it on disk
	// (writeLarge).
	if _, err := w.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	return w, nil
}

// openReaders opens the pool of read-only connections to the database
// whose URI is base. The error is not wrapped.
func openReaders(ctx context.Context, base, busy string, o *Options) (*sql.DB, error) {
	rq := url.Values{}
	rq.Set("_busy_timeout", busy)
	rq.Set("_query_only", "1")
	rq.Set("_foreign_keys", "1")
	rq.Set("_cache_size", strconv.Itoa(-o.ReaderCacheKiB)) // negative: KiB
	r, err := sql.Open("sqlite3", base+"?"+rq.Encode())
	if err != nil {
		return nil, err
	}
	r.SetMaxOpenConns(o.MaxReaders)
	r.SetMaxIdleConns(o.MaxReaders)
	r.SetConnMaxLifetime(0)
	if err := r.PingContext(ctx); err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// escapePath escapes the characters that are special in an SQLite URI file
// name.
func escapePath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// Close lets SQLite refresh its query planner statistics, then closes every
// connection.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	<-s.writerDone
	s.closeStmts()
	errR := s.r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, _ = s.w.ExecContext(ctx, "PRAGMA optimize")
	cancel()
	return errors.Join(errR, s.w.Close())
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

// migrate applies the migrations newer than the database's user_version, in
// one transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var cur int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return err
	}
	if cur > len(ms) {
		return fmt.Errorf("database schema version %d is newer than this program's %d", cur, len(ms))
	}
	if cur == len(ms) {
		return nil
	}
	for _, m := range ms[cur:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return tx.Commit()
}

// interpretError maps database errors to the store sentinels:
// sql.ErrNoRows to messaging.ErrNotFound, unique and primary key violations
// to messaging.ErrConflict, and foreign key violations (a record of a
// missing workspace) to messaging.ErrNotFound. The sentinels themselves
// pass through unchanged; any other error is wrapped.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	var optedOut *driver.OptedOutError
	if errors.Is(err, messaging.ErrNotFound) || errors.Is(err, messaging.ErrConflict) || errors.Is(err, driver.ErrStale) ||
		errors.Is(err, messaging.ErrUnavailable) || errors.As(err, &optedOut) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return messaging.ErrNotFound
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrCantOpen, sqlite3.ErrReadonly, sqlite3.ErrNomem:
			// Locked past the busy timeout, out of space, or a failing
			// disk: SQLite rolled the statement (or the transaction) back.
			return fmt.Errorf("sqlitestore: %w: %w", messaging.ErrUnavailable, err)
		}
	}
	if errors.As(err, &se) && se.Code == sqlite3.ErrConstraint {
		switch se.ExtendedCode {
		case sqlite3.ErrConstraintUnique, sqlite3.ErrConstraintPrimaryKey:
			return messaging.ErrConflict
		case sqlite3.ErrConstraintForeignKey:
			return messaging.ErrNotFound
		}
	}
	return fmt.Errorf("sqlitestore: %w", err)
}

// affected returns the number of rows an Exec changed, or its error.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// oneRow returns the error of an Exec that must change a row: its own, or
// messaging.ErrNotFound when it changed none.
func oneRow(res sql.Result, err error) error {
	n, err := affected(res, err)
	if err == nil && n == 0 {
		err = messaging.ErrNotFound
	}
	return err
}

// exists returns nil when table (a constant name) holds the record id of
// the workspace ws, and sql.ErrNoRows (not found) when it does not.
func exists(ctx context.Context, tx *sql.Tx, table, ws, id string) error {
	var one int
	return tx.QueryRowContext(ctx, `SELECT 1 FROM `+table+` WHERE id = ? AND workspace_id = ?`, id, ws).Scan(&one)
}

// missingOrStale tells why a conditional update of the record id of the
// workspace ws changed nothing: sql.ErrNoRows (not found) when there is no
// such record, messaging.ErrStale when its condition no longer held.
func missingOrStale(ctx context.Context, tx *sql.Tx, table, ws, id string) error {
	if err := exists(ctx, tx, table, ws, id); err != nil {
		return err
	}
	return driver.ErrStale
}

// readTx runs fn in a read transaction on a reader connection, so that its
// queries see one snapshot. The error is interpreted.
func (s *Store) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return interpretError(err)
	}
	defer func() { _ = tx.Rollback() }()
	return interpretError(fn(tx))
}

// hotReads are the reads of every request (authentication, the workspace
// and its channels) and of every status report, prepared once on the
// reader pool (see queryRow). Each is one statement, which reads one
// snapshot by itself: they need no explicit transaction.
var hotReads = []string{qWorkspaceGet, qAPIKeysByPrefix, qMessageByWSID, qMessageByIdem, qMessageByProviderID, qContactGet, qSMSAccountKey,
	qPendingAny, qSessionGet, qSuppressionsOf1, qWebhookDue}

// prepareReads prepares hotReads on the reader pool.
func (s *Store) prepareReads(ctx context.Context) error {
	s.reads = map[string]*sql.Stmt{}
	for _, q := range hotReads {
		st, err := s.r.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("preparing %q: %w", q, err)
		}
		s.reads[q] = st
	}
	return nil
}

// closeStmts closes the prepared statements.
func (s *Store) closeStmts() {
	for _, st := range s.stmts {
		_ = st.Close()
	}
	for _, st := range s.reads {
		_ = st.Close()
	}
}

// query runs a read on a reader connection, with its prepared statement
// when q is one of hotReads. Those are index lookups of a few
// microseconds: they check ctx before they start but do not watch it while
// they run, which would cost more than the read.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st, ok := s.reads[q]; ok {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return st.QueryContext(context.WithoutCancel(ctx), args...)
	}
	return s.r.QueryContext(ctx, q, args...)
}

// queryRow is query for one row.
func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if st, ok := s.reads[q]; ok {
		if ctx.Err() == nil {
			ctx = context.WithoutCancel(ctx)
		}
		return st.QueryRowContext(ctx, args...)
	}
	return s.r.QueryRowContext(ctx, q, args...)
}

// queryer is what *sql.DB and *sql.Tx have in common.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface {
	Scan(dest ...any) error
}

// collect returns the rows of a query, each scanned by scan, or nil when
// there are none, and closes them; err is the query's own error, returned
// as it is. The error is not interpreted.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// scanString scans a row of one text column.
func scanString(sc scanner) (string, error) {
	var s string
	err := sc.Scan(&s)
	return s, err
}

// timeLayout is the stored form of timestamps: fixed width, so text order is
// time order (for years 0 to 9999), with nanoseconds.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func fmtTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return fmtTime(*t)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// storedTime is a scan destination for a stored time: it parses the text
// into *t.
type storedTime struct{ t *time.Time }

// Scan implements sql.Scanner.
func (d storedTime) Scan(src any) error {
	var err error
	switch v := src.(type) {
	case string:
		*d.t, err = parseTime(v)
	case []byte:
		*d.t, err = parseTime(string(v))
	default:
		err = fmt.Errorf("stored time is %T, want text", src)
	}
	return err
}

// storedTimePtr is storedTime for a nullable column: NULL is a nil *t.
type storedTimePtr struct{ t **time.Time }

// Scan implements sql.Scanner.
func (d storedTimePtr) Scan(src any) error {
	if src == nil {
		*d.t = nil
		return nil
	}
	var t time.Time
	if err := (storedTime{&t}).Scan(src); err != nil {
		return err
	}
	*d.t = &t
	return nil
}

// placeholders returns "?, ?, ?" with n question marks, or "NULL" when n is
// 0 (so that "x IN (NULL)" matches nothing).
func placeholders(n int) string {
	if n == 0 {
		return "NULL"
	}
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// prefixUpper is the exclusive upper bound of the strings that start with
// prefix: no byte of valid UTF-8 is 0xFF, so every such string sorts below
// prefix + "\xff" in binary collation.
func prefixUpper(prefix string) string { return prefix + "\xff" }
