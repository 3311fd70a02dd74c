package messaging_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// readCountingStore counts the reads the service's cache stands in front
// of, and can hold one APIKeysByPrefix between its read and its return.
type readCountingStore struct {
	driver.Store
	keyReads, workspaceReads atomic.Int64
	// hold, when set, is called by APIKeysByPrefix after the store read.
	hold atomic.Pointer[func()]
}

func (s *readCountingStore) APIKeysByPrefix(ctx context.Context, prefix string) ([]*messaging.APIKey, error) {
	s.keyReads.Add(1)
	ks, err := s.Store.APIKeysByPrefix(ctx, prefix)
	if h := s.hold.Load(); h != nil {
		(*h)()
	}
	return ks, err
}

func (s *readCountingStore) WorkspaceGet(ctx context.Context, id string) (*messaging.WorkspaceInfo, error) {
	s.workspaceReads.Add(1)
	return s.Store.WorkspaceGet(ctx, id)
}

// twoInstances is two Services on one store, as two instances of a
// deployment behind a load balancer, sharing a fake clock.
type twoInstances struct {
	ctx   context.Context
	clock *fakeClock
	store *readCountingStore
	a, b  *messaging.Service
}

func newTwoInstances(t *testing.T, ttl time.Duration) *twoInstances {
	t.Helper()
	f := &twoInstances{ctx: context.Background(), clock: newFakeClock(t0), store: &readCountingStore{Store: memstore.New()}}
	for _, s := range []**messaging.Service{&f.a, &f.b} {
		svc, err := messaging.New(f.store, fakeprovider.New(), &messaging.Options{Clock: f.clock.Now, CacheTTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		*s = svc
	}
	if _, err := f.a.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: f.a.Channels()}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *twoInstances) key(t *testing.T) (*messaging.APIKey, string) {
	t.Helper()
	k, plain, err := f.a.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	return k, plain
}

func (f *twoInstances) send(svc *messaging.Service) error {
	_, err := svc.Workspace("acme").Messages.Send(f.ctx, &messaging.SendParams{Channel: messaging.ChannelWhatsApp, To: "+254712345678", Type: "text", Text: "hi"})
	return err
}

func TestCacheKeyRevokedElsewhereStopsWithinTTL(t *testing.T) {
	t.Parallel()
	f := newTwoInstances(t, 0) // the default
	k, plain := f.key(t)
	for _, svc := range []*messaging.Service{f.a, f.b} {
		if _, err := svc.Authenticate(f.ctx, plain); err != nil {
			t.Fatal(err)
		}
	}
	reads := f.store.keyReads.Load()
	// Repeated use within the TTL reads nothing: that is the cache's point.
	for range 10 {
		if _, err := f.b.Authenticate(f.ctx, plain); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.store.keyReads.Load() - reads; got != 0 {
		t.Errorf("10 authentications within the TTL read the keys %d times, want 0", got)
	}

	// Revoked through a: a sees it at once.
	if _, err := f.a.Workspace("acme").APIKeys.Revoke(f.ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	_, err := f.a.Authenticate(f.ctx, plain)
	wantError(t, err, messaging.CodeInvalidAPIKey, "")
	// b, which last read the key before the revocation, may use its copy
	// until it is DefaultCacheTTL old, and never after.
	f.clock.Advance(defaults.DefaultCacheTTL - time.Millisecond)
	if _, err := f.b.Authenticate(f.ctx, plain); err != nil {
		t.Logf("b saw the revocation early: %v", err) // allowed, not required
	}
	f.clock.Advance(time.Millisecond)
	_, err = f.b.Authenticate(f.ctx, plain)
	wantError(t, err, messaging.CodeInvalidAPIKey, "")
	if defaults.DefaultCacheTTL > defaults.MaxCacheTTL || defaults.MaxCacheTTL > time.Second {
		t.Errorf("DefaultCacheTTL %v, MaxCacheTTL %v: the documented bound is 1 s", defaults.DefaultCacheTTL, defaults.MaxCacheTTL)
	}
}

func TestCacheChannelDisconnectedElsewhereStopsWithinTTL(t *testing.T) {
	t.Parallel()
	f := newTwoInstances(t, 300*time.Millisecond)
	if err := f.send(f.b); err != nil {
		t.Fatal(err)
	}
	if err := setChannel(f.ctx, f.a, "acme", messaging.ChannelWhatsApp, false); err != nil {
		t.Fatal(err)
	}
	wantError(t, f.send(f.a), messaging.CodeChannelUnavailable, "channel")
	f.clock.Advance(300 * time.Millisecond)
	wantError(t, f.send(f.b), messaging.CodeChannelUnavailable, "channel")

	// Connected again through b: b sees it at once, a within the TTL.
	if err := setChannel(f.ctx, f.b, "acme", messaging.ChannelWhatsApp, true); err != nil {
		t.Fatal(err)
	}
	if err := f.send(f.b); err != nil {
		t.Errorf("b after its own connect: %v", err)
	}
	f.clock.Advance(300 * time.Millisecond)
	if err := f.send(f.a); err != nil {
		t.Errorf("a a TTL after b's connect: %v", err)
	}
}

// A read that began before a change of the same Service must not be
// kept: otherwise a key revoked while another request was reading it would
// work again for a whole TTL on the instance that revoked it.
func TestCacheReadOverlappingRevocationIsNotKept(t *testing.T) {
	t.Parallel()
	f := newTwoInstances(t, time.Second)
	k, plain := f.key(t)
	read, release := make(chan struct{}), make(chan struct{})
	hold := func() {
		close(read)
		<-release
	}
	f.store.hold.Store(&hold)
	done := make(chan error, 1)
	go func() {
		_, err := f.a.Authenticate(f.ctx, plain)
		done <- err
	}()
	<-read // the key as it was before the revocation is in hand
	f.store.hold.Store(nil)
	if _, err := f.a.Workspace("acme").APIKeys.Revoke(f.ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Logf("the overlapping request: %v", err) // either answer is right for it
	}
	_, err := f.a.Authenticate(f.ctx, plain)
	wantError(t, err, messaging.CodeInvalidAPIKey, "")
}

func TestCacheTTLOption(t *testing.T) {
	t.Parallel()
	if _, err := messaging.New(memstore.New(), fakeprovider.New(), &messaging.Options{CacheTTL: defaults.MaxCacheTTL + time.Nanosecond}); err == nil {
		t.Error("New accepted a CacheTTL over MaxCacheTTL")
	}
	// Negative turns the cache off: every request reads the store.
	f := newTwoInstances(t, -1)
	_, plain := f.key(t)
	before, wsBefore := f.store.keyReads.Load(), f.store.workspaceReads.Load()
	for range 3 {
		if _, err := f.a.Authenticate(f.ctx, plain); err != nil {
			t.Fatal(err)
		}
		if err := f.send(f.a); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.store.keyReads.Load() - before; got != 3 {
		t.Errorf("with the cache off, 3 authentications read the keys %d times", got)
	}
	if got := f.store.workspaceReads.Load() - wsBefore; got < 3 {
		t.Errorf("with the cache off, 3 sends read the workspace %d times", got)
	}
	// An unknown key is never cached: each use reads the store (a key
	// created on another instance works at once, and guessed keys do not
	// fill memory).
	g := newTwoInstances(t, time.Second)
	unknown := "mk_abcdefgh_" + strings.Repeat("x", 43)
	before = g.store.keyReads.Load()
	for range 2 {
		_, err := g.b.Authenticate(g.ctx, unknown)
		wantError(t, err, messaging.CodeInvalidAPIKey, "")
	}
	if got := g.store.keyReads.Load() - before; got != 2 {
		t.Errorf("2 uses of an unknown key read the keys %d times, want 2", got)
	}
}
