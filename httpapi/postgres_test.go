package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging/store/pgstore"
)

// envPostgresURL names the environment variable with the URL of the test
// database, as in store/pgstore's tests.
const envPostgresURL = "MESSAGING_TEST_POSTGRES_URL"

// openPostgres opens a PostgreSQL store on a schema of its own, dropped with
// everything in it when the test ends. Without MESSAGING_TEST_POSTGRES_URL
// the test is skipped; with it, a database that does not answer fails the
// test (.ci/run sets it and refuses to run without PostgreSQL).
func openPostgres(t testing.TB) *pgstore.Store {
	t.Helper()
	url := os.Getenv(envPostgresURL)
	if url == "" {
		t.Skip(envPostgresURL + " is not set: skipping the PostgreSQL run " +
			"(set it, e.g. to postgres://postgres@127.0.0.1:5432/test?sslmode=disable, to run it; .ci/run does)")
	}
	return openPostgresAt(t, url)
}

// openPostgresAt opens a PostgreSQL store at url on a schema of its own,
// dropped with everything in it when the test ends; a database that does
// not answer fails the test.
func openPostgresAt(t testing.TB, url string) *pgstore.Store {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "httpapi_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	st, err := pgstore.Open(context.Background(), url, &pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatalf("opening PostgreSQL at %s: %v", envPostgresURL, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
