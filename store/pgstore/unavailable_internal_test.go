package pgstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/ujumbe/messaging"
)

// TestUnavailableErrors: the faults of a database that cannot do the work
// for now become messaging.ErrUnavailable (503 and Retry-After on the REST
// surface); the rest keep their meaning.
func TestUnavailableErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want error // nil: neither sentinel
	}{
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, messaging.ErrUnavailable},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, messaging.ErrUnavailable},
		{"connection failure", &pgconn.PgError{Code: "08006"}, messaging.ErrUnavailable},
		{"disk full", &pgconn.PgError{Code: "53100"}, messaging.ErrUnavailable},
		{"too many connections", &pgconn.PgError{Code: "53300"}, messaging.ErrUnavailable},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, messaging.ErrUnavailable},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), messaging.ErrUnavailable},
		{"unexpected EOF", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), messaging.ErrUnavailable},
		{"unique violation", &pgconn.PgError{Code: codeUniqueViolation}, messaging.ErrConflict},
		{"syntax error", &pgconn.PgError{Code: "42601"}, nil},
		{"check violation", &pgconn.PgError{Code: "23514"}, nil},
		{"plain", errors.New("something else"), nil},
	} {
		got := interpretError(tc.err)
		for _, s := range []error{messaging.ErrUnavailable, messaging.ErrConflict} {
			if errors.Is(got, s) != (s == tc.want) {
				t.Errorf("%s: interpretError = %v; errors.Is(%v) = %v", tc.name, got, s, errors.Is(got, s))
			}
		}
		if tc.want == messaging.ErrUnavailable && !errors.Is(got, tc.err) {
			t.Errorf("%s: the cause is lost: %v", tc.name, got)
		}
	}
}
