package messaging_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestCreateAPIKeyRules: names, escalation, expiry.
func TestCreateAPIKeyRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	creator := &messaging.Principal{WorkspaceID: "acme", KeyID: "key_creator",
		Scopes: []string{record.ScopeManageKeys, record.ScopeWriteMessages, record.ScopeReadMessages}}
	past, now, future := t0.Add(-time.Second), t0, t0.Add(time.Hour)
	cases := []struct {
		name        string
		p           messaging.KeyCreateParams
		code        messaging.Code
		field, text string
	}{
		{"creator without name", messaging.KeyCreateParams{Scopes: []string{"write:messages"}, Creator: creator}, messaging.CodeValidation, "name", "required"},
		{"name too long", messaging.KeyCreateParams{Name: strings.Repeat("é", record.MaxAPIKeyName+1), Scopes: []string{"write:messages"}}, messaging.CodeValidation, "name", "100"},
		{"name with a control character", messaging.KeyCreateParams{Name: "a\tb", Scopes: []string{"write:messages"}, Creator: creator}, messaging.CodeValidation, "name", "control"},
		{"name with surrounding space", messaging.KeyCreateParams{Name: " ci", Scopes: []string{"write:messages"}, Creator: creator}, messaging.CodeValidation, "name", "white space"},
		{"unknown scope", messaging.KeyCreateParams{Name: "ci", Scopes: []string{"write:everything"}, Creator: creator}, messaging.CodeValidation, "scopes", "write:everything"},
		{"escalation", messaging.KeyCreateParams{Name: "ci", Scopes: []string{"write:messages", "write:contacts"}, Creator: creator}, messaging.CodeForbidden, "scopes", "write:contacts"},
		{"expiry in the past", messaging.KeyCreateParams{Name: "ci", Scopes: []string{"write:messages"}, ExpiresAt: &past}, messaging.CodeValidation, "expires_at", "future"},
		{"expiry now", messaging.KeyCreateParams{Name: "ci", Scopes: []string{"write:messages"}, ExpiresAt: &now, Creator: creator}, messaging.CodeValidation, "expires_at", "future"},
		{"creator of another workspace", messaging.KeyCreateParams{Name: "ci", Scopes: []string{"write:messages"},
			Creator: &messaging.Principal{WorkspaceID: "other", Scopes: record.AllScopes()}}, messaging.CodeNotFound, "", ""},
	}
	for _, c := range cases {
		p := c.p
		before := f.store.counts()
		_, plain, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &p)
		e := wantError(t, err, c.code, c.field)
		if e != nil && !strings.Contains(e.Message, c.text) {
			t.Errorf("%s: message %q does not say %q", c.name, e.Message, c.text)
		}
		if plain != "" || f.store.counts() != before {
			t.Errorf("%s: a refused key was created", c.name)
		}
	}
	// What the creator holds it may grant, with a name of exactly 100
	// characters and a future expiry; without a Creator any scope goes,
	// and the name may be empty.
	name := strings.Repeat("é", record.MaxAPIKeyName)
	k, _, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: name,
		Scopes: []string{"write:messages", "read:messages"}, ExpiresAt: &future, Creator: creator})
	if err != nil {
		t.Fatalf("a key within the creator's scopes: %v", err)
	}
	if k.Name != name || k.LastUsedAt != nil {
		t.Errorf("created key: name %q, last used %v", k.Name, k.LastUsedAt)
	}
	if _, _, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()}); err != nil {
		t.Errorf("an unnamed key with every scope from a Go caller: %v", err)
	}
	got, err := f.svc.Workspace("acme").APIKeys.Get(f.ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(k, got); d != "" {
		t.Errorf("APIKeys.Get (-created +got):\n%s", d)
	}
	wantError(t, second(f.svc.Workspace("other").APIKeys.Get(f.ctx, k.ID)), messaging.CodeNotFound, "")
	wantError(t, second(f.svc.Workspace("acme").APIKeys.Get(f.ctx, "key_missing")), messaging.CodeNotFound, "")
}

