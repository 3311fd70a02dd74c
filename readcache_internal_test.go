package messaging

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// connectionStore holds at most one connection and counts its reads; it
// implements nothing else of the Store.
type connectionStore struct {
	driver.Store
	conn  *ChannelConnection
	reads int
}

func (s *connectionStore) ConnectionGet(context.Context, string, string) (*ChannelConnection, error) {
	s.reads++
	if s.conn == nil {
		return nil, ErrNotFound
	}
	return s.conn.Clone(), nil
}

func (s *connectionStore) ConnectionUpdate(_ context.Context, p *driver.ConnectionUpdateParams) (bool, error) {
	if p.Status != "" {
		s.conn.Status, s.conn.StatusReason = p.Status, p.StatusReason
	}
	return true, nil
}

// What a send reads of a connection is cached for the TTL, missing ones
// included; a change made elsewhere is seen once the TTL passed, one made
// through this Service (a verdict on the credentials) at once, and a
// template sync keeps the cache.
func TestCacheConnectionRead(t *testing.T) {
	raw := &connectionStore{}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	c := newCachingStore(raw, func() time.Time { return now }, 300*time.Millisecond).(*cachingStore)
	ctx := context.Background()
	get := func(step string) *ChannelConnection {
		t.Helper()
		conn, err := c.ConnectionGet(ctx, "acme", "whatsapp")
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: %v", step, err)
		}
		return conn
	}
	wantReads := func(step string, n int) {
		t.Helper()
		if raw.reads != n {
			t.Errorf("%s: %d store reads, want %d", step, raw.reads, n)
		}
	}
	for range 3 {
		if conn := get("no connection"); conn != nil {
			t.Fatalf("no connection: got %+v", conn)
		}
	}
	wantReads("three reads of a missing connection within the TTL", 1)

	// Connected elsewhere: seen once the TTL passed.
	raw.conn = &ChannelConnection{WorkspaceID: "acme", Channel: "whatsapp", AccountID: "100", TokenSealed: []byte("sealed"),
		Status: record.ConnectionConnected, VerifiedAt: &now, Generation: 1}
	now = now.Add(299 * time.Millisecond)
	if conn := get("within the TTL"); conn != nil {
		t.Logf("within the TTL: the new connection was seen early") // allowed, not required
	}
	now = now.Add(time.Millisecond)
	if conn := get("a TTL after"); conn == nil || conn.AccountID != "100" {
		t.Fatalf("a TTL after the connection was stored: got %+v", conn)
	}
	got := get("cached")
	got.TokenSealed[0] = 'X'
	if again := get("cached, after the copy was changed"); string(again.TokenSealed) != "sealed" {
		t.Errorf("changing a returned copy changed the cache: %q", again.TokenSealed)
	}
	wantReads("reads of the connection within its TTL", 2)

	// A template sync changes nothing a send reads: the cache is kept.
	synced := now
	if _, err := c.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: "acme", Channel: "whatsapp", Generation: 1, SyncedAt: &synced}); err != nil {
		t.Fatal(err)
	}
	get("after a template sync")
	wantReads("after a template sync", 2)

	// A verdict on the credentials through this Service: seen at once.
	if _, err := c.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: "acme", Channel: "whatsapp", Generation: 1,
		Status: record.ConnectionError, StatusReason: "token expired"}); err != nil {
		t.Fatal(err)
	}
	if conn := get("after the verdict"); conn == nil || conn.Status != record.ConnectionError {
		t.Errorf("after this Service marked the connection in error: got %+v", conn)
	}
}
