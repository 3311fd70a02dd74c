package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// sessionHash returns a distinct 64-digit hex hash for n.
func sessionHash(n int) string { return fmt.Sprintf("%064x", 0xabc000+n) }

func storedSession(n int, expiresSec int, workspaces ...string) *driver.StoredSession {
	return &driver.StoredSession{
		Session: messaging.Session{ID: fmt.Sprintf("ses_%d", n), Subject: fmt.Sprintf("user %d", n),
			Workspaces: workspaces, CreatedAt: at(-100), ExpiresAt: at(expiresSec)},
		Hash: sessionHash(n),
	}
}

func mustSession(t *testing.T, s driver.Store, st *driver.StoredSession) {
	t.Helper()
	if err := s.SessionCreate(context.Background(), st); err != nil {
		t.Fatalf("SessionCreate(%s): %v", st.ID, err)
	}
}

// testSessions: a session round-trips by its hash (times to the
// nanosecond, its workspaces and SMS accounts in order, none as empty,
// its binding or none), only the exact
// hash finds it, a hash or id is never taken twice, and a deleted
// session is gone while deleting again is not an error.
func testSessions(t *testing.T, s driver.Store) {
	ctx := context.Background()
	var many []string
	for i := range record.MaxSessionWorkspaces {
		many = append(many, fmt.Sprintf("ws-%03d", record.MaxSessionWorkspaces-i))
	}
	cases := []*driver.StoredSession{
		storedSession(1, 3600, "b", "a"),
		storedSession(2, 7200, many...),
		storedSession(3, 60),
	}
	cases[0].SMSAccounts = []string{"5678", "1234"}
	cases[0].Binding = strings.Repeat("5e", 32)
	cases[1].SMSAccounts = []string{} // stored empty, read empty
	cases[2].Operator = true
	cases[2].Subject = "opérateur ✓"
	for _, st := range cases {
		mustSession(t, s, st)
	}
	cases[2].Workspaces = []string{} // stored nil, read empty
	cases[2].SMSAccounts = []string{}
	for _, want := range cases {
		got, err := s.SessionGet(ctx, want.Hash)
		if err != nil {
			t.Fatalf("SessionGet(%s): %v", want.ID, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("SessionGet(%s) (-want +got):\n%s", want.ID, d)
		}
	}

	for _, h := range []string{sessionHash(99), strings.ToUpper(sessionHash(1)), sessionHash(1)[:63], ""} {
		_, err := s.SessionGet(ctx, h)
		wantErr(t, fmt.Sprintf("SessionGet(%q)", h), err, messaging.ErrNotFound)
	}

	sameHash := storedSession(4, 3600)
	sameHash.Hash = cases[0].Hash
	wantErr(t, "a second session under a taken hash", s.SessionCreate(ctx, sameHash), messaging.ErrConflict)
	sameID := storedSession(5, 3600)
	sameID.ID = cases[0].ID
	wantErr(t, "a second session under a taken id", s.SessionCreate(ctx, sameID), messaging.ErrConflict)
	if got, err := s.SessionGet(ctx, cases[0].Hash); err != nil || got.Subject != cases[0].Subject {
		t.Fatalf("after refused creates, the first session is %+v, %v; want it unchanged", got, err)
	}

	for i := 0; i < 2; i++ {
		if err := s.SessionDelete(ctx, cases[0].Hash); err != nil {
			t.Fatalf("SessionDelete #%d: %v", i+1, err)
		}
	}
	_, err := s.SessionGet(ctx, cases[0].Hash)
	wantErr(t, "deleted session", err, messaging.ErrNotFound)
	if err := s.SessionDelete(ctx, sessionHash(99)); err != nil {
		t.Fatalf("SessionDelete of an unknown hash: %v", err)
	}
	if _, err := s.SessionGet(ctx, cases[1].Hash); err != nil {
		t.Fatalf("deleting one session took another: %v", err)
	}
	// The freed hash and id may be used again.
	mustSession(t, s, storedSession(1, 3600))
}

// testSessionSweep: a sweep deletes only sessions that expired before
// its time, earliest first, at most Limit of them.
func testSessionSweep(t *testing.T, s driver.Store) {
	ctx := context.Background()
	expiries := map[int]int{1: -10, 2: -30, 3: -20, 4: 0, 5: 10}
	for n, sec := range expiries {
		mustSession(t, s, storedSession(n, sec))
	}
	sweep := func(limit, want int) {
		t.Helper()
		n, err := s.SessionSweep(ctx, &driver.SessionSweepParams{Before: at(0), Limit: limit})
		if err != nil || n != want {
			t.Fatalf("SessionSweep(limit %d) = %d, %v; want %d", limit, n, err, want)
		}
	}
	left := func() []int {
		var out []int
		for n := 1; n <= len(expiries); n++ {
			if _, err := s.SessionGet(ctx, sessionHash(n)); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	sweep(1, 1)
	if d := cmp.Diff([]int{1, 3, 4, 5}, left()); d != "" {
		t.Errorf("after a sweep of 1, the earliest expired goes (-want +got):\n%s", d)
	}
	sweep(10, 2)
	if d := cmp.Diff([]int{4, 5}, left()); d != "" {
		t.Errorf("after a full sweep, sessions expiring at or after Before stay (-want +got):\n%s", d)
	}
	sweep(10, 0)
}

// testSessionDeleteAll: deleting every session takes them all, expired or
// not, says how many, and leaves the store usable; with none it deletes 0.
func testSessionDeleteAll(t *testing.T, s driver.Store) {
	ctx := context.Background()
	for n, sec := range []int{-10, 60, 3600} {
		mustSession(t, s, storedSession(n+1, sec, "acme"))
	}
	if n, err := s.SessionDeleteAll(ctx); err != nil || n != 3 {
		t.Fatalf("SessionDeleteAll = %d, %v; want 3", n, err)
	}
	for n := 1; n <= 3; n++ {
		_, err := s.SessionGet(ctx, sessionHash(n))
		wantErr(t, fmt.Sprintf("session %d after SessionDeleteAll", n), err, messaging.ErrNotFound)
	}
	if n, err := s.SessionDeleteAll(ctx); err != nil || n != 0 {
		t.Fatalf("SessionDeleteAll of none = %d, %v; want 0", n, err)
	}
	mustSession(t, s, storedSession(1, 60))
}
