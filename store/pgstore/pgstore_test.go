package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/testclock"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/pgstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
	"github.com/ujumbe/messaging/store/storetest"
)

var _ httpapi.Limiter = (*pgstore.RateLimiter)(nil)

// envURL names the environment variable with the URL of the test database.
const envURL = "MESSAGING_TEST_POSTGRES_URL"

// testURL returns the test database's URL, or skips the test when none is
// configured.
func testURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(envURL)
	if u == "" {
		t.Skip(envURL + " is not set: skipping the PostgreSQL store tests " +
			"(set it, e.g. to postgres://postgres@127.0.0.1:5432/test?sslmode=disable, to run them; .ci/run does)")
	}
	return u
}

// newSchema returns the name of a schema of its own for one test and drops
// the schema with everything in it when the test ends. Cleanups run last
// registered first, so stores opened after this call are closed before the
// drop.
func newSchema(t testing.TB, url string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "pgstore_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{name}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
		}
	})
	return name
}

// open opens a Store on schema and closes it when the test ends.
func open(t testing.TB, url, schema string, maxConns int32) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, &pgstore.Options{Schema: schema, MaxConns: maxConns})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fresh opens a Store on a new, empty schema.
func fresh(t testing.TB) *pgstore.Store {
	t.Helper()
	url := testURL(t)
	return open(t, url, newSchema(t, url), 0)
}

func TestConformance(t *testing.T) {
	testURL(t)
	storetest.Run(t, func(t *testing.T) driver.Store { return fresh(t) })
}

func TestSMSConformance(t *testing.T) {
	testURL(t)
	storetest.RunSMS(t, func(t *testing.T) sms.Store { return fresh(t) })
}

