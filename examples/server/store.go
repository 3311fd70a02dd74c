package main

import (
	"context"
	"net/url"
	"strings"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/pgstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// serverStore is what the server runs on: the messaging store, which the
// SMS API shares.
type serverStore interface {
	driver.Store
	sms.Store
}

// isPostgresURL reports whether db names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func isPostgresURL(db string) bool {
	lower := strings.ToLower(db)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

// openStore opens the store named by db: PostgreSQL for a postgres:// or
// postgresql:// URL, whose rate limits then live in the database too (so
// they hold across every instance of the server), otherwise the SQLite
// file at the path db.
func openStore(ctx context.Context, db string, apiOpts *httpapi.Options) (serverStore, error) {
	if isPostgresURL(db) {
		st, err := pgstore.Open(ctx, db, nil)
		if err != nil {
			return nil, err
		}
		apiOpts.Limiter = st.RateLimiter()
		return st, nil
	}
	return sqlitestore.Open(ctx, db, nil)
}

// dbLabel returns db for logs: a PostgreSQL URL without its password.
func dbLabel(db string) string {
	if !isPostgresURL(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres (unparsable URL)"
	}
	return u.Redacted()
}
