package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
)

// defaultPostgresURL is the PostgreSQL server the figures on PostgreSQL use
// when neither -postgres nor MESSAGING_TEST_POSTGRES_URL names one: the
// local cluster that .ci/run checks or starts.
const defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// postgresURLFromEnv returns MESSAGING_TEST_POSTGRES_URL, or the local
// cluster's URL.
func postgresURLFromEnv() string {
	if u := os.Getenv("MESSAGING_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return defaultPostgresURL
}

// freshPostgres creates an empty database named for the figure on the
// server of c.postgres, and returns its URL and a function dropping it. A
// figure on PostgreSQL starts from an empty database each time, as one on
// SQLite starts from a copied file. It fails, naming the URL, when no
// server answers: the figures on PostgreSQL never skip.
func (c *config) freshPostgres(ctx context.Context, name string) (string, func(), error) {
	admin, err := pgx.Connect(ctx, c.postgres)
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL at %s (-postgres): %w", redactURL(c.postgres), err)
	}
	defer admin.Close(context.Background())
	db := fmt.Sprintf("bench_%s_%d", strings.ReplaceAll(name, "-", "_"), os.Getpid())
	ident := pgx.Identifier{db}.Sanitize()
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", nil, fmt.Errorf("creating database %s: %w", db, err)
	}
	u, err := url.Parse(c.postgres)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + db
	drop := func() {
		ctx := context.Background()
		a, err := pgx.Connect(ctx, c.postgres)
		if err != nil {
			return
		}
		defer a.Close(ctx)
		_, _ = a.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}

// redactURL returns u without its password.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}