// TestRevokeAPIKeyReturnsRecord: the revoked record comes back, and the
// key stops working at once, even when it revoked itself.
func TestRevokeAPIKeyReturnsRecord(t *testing.T) {
	t.Parallel()
	f := setup(t)
	k, plain, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "self", Scopes: []string{record.ScopeManageKeys}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.svc.Authenticate(f.ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	rev, err := f.svc.Workspace(p.WorkspaceID).APIKeys.Revoke(messaging.WithActor(f.ctx, p.KeyID), p.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.ID != k.ID || rev.RevokedAt == nil || !rev.RevokedAt.Equal(t0.Add(time.Second)) || rev.Name != "self" {
		t.Errorf("APIKeys.Revoke answered %+v, want key %s revoked at %v", rev, k.ID, t0.Add(time.Second))
	}
	wantError(t, second(f.svc.Authenticate(f.ctx, plain)), messaging.CodeInvalidAPIKey, "")
}

// touchStore blocks APIKeyTouch while gate is held and counts the writes;
// entered receives a value when a write starts (before it blocks).
type touchStore struct {
	*countingStore
	entered chan struct{}
	gate    sync.RWMutex
	mu      sync.Mutex
	touches []driver.APIKeyTouchParams
}

func (s *touchStore) APIKeyTouch(ctx context.Context, p *driver.APIKeyTouchParams) error {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	s.mu.Lock()
	s.touches = append(s.touches, *p)
	s.mu.Unlock()
	return s.countingStore.APIKeyTouch(ctx, p)
}

func (s *touchStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.touches)
}

// TestLastUsedAt: Authenticate records a key's use at most once a minute
// per key, without waiting for the store, and drops uses when the queue
// is full.
func TestLastUsedAt(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ts := &touchStore{countingStore: f.store, entered: make(chan struct{}, 16)}
	svc, err := messaging.New(ts, f.provider, &messaging.Options{Clock: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string) (*messaging.APIKey, string) {
		k, plain, err := svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: name, Scopes: []string{"read:messages"}})
		if err != nil {
			t.Fatal(err)
		}
		return k, plain
	}
	k1, key1 := mk("one")
	k2, key2 := mk("two")
	auth := func(key string) {
		t.Helper()
		if _, err := svc.Authenticate(f.ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	lastUsed := func(id string) *time.Time {
		t.Helper()
		if err := messaging.FlushKeyTouches(f.ctx, svc); err != nil {
			t.Fatal(err)
		}
		k, err := svc.Workspace("acme").APIKeys.Get(f.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return k.LastUsedAt
	}
	if got := lastUsed(k1.ID); got != nil {
		t.Fatalf("a key never used has LastUsedAt %v", got)
	}

	// Authenticate does not wait for the write: with the store's touches
	// blocked it still answers, and the write lands once they are not.
	ts.gate.Lock()
	auth(key1)
	ts.gate.Unlock()
	if got := lastUsed(k1.ID); got == nil || !got.Equal(t0) {
		t.Errorf("LastUsedAt after the first use: %v, want %v", got, t0)
	}
	// Uses within the minute are not written; the next after it is.
	f.clock.Advance(59 * time.Second)
	auth(key1)
	auth(key1)
	if got := lastUsed(k1.ID); !got.Equal(t0) || ts.count() != 1 {
		t.Errorf("after uses within the minute: LastUsedAt %v, %d writes; want %v and 1 write", got, ts.count(), t0)
	}
	f.clock.Advance(time.Second)
	auth(key1)
	if got := lastUsed(k1.ID); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("LastUsedAt after a minute: %v, want %v", got, t0.Add(time.Minute))
	}
	// The throttle is per key: key2's first use is written though key1's
	// was just written.
	auth(key2)
	if got := lastUsed(k2.ID); got == nil || !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("key2's LastUsedAt %v, want %v", got, t0.Add(time.Minute))
	}

	// The throttle holds before the write lands: a second use while the
	// first is still queued (the store still shows the older time) is not
	// queued again.
	f.clock.Advance(time.Minute)
	before := ts.count()
	ts.gate.Lock()
	auth(key1)
	auth(key1)
	ts.gate.Unlock()
	if got := lastUsed(k1.ID); !got.Equal(f.clock.Now()) || ts.count() != before+1 {
		t.Errorf("two uses before the write landed: LastUsedAt %v, %d writes; want %v and 1 write", got, ts.count()-before, f.clock.Now())
	}

	// A full queue drops uses: with one slot and the store blocked, the
	// first use is in the writer's hands, the second waits in the queue,
	// the third is dropped. A dropped use leaves no throttle behind: the
	// key's next use is recorded.
	messaging.SetKeyTouchQueue(svc, 1)
	f.clock.Advance(time.Minute)
	k3, key3 := mk("three")
	for len(ts.entered) > 0 {
		<-ts.entered
	}
	ts.gate.Lock()
	auth(key1)
	<-ts.entered // the writer holds key1's use and waits for the gate
	auth(key2)
	auth(key3)
	ts.gate.Unlock()
	at := f.clock.Now()
	if got1, got2, got3 := lastUsed(k1.ID), lastUsed(k2.ID), lastUsed(k3.ID); !got1.Equal(at) || !got2.Equal(at) || got3 != nil {
		t.Errorf("with a queue of one: LastUsedAt %v, %v, %v; want %v, %v and nil (dropped)", got1, got2, got3, at, at)
	}
	auth(key3)
	if got := lastUsed(k3.ID); got == nil || !got.Equal(at) {
		t.Errorf("key3's use after the drop: LastUsedAt %v, want %v", got, at)
	}
	if err := svc.Close(f.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAPIKeyState: revoked wins over expired, and a key is expired from
// the instant of its ExpiresAt, as Authenticate judges it.
func TestAPIKeyState(t *testing.T) {
	t.Parallel()
	at := t0.Add(time.Hour)
	tests := []struct {
		name string
		key  messaging.APIKey
		now  time.Time
		want string
	}{
		{"no expiry", messaging.APIKey{}, t0, record.KeyActive},
		{"before expiry", messaging.APIKey{ExpiresAt: &at}, at.Add(-time.Nanosecond), record.KeyActive},
		{"at expiry", messaging.APIKey{ExpiresAt: &at}, at, record.KeyExpired},
		{"revoked", messaging.APIKey{RevokedAt: &t0}, t0, record.KeyRevoked},
		{"revoked and expired", messaging.APIKey{RevokedAt: &t0, ExpiresAt: &at}, at, record.KeyRevoked},
	}
	for _, tt := range tests {
		if got := tt.key.State(tt.now); got != tt.want {
			t.Errorf("%s: State = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestAPIKeyCloneIsDeep: a clone equals its key, and changing the clone's
// hash, scopes or times never changes the key (the service's cache hands
// out clones of the keys it keeps).
func TestAPIKeyCloneIsDeep(t *testing.T) {
	at := func(h int) *time.Time { v := t0.Add(time.Duration(h) * time.Hour); return &v }
	k := &messaging.APIKey{ID: "key_1", WorkspaceID: "acme", Prefix: "p", Hash: []byte{1, 2}, Scopes: []string{"read:messages"},
		ExpiresAt: at(1), RevokedAt: at(2), LastUsedAt: at(3), CreatedAt: t0}
	c := k.Clone()
	if d := cmp.Diff(k, c); d != "" {
		t.Fatalf("clone differs (-key +clone):\n%s", d)
	}
	c.Hash[0], c.Scopes[0] = 9, "write:messages"
	*c.ExpiresAt, *c.RevokedAt, *c.LastUsedAt = t0, t0, t0
	want := &messaging.APIKey{ID: "key_1", WorkspaceID: "acme", Prefix: "p", Hash: []byte{1, 2}, Scopes: []string{"read:messages"},
		ExpiresAt: at(1), RevokedAt: at(2), LastUsedAt: at(3), CreatedAt: t0}
	if d := cmp.Diff(want, k); d != "" {
		t.Errorf("changing the clone changed the key (-want +got):\n%s", d)
	}
}

// idRefusingStore fails every key update, as PostgreSQL does on an id
// holding a NUL or invalid UTF-8 (SQLSTATE 22021).
type idRefusingStore struct{ driver.Store }

func (idRefusingStore) APIKeyUpdate(context.Context, *driver.APIKeyUpdateParams) error {
	return errors.New("ERROR: invalid byte sequence for encoding \"UTF8\": 0x00 (SQLSTATE 22021)")
}

// TestUpdateAPIKeyRefusesBadIDsBeforeTheStore: an id no store can hold
// (a NUL, invalid UTF-8) is not found, without asking the store, as
// APIKeys.Get and APIKeys.Revoke answer it.
func TestUpdateAPIKeyRefusesBadIDsBeforeTheStore(t *testing.T) {
	svc, err := messaging.New(idRefusingStore{memstore.New()}, fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"key_\x00", "key_\xff"} {
		_, err := svc.Workspace("acme").APIKeys.Update(context.Background(), id, &messaging.KeyUpdateParams{Scopes: []string{record.ScopeReadMessages}})
		if c := messaging.ErrorCode(err); c != messaging.CodeNotFound {
			t.Errorf("APIKeys.Update(%q) = %v (%s), want not_found", id, err, c)
		}
	}
}

// TestKeyCannotOutliveOrOutrankItsMaker: a key that expires can only make
// or edit keys that expire no later; a key can revoke or edit only keys
// whose scopes it holds; the operator (no principal) keeps every right.
func TestKeyCannotOutliveOrOutrankItsMaker(t *testing.T) {
	t.Parallel()
	f := setup(t)
	hour, later := t0.Add(time.Hour), t0.Add(2*time.Hour)
	_, plain, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "short",
		Scopes: []string{record.ScopeManageKeys, record.ScopeWriteMessages}, ExpiresAt: &hour})
	if err != nil {
		t.Fatal(err)
	}
	short, err := f.svc.Authenticate(f.ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if short.ExpiresAt == nil || !short.ExpiresAt.Equal(hour) {
		t.Fatalf("Principal.ExpiresAt = %v, want %v", short.ExpiresAt, hour)
	}
	strong, _, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "all", Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	create := func(exp *time.Time) error {
		before := f.store.counts()
		_, _, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "child",
			Scopes: []string{record.ScopeWriteMessages}, ExpiresAt: exp, Creator: short})
		if err != nil && f.store.counts() != before {
			t.Errorf("a refused key was stored")
		}
		return err
	}
	for _, exp := range []*time.Time{nil, &later} {
		e := wantError(t, create(exp), messaging.CodeForbidden, "expires_at")
		if e != nil && !strings.Contains(e.Message, record.FormatTime(hour)) {
			t.Errorf("message %q does not name the creator's expiry", e.Message)
		}
	}
	if err := create(&hour); err != nil {
		t.Errorf("a child expiring with its parent: %v", err)
	}

	// Revoking a stronger key is refused, and the key stays active.
	e := wantError(t, second(f.svc.Workspace("acme").APIKeys.RevokeAs(f.ctx, short, strong.ID)), messaging.CodeForbidden, "scopes")
	if e != nil && !strings.Contains(e.Message, strong.ID) {
		t.Errorf("message %q does not name the key", e.Message)
	}
	if k, _ := f.svc.Workspace("acme").APIKeys.Get(f.ctx, strong.ID); k == nil || k.RevokedAt != nil {
		t.Errorf("the stronger key was revoked: %+v", k)
	}
	// Editing: a stronger key, raising scopes, or extending expiry.
	weak, _, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "weak",
		Scopes: []string{record.ScopeWriteMessages}, ExpiresAt: &hour})
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct {
		name   string
		id     string
		p      messaging.KeyUpdateParams
		field  string
		wantOK bool
	}{
		{"a stronger key", strong.ID, messaging.KeyUpdateParams{Scopes: []string{record.ScopeWriteMessages}, ExpiresAt: &hour}, "scopes", false},
		{"raising scopes", weak.ID, messaging.KeyUpdateParams{Scopes: []string{record.ScopeWriteContacts}, ExpiresAt: &hour}, "scopes", false},
		{"removing the expiry", weak.ID, messaging.KeyUpdateParams{Scopes: []string{record.ScopeWriteMessages}}, "expires_at", false},
		{"extending the expiry", weak.ID, messaging.KeyUpdateParams{Scopes: []string{record.ScopeWriteMessages}, ExpiresAt: &later}, "expires_at", false},
		{"within its rights", weak.ID, messaging.KeyUpdateParams{Scopes: []string{record.ScopeWriteMessages, record.ScopeManageKeys}, ExpiresAt: &hour}, "", true},
	}
	for _, c := range edits {
		p := c.p
		p.Editor = short
		before, _ := f.svc.Workspace("acme").APIKeys.Get(f.ctx, c.id)
		_, err := f.svc.Workspace("acme").APIKeys.Update(f.ctx, c.id, &p)
		if c.wantOK {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		wantError(t, err, messaging.CodeForbidden, c.field)
		if after, _ := f.svc.Workspace("acme").APIKeys.Get(f.ctx, c.id); !cmp.Equal(before, after) {
			t.Errorf("%s: the refused edit changed the key:\n%s", c.name, cmp.Diff(before, after))
		}
	}
	// A key of the same or narrower scopes may be revoked, itself too.
	if _, err := f.svc.Workspace("acme").APIKeys.RevokeAs(f.ctx, short, weak.ID); err != nil {
		t.Errorf("revoking a weaker key: %v", err)
	}
	if _, err := f.svc.Workspace("acme").APIKeys.RevokeAs(f.ctx, short, short.KeyID); err != nil {
		t.Errorf("revoking itself: %v", err)
	}
	// Another workspace's key is not found, and the operator keeps every right.
	wantError(t, second(f.svc.Workspace("acme").APIKeys.RevokeAs(f.ctx, &messaging.Principal{WorkspaceID: "other", Scopes: record.AllScopes()}, strong.ID)), messaging.CodeNotFound, "")
	if _, err := f.svc.Workspace("acme").APIKeys.Update(f.ctx, strong.ID, &messaging.KeyUpdateParams{Scopes: record.AllScopes()}); err != nil {
		t.Errorf("operator edit: %v", err)
	}
	if _, err := f.svc.Workspace("acme").APIKeys.Revoke(f.ctx, strong.ID); err != nil {
		t.Errorf("operator revoke: %v", err)
	}
}