// TestMigrateConcurrently opens several stores on one empty schema at once:
// the advisory lock makes them migrate one after the other, and every
// version is applied exactly once.
func TestMigrateConcurrently(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	const n = 4
	stores := make([]*pgstore.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = pgstore.Open(context.Background(), url, &pgstore.Options{Schema: schema, MaxConns: 2})
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	rows, err := stores[0].Pool().Query(context.Background(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	want := []int{}
	for v := 1; v <= pgstore.SchemaVersion(); v++ {
		want = append(want, v)
	}
	if fmt.Sprint(versions) != fmt.Sprint(want) {
		t.Errorf("schema_migrations holds %v, want %v", versions, want)
	}
	// A store of one schema sees its own tables only.
	if err := stores[1].WorkspaceCreate(context.Background(), &messaging.WorkspaceInfo{ID: "w", Channels: []string{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh(t).WorkspaceGet(context.Background(), "w"); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("another schema sees the workspace: %v", err)
	}
}

// TestRefusesNewerSchema: a database migrated by a newer program is not
// touched.
func TestRefusesNewerSchema(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	s := open(t, url, schema, 2)
	if _, err := s.Pool().Exec(context.Background(), `INSERT INTO schema_migrations (version, name) VALUES ($1, 'future.sql')`, pgstore.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_, err := pgstore.Open(context.Background(), url, &pgstore.Options{Schema: schema})
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open on a newer schema: %v, want a refusal", err)
	}
}

// TestNew builds a Store on a pool the caller configured.
func TestNew(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	open(t, url, schema, 2) // creates the schema
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := pgstore.New(context.Background(), pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WorkspaceCreate(context.Background(), &messaging.WorkspaceInfo{ID: "w", Channels: []string{"whatsapp"}}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if err := pool.Ping(context.Background()); err != nil {
		t.Errorf("Close closed a pool it does not own: %v", err)
	}
	if _, err := pgstore.New(context.Background(), pool, &pgstore.Options{Schema: "x"}); err == nil {
		t.Error("New accepted Options.Schema")
	}
}

// explain returns the plan of query with sequential scans discouraged, so
// that it shows whether an index can serve the query (the test tables are
// too small for the planner to prefer one on its own).
func explain(t *testing.T, s *pgstore.Store, query string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `EXPLAIN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestQueriesUseIndexes proves the claims walk their partial indexes in
// order (no scan of sent messages, no sort) and the contact search is a
// union of index range scans.
func TestQueriesUseIndexes(t *testing.T) {
	s := fresh(t)
	lease := int64(time.Minute)
	for _, tc := range []struct {
		name, query, index string
		args               []any
	}{
		{"message claim", pgstore.QMessageClaim, "messages_due", []any{int64(1), 16, "w", lease}},
		{"sms claim", pgstore.QSMSClaim, "sms_messages_due", []any{int64(1), 20, lease, "t", int64(0)}},
		{"webhook claim", pgstore.QWebhookClaim, "webhook_deliveries_due", []any{int64(1), 16, "w", lease}},
	} {
		plan := explain(t, s, tc.query, tc.args...)
		t.Logf("%s:\n%s", tc.name, plan)
		if !strings.Contains(plan, "Index Scan using "+tc.index) || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s does not walk %s in order:\n%s", tc.name, tc.index, plan)
		}
	}
	// The sweep reads only the expired sessions, through sessions_expires
	// (PostgreSQL may sort them: a sweep on each sign-in keeps them few).
	plan := explain(t, s, pgstore.QSessionSweep, int64(1), 100)
	t.Logf("session sweep:\n%s", plan)
	if !strings.Contains(plan, "sessions_expires") || strings.Contains(plan, "Seq Scan") {
		t.Errorf("the session sweep does not read through sessions_expires:\n%s", plan)
	}
	// The planner picks the BitmapOr once the workspace has contacts to
	// choose from: 20,000 of them, with their statistics.
	ctx := context.Background()
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "ws", Channels: []string{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO contacts (id, workspace_id, first_name, last_name, full_name, phone, email, email_key,
			company, job_title, website, notes, source, tags, lifecycle, version, created_at, updated_at,
			first_fold, last_fold, full_fold, phone_digits)
		SELECT 'ct_' || i, 'ws', md5(i::text), md5((i + 1)::text), '', '+' || (254700000000 + i), '', 'e' || md5(i::text) || '@example.com',
			'', '', '', '', 'api', '{}', '', 1, i, i,
			md5(i::text), md5((i + 1)::text), md5(i::text) || ' ' || md5((i + 1)::text), (254700000000 + i)::text
		FROM generate_series(1, 20000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `ANALYZE contacts`); err != nil {
		t.Fatal(err)
	}
	where, args := pgstore.ContactFilter(&driver.ContactListParams{WorkspaceID: "ws", Search: "am", PhoneDigits: "2547000001"})
	plan = explain(t, s, `SELECT count(*) FROM contacts WHERE `+where, args...)
	t.Logf("contact search:\n%s", plan)
	for _, idx := range []string{"contacts_first_fold", "contacts_last_fold", "contacts_full_fold", "contacts_email_key", "contacts_phone_digits"} {
		if !strings.Contains(plan, idx) {
			t.Errorf("contact search does not use %s:\n%s", idx, plan)
		}
	}
}

// fakeClock is a clock shared by the instances of a test.
type fakeClock = testclock.Clock

// countingProvider accepts every message and counts the sends of each.
// With block set, every Send waits until its context ends and fails.
type countingProvider struct {
	name    string
	block   bool
	started atomic.Int64
	mu      sync.Mutex
	sends   map[string]int
}

// Channels makes the provider serve Meta's channels.
func (*countingProvider) Channels() []messaging.ChannelSpec { return metaprovider.ChannelSpecs() }

func newCountingProvider(name string, block bool) *countingProvider {
	return &countingProvider{name: name, block: block, sends: map[string]int{}}
}

func (p *countingProvider) Send(ctx context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	p.started.Add(1)
	if p.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sends[m.ID]++
	return &messaging.SendReceipt{ProviderMessageID: p.name + "." + m.ID}, nil
}

func (p *countingProvider) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.sends))
	for k, v := range p.sends {
		out[k] = v
	}
	return out
}

// queue sends n text messages through svc, 8 at a time, and returns their
// ids.
func queue(t testing.TB, svc *messaging.Service, n int) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make(chan error, 8)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := svc.Workspace("acme")
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				res, err := ws.Messages.Send(context.Background(), &messaging.SendParams{Channel: "whatsapp",
					To: fmt.Sprintf("+2547123%05d", i%100000), Type: "text", Text: "hello"})
				if err != nil {
					errs <- err
					return
				}
				ids[i] = res.MessageID
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("queueing: %v", err)
	}
	return ids
}

// statusCounts returns the number of messages in each status.
func statusCounts(t testing.TB, s *pgstore.Store) map[string]int {
	t.Helper()
	rows, err := s.Pool().Query(context.Background(), `SELECT status, count(*) FROM messages GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			t.Fatal(err)
		}
		out[st] = n
	}
	return out
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitProgress polls count every 10 ms until it returns want. It fails
// only when count stays the same for stall: a deadline that catches a
// hang, not a slow machine.
func waitProgress(t testing.TB, stall time.Duration, what string, want int, count func() int) {
	t.Helper()
	last, since := count(), time.Now()
	for last != want {
		time.Sleep(10 * time.Millisecond)
		if c := count(); c != last {
			last, since = c, time.Now()
		} else if time.Since(since) > stall {
			t.Fatalf("waiting for %s: stuck at %d of %d for %v", what, last, want, stall)
		}
	}
}

func newService(t testing.TB, st driver.Store, p messaging.Provider, clock func() time.Time, d messaging.DispatchOptions) *messaging.Service {
	t.Helper()
	svc, err := messaging.New(st, p, &messaging.Options{Clock: clock, Dispatch: d})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestTwoInstancesDispatchEachMessageOnce runs two Services, each with its
// own pool and dispatcher, on one database: 2,000 queued messages (over a
// hundred claims of each instance) are each handed to the provider exactly
// once and all end sent.
//
// Both instances read one test clock that does not move, so no lease ever
// runs out: a correct store hands every message to one claim only, under
// any interleaving and however slowly the instances run (with a real clock
// a starved instance could outlive its leases, and the documented
// at-least-once delivery would then allow a second send). Each provider
// holds its sends until the other instance has a send in flight, so both
// instances take part in every run, each holding claimed messages while
// the other claims; and the wait for the sends fails only when they stop
// making progress, not when they are slow.
func TestTwoInstancesDispatchEachMessageOnce(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	const n = 2_000
	clock := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	// SendTimeout (a real-time bound on one Send) only catches a hang: a
	// Send that outlives it is retried at a time the frozen clock never
	// reaches, and the wait below reports the stall.
	opts := messaging.DispatchOptions{Workers: 16, PollInterval: 5 * time.Millisecond, PerSenderRate: -1, SendTimeout: 10 * time.Minute}
	prov := pairedProviders(newCountingProvider("one", false), newCountingProvider("two", false))
	var stores []*pgstore.Store
	var svcs []*messaging.Service
	for i := range 2 {
		st := open(t, url, schema, 20)
		stores = append(stores, st)
		svcs = append(svcs, newService(t, st, prov[i], clock.Now, opts))
	}
	if _, err := svcs[0].CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Channels: svcs[0].Channels()}); err != nil {
		t.Fatal(err)
	}
	ids := queue(t, svcs[0], n)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	for _, svc := range svcs {
		if err := svc.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitProgress(t, time.Minute, "every message sent", n, func() int { return statusCounts(t, stores[0])["sent"] })
	elapsed := time.Since(start)
	for _, svc := range svcs {
		if err := svc.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("two instances dispatched %d messages in %v: %.0f msgs/s (instance one %d, two %d)",
		n, elapsed.Round(time.Millisecond), n/elapsed.Seconds(), len(prov[0].counts()), len(prov[1].counts()))

	total := map[string]int{}
	for _, p := range prov {
		if len(p.counts()) == 0 {
			t.Errorf("instance %s sent nothing: the work was not shared", p.name)
		}
		for id, c := range p.counts() {
			total[id] += c
		}
	}
	for _, id := range ids {
		if total[id] != 1 {
			t.Errorf("message %s was handed to the provider %d times, want 1", id, total[id])
		}
	}
	if len(total) != n {
		t.Errorf("the providers got %d distinct messages, want %d", len(total), n)
	}
	if got := statusCounts(t, stores[0]); got["sent"] != n || len(got) != 1 {
		t.Errorf("statuses %v, want all %d sent", got, n)
	}
}

// pairedProvider is a countingProvider whose sends wait until its peer has
// been handed a message: two instances with paired providers both take
// part in the dispatch, whatever the scheduling, as long as there are more
// messages than one instance claims at once.
type pairedProvider struct {
	*countingProvider
	once sync.Once
	mine chan struct{} // closed at this provider's first send
	peer chan struct{} // closed at the peer's first send
}

// pairedProviders pairs a and b.
func pairedProviders(a, b *countingProvider) [2]*pairedProvider {
	ca, cb := make(chan struct{}), make(chan struct{})
	return [2]*pairedProvider{{countingProvider: a, mine: ca, peer: cb}, {countingProvider: b, mine: cb, peer: ca}}
}

// Send records that this provider was handed a message, waits until its
// peer was too (or ctx is done), then sends as the countingProvider.
func (p *pairedProvider) Send(ctx context.Context, s *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	p.once.Do(func() { close(p.mine) })
	select {
	case <-p.peer:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.countingProvider.Send(ctx, s, m)
}

// TestInstanceDiesMidBatch kills one instance while its sends are blocked
// (its Start context is cancelled and its pool closed); the other instance
// takes the leased messages over once the lease ends, on a clock shared by
// both: the claim's marks make it wait for the confirmation window (A's
// sends may have reached the provider), and then it sends each of them
// once.
func TestInstanceDiesMidBatch(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	const n = 10
	clock := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	opts := messaging.DispatchOptions{Workers: n, BatchSize: n, PollInterval: 5 * time.Millisecond, PerSenderRate: -1,
		Lease: 2 * time.Minute, SendTimeout: time.Minute, SenderInFlight: n}
	stA, stB := open(t, url, schema, 4), open(t, url, schema, 4)
	provA, provB := newCountingProvider("a", true), newCountingProvider("b", false)
	svcA := newService(t, stA, provA, clock.Now, opts)
	svcB := newService(t, stB, provB, clock.Now, opts)
	if _, err := svcA.CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Channels: svcA.Channels()}); err != nil {
		t.Fatal(err)
	}
	ids := queue(t, svcA, n)

	ctxA, killA := context.WithCancel(context.Background())
	defer killA()
	if err := svcA.Start(ctxA); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "instance A to hold every message in a blocked send", func() bool { return provA.started.Load() == n })

	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	if err := svcB.Start(ctxB); err != nil {
		t.Fatal(err)
	}
	// While A's leases hold nothing is claimable, by B or anyone.
	if got, err := stB.MessageClaim(context.Background(), &driver.MessageClaimParams{Owner: "probe", Now: clock.Now(), Lease: time.Minute, Limit: 100}); err != nil || len(got) != 0 {
		t.Fatalf("claim while A holds the leases: %d messages, %v; want none", len(got), err)
	}

	// A dies: its connections go, then its context.
	_ = stA.Close()
	killA()
	if err := svcA.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := statusCounts(t, stB); got["queued"] != n {
		t.Fatalf("after A died: statuses %v, want all %d still queued (A recorded nothing)", got, n)
	}
	if c := provB.counts(); len(c) != 0 {
		t.Fatalf("B sent %d messages before A's lease ended", len(c))
	}

	clock.Advance(opts.Lease + time.Second)
	waitFor(t, 30*time.Second, "B to put A's messages back until the confirmation window ends", func() bool {
		for _, id := range ids {
			m, err := stB.MessageGet(context.Background(), "acme", id)
			if err != nil || m.LeaseOwner != "" || m.UnconfirmedSince == nil || !m.DueAt.After(clock.Now()) {
				return false
			}
		}
		return true
	})
	if c := provB.counts(); len(c) != 0 {
		t.Fatalf("B sent %d messages within the confirmation window", len(c))
	}
	clock.Advance(5 * time.Minute)
	waitFor(t, 30*time.Second, "B to send A's messages", func() bool { return statusCounts(t, stB)["sent"] == n })
	if err := svcB.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	sends := provB.counts()
	for _, id := range ids {
		if sends[id] != 1 {
			t.Errorf("B sent %s %d times, want 1", id, sends[id])
		}
		m, err := stB.MessageGet(context.Background(), "acme", id)
		if err != nil {
			t.Fatal(err)
		}
		// Attempts: A's claim and B's send; B's claims that only waited for
		// the window were taken back.
		if m.Status != messaging.StatusSent || m.Attempts != 2 || m.ProviderMessageID != "b."+id {
			t.Errorf("message %s: status %s, attempts %d, provider id %q; want sent by B on the second attempt", id, m.Status, m.Attempts, m.ProviderMessageID)
		}
	}
}

// TestRateLimiterSharedAcrossInstances takes tokens from one bucket through
// two stores (two instances): the limit holds for both together, refills
// with time, and concurrent takes never hand out more than the bucket
// holds.
func TestRateLimiterSharedAcrossInstances(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	l1, l2 := open(t, url, schema, 4).RateLimiter(), open(t, url, schema, 4).RateLimiter()
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	type result struct {
		ok        bool
		remaining int
		wait      time.Duration
	}
	take := func(l *pgstore.RateLimiter, at time.Time) result {
		t.Helper()
		ok, rem, wait, err := l.Take(ctx, "ws:acme:POST /v1/messages", 6, at)
		if err != nil {
			t.Fatal(err)
		}
		return result{ok, rem, wait}
	}
	for i := range 6 {
		l := []*pgstore.RateLimiter{l1, l2}[i%2]
		if got, want := take(l, now), (result{true, 5 - i, 0}); got != want {
			t.Errorf("take %d: %+v, want %+v", i+1, got, want)
		}
	}
	if got, want := take(l1, now), (result{false, 0, 10 * time.Second}); got != want {
		t.Errorf("seventh take: %+v, want %+v (6 a minute: a token every 10 s)", got, want)
	}
	if got, want := take(l2, now.Add(5*time.Second)), (result{false, 0, 5 * time.Second}); got != want {
		t.Errorf("take after 5 s: %+v, want %+v", got, want)
	}
	if got, want := take(l2, now.Add(10*time.Second)), (result{true, 0, 0}); got != want {
		t.Errorf("take after 10 s: %+v, want %+v", got, want)
	}
	// A clock behind the bucket's last use neither refills nor rewinds it.
	if got := take(l1, now); got.ok {
		t.Errorf("take with a clock 10 s behind: %+v, want refused", got)
	}

	// 40 concurrent requests, 20 a minute: exactly 20 pass.
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, _, err := []*pgstore.RateLimiter{l1, l2}[i%2].Take(ctx, "ws:acme:GET /v1/contacts", 20, now)
			if err != nil {
				t.Error(err)
			}
			if ok {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 20 {
		t.Errorf("%d of 40 concurrent requests passed a limit of 20", allowed.Load())
	}
}

// TestRateLimitAcrossServers serves the API from two handlers, each on its
// own Service and pool (two server instances), with the stores' rate
// limiters: 30 contact creations a minute pass in total, not per instance.
// Both servers read one test clock, which moves only when the test says,
// so the budget does not depend on how fast the requests run: of 40
// concurrent requests spread over both servers exactly 30 pass, whatever
// their interleaving, and after 2 s (one token at 30 a minute) exactly one
// more passes on either server.
func TestRateLimitAcrossServers(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	var handlers []http.Handler
	var key string
	for i := range 2 {
		st := open(t, url, schema, 4)
		svc := newService(t, st, newCountingProvider("p", false), clock.Now, messaging.DispatchOptions{})
		if i == 0 {
			if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
				t.Fatal(err)
			}
			var err error
			if _, key, err = svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()}); err != nil {
				t.Fatal(err)
			}
		}
		handlers = append(handlers, httpapi.New(svc, &httpapi.Options{Limiter: st.RateLimiter(), Clock: clock.Now}))
	}
	// post creates contact i on instance i%2.
	post := func(i int) (int, http.Header) {
		body := fmt.Sprintf(`{"firstName":"C%d","email":"c%d@example.com"}`, i, i)
		req := httptest.NewRequest("POST", "/v1/contacts", strings.NewReader(body))
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		handlers[i%2].ServeHTTP(rec, req)
		return rec.Code, rec.Result().Header
	}
	// refused reports whether a response is the 429 of a used-up bucket:
	// no token left and the next one due in 2 s on the frozen clock.
	refused := func(code int, h http.Header) bool {
		return code == http.StatusTooManyRequests && h.Get("Retry-After") == "2" && h.Get("X-RateLimit-Remaining") == "0"
	}

	const requests = 40
	codes := make([]int, requests)
	headers := make([]http.Header, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() { codes[i], headers[i] = post(i) })
	}
	wg.Wait()
	passed := map[int]int{} // instance -> requests created
	for i, code := range codes {
		switch {
		case code == http.StatusCreated:
			passed[i%2]++
		case !refused(code, headers[i]):
			t.Errorf("request %d on instance %d: status %d, Retry-After %q, remaining %q; want 201, or 429 with Retry-After 2 and remaining 0",
				i+1, i%2, code, headers[i].Get("Retry-After"), headers[i].Get("X-RateLimit-Remaining"))
		}
	}
	if got := passed[0] + passed[1]; got != 30 {
		t.Fatalf("%d of %d concurrent requests passed (instance 0: %d, instance 1: %d), want 30: the limit of 30 a minute is for both instances together",
			got, requests, passed[0], passed[1])
	}
	for i := requests; i < requests+2; i++ {
		if code, h := post(i); !refused(code, h) {
			t.Errorf("request %d on instance %d after the budget was used: status %d, Retry-After %q, remaining %q; want 429",
				i+1, i%2, code, h.Get("Retry-After"), h.Get("X-RateLimit-Remaining"))
		}
	}

	// One token refills in 2 s, for both instances: instance 1 takes it,
	// instance 0 finds none.
	clock.Advance(2 * time.Second)
	if code, _ := post(requests + 3); code != http.StatusCreated {
		t.Errorf("request on instance 1 after 2 s: status %d, want 201 (one token refilled)", code)
	}
	if code, h := post(requests + 4); !refused(code, h) {
		t.Errorf("request on instance 0 after instance 1 took the refilled token: status %d, Retry-After %q, remaining %q; want 429",
			code, h.Get("Retry-After"), h.Get("X-RateLimit-Remaining"))
	}
}

// BenchmarkDispatch measures queued -> sent through the dispatcher with a
// provider that accepts at once, in messages per second: on SQLite (one
// instance, as the root package's BenchmarkDispatch), and on PostgreSQL
// with one and with two instances (Services with their own pools) sharing
// the queue. Each instance runs DispatchDue (8 workers, batches of 16)
// until the queue is empty. Run it with a fixed count, e.g.
//
//	go test ./store/pgstore -run '^$' -bench Dispatch -benchtime 10000x
func BenchmarkDispatch(b *testing.B) {
	b.Run("sqlite-1", func(b *testing.B) {
		st, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "db.sqlite"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		benchDispatch(b, []driver.Store{st})
	})
	for _, instances := range []int{1, 2} {
		b.Run(fmt.Sprintf("postgres-%d", instances), func(b *testing.B) {
			url := testURL(b)
			schema := newSchema(b, url)
			var stores []driver.Store
			for range instances {
				stores = append(stores, open(b, url, schema, 12))
			}
			benchDispatch(b, stores)
		})
	}
}

// benchDispatch queues b.N messages, then dispatches them with one
// instance per store.
func benchDispatch(b *testing.B, stores []driver.Store) {
	opts := messaging.DispatchOptions{Workers: 8, PerSenderRate: -1}
	var svcs []*messaging.Service
	for _, st := range stores {
		svcs = append(svcs, newService(b, st, newCountingProvider("p", false), nil, opts))
	}
	if _, err := svcs[0].CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Channels: svcs[0].Channels()}); err != nil {
		b.Fatal(err)
	}
	queue(b, svcs[0], b.N)
	b.ResetTimer()
	start := time.Now()
	var done atomic.Int64
	var wg sync.WaitGroup
	for _, svc := range svcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := svc.DispatchDue(context.Background())
			if err != nil {
				b.Error(err)
			}
			done.Add(int64(n))
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if done.Load() != int64(b.N) {
		b.Fatalf("dispatched %d of %d", done.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// TestClaimFaults runs the claim-fault conformance case: a deferred
// constraint trigger raises at COMMIT for rows leased to an owner beginning
// with storetest.FailingOwner, so the claim statement returns its rows and
// then fails.
func TestClaimFaults(t *testing.T) {
	url := testURL(t)
	storetest.RunClaimFaults(t, func(t *testing.T) driver.Store {
		schema := newSchema(t, url)
		s := open(t, url, schema, 0)
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		sch := pgx.Identifier{schema}.Sanitize()
		for _, q := range []string{
			`CREATE FUNCTION ` + sch + `.fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.lease_owner LIKE '` + storetest.FailingOwner + `%' THEN
					RAISE EXCEPTION 'commit refused for %', NEW.lease_owner;
				END IF;
				RETURN NULL;
			END $$`,
			`CREATE CONSTRAINT TRIGGER fail_commit AFTER UPDATE ON ` + sch + `.messages
				DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ` + sch + `.fail_commit()`,
			`CREATE CONSTRAINT TRIGGER fail_commit AFTER UPDATE ON ` + sch + `.webhook_deliveries
				DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ` + sch + `.fail_commit()`,
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		return s
	})
}

// TestTwoInstancesSeeRevocationWithinCacheTTL runs two Services, each with
// its own pool, on one database: a key revoked and a channel disconnected
// through one stop working on the other once its cached copies are
// messaging.DefaultCacheTTL old (the documented bound; MaxCacheTTL is 1 s).
func TestTwoInstancesSeeRevocationWithinCacheTTL(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	a := newService(t, open(t, url, schema, 4), fakeprovider.New(), clock.Now, messaging.DispatchOptions{})
	b := newService(t, open(t, url, schema, 4), fakeprovider.New(), clock.Now, messaging.DispatchOptions{})
	if _, err := a.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: a.Channels()}); err != nil {
		t.Fatal(err)
	}
	k, plain, err := a.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	send := func(svc *messaging.Service) error {
		_, err := svc.Workspace("acme").Messages.Send(ctx, &messaging.SendParams{Channel: messaging.ChannelWhatsApp, To: "+254712345678", Type: "text", Text: "hi"})
		return err
	}
	// b reads (and caches) the key and the workspace.
	if _, err := b.Authenticate(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if err := send(b); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Workspace("acme").APIKeys.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Workspace("acme").Channels.Disconnect(ctx, messaging.ChannelWhatsApp); err != nil {
		t.Fatal(err)
	}
	clock.Advance(defaults.DefaultCacheTTL)
	if _, err := b.Authenticate(ctx, plain); messaging.ErrorCode(err) != messaging.CodeInvalidAPIKey {
		t.Errorf("b, a TTL after the revocation on a: Authenticate = %v, want invalid_api_key", err)
	}
	if err := send(b); messaging.ErrorCode(err) != messaging.CodeChannelUnavailable {
		t.Errorf("b, a TTL after the disconnect on a: Send = %v, want channel_unavailable", err)
	}
}

// noticedStore tells the test each time the store's change listener
// made the Service empty its cache.
type noticedStore struct {
	*pgstore.Store
	flushed chan struct{}
}

func (s *noticedStore) ListenChanges(ctx context.Context, changed func()) error {
	return s.Store.ListenChanges(ctx, func() {
		changed()
		select {
		case s.flushed <- struct{}{}:
		default:
		}
	})
}

// TestTwoInstancesSeeChangesByNotice starts two Services, each with its own
// pool, on one database, with a clock that does not move: the cache TTL
// never runs out, so only the notices of ListenChanges can make b see a
// change made through a. The listener's connection is then killed: it
// reconnects and b sees the next change too.
func TestTwoInstancesSeeChangesByNotice(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	a := newService(t, open(t, url, schema, 4), fakeprovider.New(), clock.Now, messaging.DispatchOptions{})
	stB := &noticedStore{Store: open(t, url, schema, 4), flushed: make(chan struct{}, 1)}
	b := newService(t, stB, fakeprovider.New(), clock.Now, messaging.DispatchOptions{})
	if _, err := a.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: a.Channels()}); err != nil {
		t.Fatal(err)
	}
	keys := make([]*messaging.APIKey, 2)
	plains := make([]string, 2)
	for i := range keys {
		k, plain, err := a.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
		if err != nil {
			t.Fatal(err)
		}
		keys[i], plains[i] = k, plain
	}
	flushed := func(what string) {
		t.Helper()
		select {
		case <-stB.flushed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: b's cache was not emptied within 10 s", what)
		}
	}
	// revokeSeen caches key i in b, revokes it through a, and checks that
	// b refuses it once a notice emptied its cache.
	revokeSeen := func(i int) {
		t.Helper()
		if _, err := b.Authenticate(ctx, plains[i]); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Workspace("acme").APIKeys.Revoke(ctx, keys[i].ID); err != nil {
			t.Fatal(err)
		}
		flushed("the revocation's notice")
		_, err := b.Authenticate(ctx, plains[i])
		if messaging.ErrorCode(err) != messaging.CodeInvalidAPIKey {
			t.Fatalf("b, after the notice of the revocation of key %d on a: %v, want invalid_api_key", i, err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := b.Start(runCtx); err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	flushed("connecting") // the listener empties the cache once it listens
	revokeSeen(0)

	// Kill the listener's connection: it reconnects (emptying the cache
	// again, for the notices it may have missed) and sees the next change.
	if _, err := stB.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'messaging change listener'`); err != nil {
		t.Fatal(err)
	}
	flushed("reconnecting")
	revokeSeen(1)
}

// TestOnlyCachedChangesSendNotices: recording a key's use (APIKeyTouch,
// about once a minute per active key and instance) and a channel
// connection's status and template sync (ConnectionUpdate, about hourly
// per connection) change nothing a Service caches, so they must not send
// the notice that empties every instance's cache; connecting a channel
// (ConnectionPut) and revoking a key must. The test listens on a
// connection of its own and, after each step, sends a marker notice of its
// own: notices arrive in the order their transactions committed, so the
// ones before the marker are exactly the step's.
func TestOnlyCachedChangesSendNotices(t *testing.T) {
	st := fresh(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := st.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "acme", Name: "Acme", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	k := &messaging.APIKey{ID: "key1", WorkspaceID: "acme", Prefix: "pfx1", Hash: []byte("hash1"), CreatedAt: at}
	if err := st.APIKeyCreate(ctx, k); err != nil {
		t.Fatal(err)
	}
	l, err := st.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	var schema string
	if err := l.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Exec(ctx, "LISTEN messaging_cache"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = l.Exec(ctx, "UNLISTEN *") }() // the connection goes back to the pool
	// notices returns the notices of the store's schema sent since the
	// previous call.
	notices := func(step string) int {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, "SELECT pg_notify('messaging_cache', 'marker')"); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n := 0
		for {
			nt, err := l.Conn().WaitForNotification(wctx)
			if err != nil {
				t.Fatalf("%s: waiting for the marker: %v", step, err)
			}
			switch nt.Payload {
			case "marker":
				return n
			case schema:
				n++
			}
		}
	}
	want := func(step string, n int) {
		t.Helper()
		if got := notices(step); got != n {
			t.Errorf("%s: %d notices, want %d", step, got, n)
		}
	}
	want("listening", 0)

	conn := &messaging.ChannelConnection{WorkspaceID: "acme", Channel: messaging.ChannelWhatsApp, AccountID: "100", WABAID: "W1",
		DisplayPhoneNumber: "+254700000100", TokenSealed: []byte("sealed"), TokenHint: "ab12",
		Status: record.ConnectionConnected, VerifiedAt: &at, CreatedAt: at, UpdatedAt: at}
	if _, err := st.ConnectionPut(ctx, conn); err != nil {
		t.Fatal(err)
	}
	want("connecting a channel", 1)

	touched := at.Add(time.Minute)
	if err := st.APIKeyTouch(ctx, &driver.APIKeyTouchParams{WorkspaceID: "acme", ID: k.ID, At: touched}); err != nil {
		t.Fatal(err)
	}
	keys, err := st.APIKeysByPrefix(ctx, k.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].LastUsedAt == nil || !keys[0].LastUsedAt.Equal(touched) {
		t.Fatalf("after the touch: keys %v, want one last used at %v", keys, touched)
	}
	want("recording the key's use", 0)

	synced := at.Add(time.Hour)
	update := func(p *driver.ConnectionUpdateParams) {
		t.Helper()
		p.WorkspaceID, p.Channel, p.Generation, p.At = "acme", conn.Channel, conn.Generation, synced
		if ok, err := st.ConnectionUpdate(ctx, p); err != nil || !ok {
			t.Fatalf("ConnectionUpdate(%+v) = %v, %v; want true", p, ok, err)
		}
	}
	update(&driver.ConnectionUpdateParams{SyncedAt: &synced})
	update(&driver.ConnectionUpdateParams{SyncError: "templates: 500 from the provider"})
	want("two records of a template sync", 0)
	// A Service caches what a send reads of a connection: a verdict on
	// its credentials must reach the other instances.
	update(&driver.ConnectionUpdateParams{Status: record.ConnectionError, StatusReason: "token expired"})
	want("a connection's status", 1)

	if err := st.APIKeyRevoke(ctx, &driver.APIKeyRevokeParams{WorkspaceID: "acme", ID: k.ID, At: touched}); err != nil {
		t.Fatal(err)
	}
	want("revoking the key", 1)
}
