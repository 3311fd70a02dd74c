package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// TestSessionsAcrossInstances: two Services, each with its own pool, on
// one database, as behind a load balancer: a session started on one works
// on the other until it expires or either ends it; and sweeps running on
// both at once delete every expired session once, without an error.
func TestSessionsAcrossInstances(t *testing.T) {
	url := testURL(t)
	schema := newSchema(t, url)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	a, b := open(t, url, schema, 4), open(t, url, schema, 4)
	svcA := newService(t, a, fakeprovider.New(), clock.Now, messaging.DispatchOptions{})
	svcB := newService(t, b, fakeprovider.New(), clock.Now, messaging.DispatchOptions{})
	if _, err := svcA.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	unauthorized := func(what string, svc *messaging.Service, token string) {
		t.Helper()
		if _, err := svc.Session(ctx, token); messaging.ErrorCode(err) != messaging.CodeUnauthorized {
			t.Fatalf("%s: %v, want %s", what, err, messaging.CodeUnauthorized)
		}
	}
	ended, _, err := svcA.StartSession(ctx, &messaging.SessionParams{Subject: "amina", Workspaces: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	expiring, _, err := svcA.StartSession(ctx, &messaging.SessionParams{Subject: "op", Operator: true, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := svcB.Session(ctx, ended); err != nil || s.Subject != "amina" || len(s.Workspaces) != 1 {
		t.Fatalf("session started on A, read on B: %+v, %v", s, err)
	}
	if err := svcB.EndSession(ctx, ended); err != nil {
		t.Fatal(err)
	}
	unauthorized("ended on B, read on A", svcA, ended)
	if _, err := svcB.Session(ctx, expiring); err != nil {
		t.Fatalf("before expiry, on B: %v", err)
	}
	clock.Advance(time.Hour)
	unauthorized("expired, on B", svcB, expiring)

	const n = 450
	before := clock.Now()
	for i := range n {
		st := &driver.StoredSession{Session: messaging.Session{ID: fmt.Sprintf("ses_%d", i), Subject: "s",
			CreatedAt: before.Add(-2 * time.Hour), ExpiresAt: before.Add(-time.Duration(i+1) * time.Second)},
			Hash: fmt.Sprintf("%064x", i)}
		if err := a.SessionCreate(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for _, s := range []driver.Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.SessionSweep(ctx, &driver.SessionSweepParams{Before: before, Limit: 20})
				if err != nil {
					t.Errorf("concurrent sweep: %v", err)
					return
				}
				mu.Lock()
				total += got
				mu.Unlock()
				if got == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	// The planted sessions, each once; the session that expired at
	// `before` itself is kept (a sweep takes those expiring before it).
	if total != n {
		t.Errorf("concurrent sweeps deleted %d sessions, want %d", total, n)
	}
	for _, h := range []string{fmt.Sprintf("%064x", 0), fmt.Sprintf("%064x", n-1)} {
		if _, err := b.SessionGet(ctx, h); !errors.Is(err, messaging.ErrNotFound) {
			t.Errorf("swept session %s: %v, want ErrNotFound", h[60:], err)
		}
	}
}
