package httpapi_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/pgstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// probe answers GET path through h and decodes the readiness body.
func probe(t *testing.T, h http.Handler, method, path string) (int, *httpapi.Readiness) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	var rd httpapi.Readiness
	if rec.Code != http.StatusMethodNotAllowed && path == httpapi.ReadyzPath {
		if err := json.Unmarshal(rec.Body.Bytes(), &rd); err != nil {
			t.Fatalf("%s %s: body %q: %v", method, path, rec.Body, err)
		}
	}
	return rec.Code, &rd
}

// started returns a Service on st whose workers run until the test ends.
func started(t *testing.T, st driver.Store) *messaging.Service {
	t.Helper()
	svc, err := messaging.New(st, fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()); cancel() })
	return svc
}

// TestHealthProbes: /healthz answers while the process serves; /readyz
// names each check that fails (workers not started, draining) and is 200
// only when all pass; neither needs a key.
func TestHealthProbes(t *testing.T) {
	t.Parallel()
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(svc, nil)
	if code, _ := probe(t, h, "GET", httpapi.HealthzPath); code != 200 {
		t.Errorf("/healthz: %d, want 200", code)
	}
	code, rd := probe(t, h, "GET", httpapi.ReadyzPath)
	want := &httpapi.Readiness{Status: "not_ready", NotReady: []string{"workers"},
		Checks: map[string]string{"draining": "ok", "store": "ok", "workers": "the dispatcher and webhook sender are not running"}}
	if code != 503 {
		t.Errorf("/readyz before Start: %d, want 503", code)
	}
	if d := cmp.Diff(want, rd); d != "" {
		t.Errorf("/readyz before Start (-want +got):\n%s", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	code, rd = probe(t, h, "GET", httpapi.ReadyzPath)
	if code != 200 || rd.Status != "ready" {
		t.Errorf("/readyz after Start: %d %+v, want 200 ready", code, rd)
	}
	if code, _ := probe(t, h, "HEAD", httpapi.ReadyzPath); code != 200 {
		t.Errorf("HEAD /readyz: %d, want 200", code)
	}
	if code, _ := probe(t, h, "POST", httpapi.ReadyzPath); code != 405 {
		t.Errorf("POST /readyz: %d, want 405", code)
	}
	h.Health().SetDraining(true)
	code, rd = probe(t, h, "GET", httpapi.ReadyzPath)
	if code != 503 || !cmp.Equal(rd.NotReady, []string{"draining"}) {
		t.Errorf("/readyz while draining: %d %+v, want 503 naming draining", code, rd)
	}
	if code, _ := probe(t, h, "GET", httpapi.HealthzPath); code != 200 {
		t.Errorf("/healthz while draining: %d, want 200 (the process still serves)", code)
	}
	h.Health().SetDraining(false)
	if err := svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, rd := probe(t, h, "GET", httpapi.ReadyzPath); code != 503 || !cmp.Equal(rd.NotReady, []string{"workers"}) {
		t.Errorf("/readyz after Close: %d %+v, want 503 naming workers", code, rd)
	}
}

// swapStore is a store whose database can be replaced under a Service
// whose only use of it is Ping: the test closes the SQLite store (the
// database is gone) and opens the file again (it is back).
type swapStore struct {
	mu sync.RWMutex
	driver.Store
}

func (s *swapStore) Ping(ctx context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.Store.Ping(ctx)
}

func (s *swapStore) set(st driver.Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Store = st
}

// TestReadyzFollowsTheSQLiteStore: /readyz is 503 naming the store while
// the database is closed, or its schema is not the one the program needs,
// and 200 again once it is back; the error text is not shown.
func TestReadyzFollowsTheSQLiteStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	open := func() *sqlitestore.Store {
		st, err := sqlitestore.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	st := &swapStore{Store: open()}
	// No workers run: the store is only pinged, so swapping it is safe.
	svc, err := messaging.New(st, fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(svc, &httpapi.Options{Health: httpapi.NewHealth(svc, &httpapi.HealthOptions{WorkersNotRequired: true})})
	if code, rd := probe(t, h, "GET", httpapi.ReadyzPath); code != 200 {
		t.Fatalf("/readyz: %d %+v", code, rd)
	}
	st.mu.RLock()
	_ = st.Store.Close()
	st.mu.RUnlock()
	code, rd := probe(t, h, "GET", httpapi.ReadyzPath)
	if code != 503 || !cmp.Equal(rd.NotReady, []string{"store"}) || rd.Checks["store"] != "not answering" {
		t.Errorf("/readyz with the database closed: %d %+v, want 503 naming the store", code, rd)
	}
	st.set(open())
	if code, rd := probe(t, h, "GET", httpapi.ReadyzPath); code != 200 {
		t.Errorf("/readyz with the database open again: %d %+v, want 200", code, rd)
	}

	// Another program migrates the database further.
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	setVersion := func(v int) {
		t.Helper()
		if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
			t.Fatal(err)
		}
	}
	setVersion(sqlitestore.SchemaVersion() + 1)
	code, rd = probe(t, h, "GET", httpapi.ReadyzPath)
	if code != 503 || !strings.Contains(rd.Checks["store"], "schema") {
		t.Errorf("/readyz with a newer schema: %d %+v, want 503 naming the schema", code, rd)
	}
	setVersion(sqlitestore.SchemaVersion())
	if code, rd := probe(t, h, "GET", httpapi.ReadyzPath); code != 200 {
		t.Errorf("/readyz with the schema back: %d %+v, want 200", code, rd)
	}
}

// TestReadyzFollowsPostgreSQL: /readyz is 503 while the store's database
// refuses connections and 200 once it accepts them again. The outage is
// made on a database of the test's own (ALLOW_CONNECTIONS false and its
// sessions ended), never on the server other tests share.
func TestReadyzFollowsPostgreSQL(t *testing.T) {
	t.Parallel()
	base := os.Getenv(envPostgresURL)
	if base == "" {
		t.Skip(envPostgresURL + " is not set")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := "readyz_" + hex.EncodeToString(b[:])
	ident := pgx.Identifier{db}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		t.Helper()
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", db); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "ALTER DATABASE "+ident+" WITH ALLOW_CONNECTIONS true")
		kill()
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident)
		_ = admin.Close(ctx)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	st, err := pgstore.Open(ctx, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(started(t, st), nil)
	t.Cleanup(func() { _ = st.Close() }) // before the database is dropped
	if code, rd := probe(t, h, "GET", httpapi.ReadyzPath); code != 200 {
		t.Fatalf("/readyz: %d %+v", code, rd)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" WITH ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	kill()
	// The pool may still hold a connection the kill has not reached yet;
	// each probe that uses one finds it dead, so a few probes suffice.
	var code int
	var rd *httpapi.Readiness
	for range 5 {
		if code, rd = probe(t, h, "GET", httpapi.ReadyzPath); code == 503 {
			break
		}
	}
	if code != 503 || !cmp.Equal(rd.NotReady, []string{"store"}) {
		t.Errorf("/readyz while the database refuses connections: %d %+v, want 503 naming the store", code, rd)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" WITH ALLOW_CONNECTIONS true"); err != nil {
		t.Fatal(err)
	}
	// Again, connections the pool held through the outage are found dead
	// one probe at a time (at most the pool's size).
	for range 10 {
		if code, rd = probe(t, h, "GET", httpapi.ReadyzPath); code == 200 {
			break
		}
	}
	if code != 200 {
		t.Errorf("/readyz with connections allowed again: %d %+v, want 200", code, rd)
	}
}
