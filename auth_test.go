package messaging_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

func TestCreateWorkspaceBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		p     *messaging.CreateWorkspaceParams
		code  messaging.Code
		field string
	}{
		{"id with space", &messaging.CreateWorkspaceParams{ID: "bad id"}, messaging.CodeValidation, "id"},
		{"id starting with dash", &messaging.CreateWorkspaceParams{ID: "-acme"}, messaging.CodeValidation, "id"},
		{"id with slash", &messaging.CreateWorkspaceParams{ID: "a/b"}, messaging.CodeValidation, "id"},
		{"id of 65 chars", &messaging.CreateWorkspaceParams{ID: strings.Repeat("w", 65)}, messaging.CodeValidation, "id"},
		{"name too long", &messaging.CreateWorkspaceParams{ID: "fresh", Name: runes('n', 201)}, messaging.CodeValidation, "name"},
		{"name invalid UTF-8", &messaging.CreateWorkspaceParams{ID: "fresh", Name: "\xff"}, messaging.CodeValidation, "name"},
		{"unknown channel", &messaging.CreateWorkspaceParams{ID: "fresh", Channels: []string{"whatsapp", "sms"}}, messaging.CodeValidation, "channels"},
		{"empty channel", &messaging.CreateWorkspaceParams{ID: "fresh", Channels: []string{""}}, messaging.CodeValidation, "channels"},
		{"duplicate id", &messaging.CreateWorkspaceParams{ID: "acme", Name: "Again"}, messaging.CodeConflict, "id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			w, err := f.svc.CreateWorkspace(f.ctx, tc.p)
			if w != nil {
				t.Errorf("CreateWorkspace returned %+v with an error", w)
			}
			wantError(t, err, tc.code, tc.field)
			if tc.p.ID != "acme" {
				_, err := f.svc.GetWorkspace(f.ctx, tc.p.ID)
				wantError(t, err, messaging.CodeNotFound, "")
			} else if acme, err := f.svc.GetWorkspace(f.ctx, "acme"); err != nil || acme.Name != "Acme Ltd" {
				t.Errorf("acme after duplicate create = %+v, %v", acme, err)
			}
		})
	}
}

func TestCreateWorkspace(t *testing.T) {
	t.Parallel()
	f := setup(t)
	w, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{Name: "Generated",
		Channels: []string{"whatsapp", "messenger", "whatsapp"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.ID, "ws_") {
		t.Errorf("generated id %q, want prefix ws_", w.ID)
	}
	want := &messaging.WorkspaceInfo{ID: w.ID, Name: "Generated", Channels: []string{"messenger", "whatsapp"}, CreatedAt: t0}
	if d := cmp.Diff(want, w); d != "" {
		t.Errorf("CreateWorkspace (-want +got):\n%s", d)
	}
	got, err := f.svc.GetWorkspace(f.ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GetWorkspace (-want +got):\n%s", d)
	}
	// A workspace without channels refuses every send.
	bare, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "bare"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Workspace(bare.ID).Messages.Send(f.ctx, textMsg(kenya))
	wantError(t, err, messaging.CodeChannelUnavailable, "channel")
}

func TestCreateAPIKeyBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ws    string
		p     *messaging.KeyCreateParams
		code  messaging.Code
		field string
	}{
		{"no scopes", "acme", &messaging.KeyCreateParams{}, messaging.CodeValidation, "scopes"},
		{"empty scopes", "acme", &messaging.KeyCreateParams{Scopes: []string{}}, messaging.CodeValidation, "scopes"},
		{"unknown scope", "acme", &messaging.KeyCreateParams{Scopes: []string{"read:messages", "admin"}}, messaging.CodeValidation, "scopes"},
		{"scope wrong case", "acme", &messaging.KeyCreateParams{Scopes: []string{"READ:messages"}}, messaging.CodeValidation, "scopes"},
		{"write:templates is not a scope", "acme", &messaging.KeyCreateParams{Scopes: []string{"write:templates"}}, messaging.CodeValidation, "scopes"},
		{"key of 19 chars", "acme", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, Key: strings.Repeat("k", 19)}, messaging.CodeValidation, "key"},
		{"key of 129 chars", "acme", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, Key: strings.Repeat("k", 129)}, messaging.CodeValidation, "key"},
		{"key with space", "acme", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, Key: "abcdefghij klmnopqrstuvwxyz"}, messaging.CodeValidation, "key"},
		{"key with tab", "acme", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, Key: "abcdefghij\tklmnopqrstuvwxyz"}, messaging.CodeValidation, "key"},
		{"key non-ASCII", "acme", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, Key: "abcdefghijklmnopqrstuvwxyzé"}, messaging.CodeValidation, "key"},
		{"unknown workspace", "ghost", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}}, messaging.CodeNotFound, ""},
		{"no workspace", "", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}}, messaging.CodeNotFound, ""},
		{"workspace id with NUL", "ac\x00me", &messaging.KeyCreateParams{Scopes: []string{"read:messages"}}, messaging.CodeValidation, "workspaceID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			k, plain, err := f.svc.Workspace(tc.ws).APIKeys.Create(f.ctx, tc.p)
			if k != nil || plain != "" {
				t.Errorf("CreateAPIKey returned %+v, %q with an error", k, plain)
			}
			wantError(t, err, tc.code, tc.field)
			if n := f.store.counts().Keys; n != 0 {
				t.Errorf("keys stored = %d, want 0", n)
			}
			keys, err := f.svc.Workspace("acme").APIKeys.List(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 0 {
				t.Errorf("APIKeys.List = %d keys, want 0", len(keys))
			}
		})
	}
}

var generatedKeyRe = regexp.MustCompile(`^mk_[A-Za-z0-9_-]{8}_[A-Za-z0-9_-]{43}$`)

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	expires := t0.Add(24 * time.Hour)
	k, plain, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{
		Scopes: []string{"write:messages", "read:messages", "write:messages"}, ExpiresAt: &expires})
	if err != nil {
		t.Fatal(err)
	}
	if !generatedKeyRe.MatchString(plain) {
		t.Errorf("generated key %q does not look like mk_<8>_<43>", plain)
	}
	p, err := f.svc.Authenticate(f.ctx, plain)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	want := &messaging.Principal{WorkspaceID: "acme", KeyID: k.ID, Scopes: []string{"read:messages", "write:messages"}, ExpiresAt: &expires}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("Principal (-want +got):\n%s", d)
	}
	if !p.HasScope("write:messages") || p.HasScope("read:contacts") {
		t.Errorf("HasScope wrong for %v", p.Scopes)
	}

	// Another key of the workspace other.
	_, otherPlain, err := f.svc.Workspace("other").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	op, err := f.svc.Authenticate(f.ctx, otherPlain)
	if err != nil || op.WorkspaceID != "other" || len(op.Scopes) != len(record.AllScopes()) {
		t.Fatalf("Authenticate(other key) = %+v, %v", op, err)
	}

	// The key works until just before it expires.
	f.clock.Advance(24*time.Hour - time.Nanosecond)
	if _, err := f.svc.Authenticate(f.ctx, plain); err != nil {
		t.Errorf("just before expiry: %v", err)
	}
	f.clock.Advance(time.Nanosecond)
	_, err = f.svc.Authenticate(f.ctx, plain)
	wantError(t, err, messaging.CodeInvalidAPIKey, "")
	f.clock.Advance(time.Hour)
	_, err = f.svc.Authenticate(f.ctx, plain)
	wantError(t, err, messaging.CodeInvalidAPIKey, "")
	// The other key has no expiry.
	if _, err := f.svc.Authenticate(f.ctx, otherPlain); err != nil {
		t.Errorf("key without expiry: %v", err)
	}
}

func TestAuthenticateInvalidKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// key returns the key to authenticate, given a working key.
		key func(t *testing.T, f *fixture, good string) string
	}{
		{"empty", func(*testing.T, *fixture, string) string { return "" }},
		{"short", func(*testing.T, *fixture, string) string { return "short" }},
		{"19 chars", func(*testing.T, *fixture, string) string { return strings.Repeat("k", 19) }},
		{"200 chars", func(*testing.T, *fixture, string) string { return strings.Repeat("k", 200) }},
		{"good key plus 200 chars", func(_ *testing.T, _ *fixture, good string) string { return good + strings.Repeat("k", 200) }},
		{"contains space", func(_ *testing.T, _ *fixture, good string) string { return good[:20] + " " + good[21:] }},
		{"contains newline", func(_ *testing.T, _ *fixture, good string) string { return good + "\n" }},
		{"unknown well-formed", func(*testing.T, *fixture, string) string { return "mk_AAAAAAAA_" + strings.Repeat("B", 43) }},
		{"right prefix wrong secret", func(_ *testing.T, _ *fixture, good string) string { return good[:len(good)-1] + "!" }},
		{"good key truncated", func(_ *testing.T, _ *fixture, good string) string { return good[:len(good)-1] }},
		{"good key upper-cased", func(_ *testing.T, _ *fixture, good string) string { return strings.ToUpper(good) }},
		{"revoked", func(t *testing.T, f *fixture, _ string) string {
			k, plain, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: []string{"read:messages"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Authenticate(f.ctx, plain); err != nil {
				t.Fatalf("before revocation: %v", err)
			}
			for range 2 { // revoking twice is not an error
				if _, err := f.svc.Workspace("acme").APIKeys.Revoke(f.ctx, k.ID); err != nil {
					t.Fatal(err)
				}
			}
			return plain
		}},
		{"expired", func(t *testing.T, f *fixture, _ string) string {
			exp := t0.Add(time.Minute)
			_, plain, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, ExpiresAt: &exp})
			if err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(2 * time.Minute)
			return plain
		}},
		{"explicit key revoked", func(t *testing.T, f *fixture, _ string) string {
			const key = "bootstrap-key-0123456789"
			k, _, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Workspace("acme").APIKeys.Revoke(f.ctx, k.ID); err != nil {
				t.Fatal(err)
			}
			return key
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			_, good, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
			if err != nil {
				t.Fatal(err)
			}
			p, err := f.svc.Authenticate(f.ctx, tc.key(t, f, good))
			if p != nil {
				t.Errorf("Authenticate returned principal %+v with an error", p)
			}
			e := wantError(t, err, messaging.CodeInvalidAPIKey, "")
			if strings.Contains(e.Message, good) {
				t.Errorf("error message %q contains a key", e.Message)
			}
			// The good key still works.
			if _, err := f.svc.Authenticate(f.ctx, good); err != nil {
				t.Errorf("good key after a bad attempt: %v", err)
			}
		})
	}
}

func TestExplicitKeys(t *testing.T) {
	t.Parallel()
	f := setup(t)
	visible := ""
	for c := byte(0x21); c < 0x7f; c++ {
		visible += string(c)
	}
	tests := []struct {
		name string
		ws   string
		key  string
	}{
		{"20 chars", "acme", "abcdefghijklmnopqrst"},
		{"128 chars", "acme", strings.Repeat("Z", 128)},
		{"every visible ASCII char", "acme", visible},
		// Same first characters as the 20-char key, another
		// workspace: keys are found by a hash, not by their text.
		{"shared prefix", "other", "abcdefghijkl_other_workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, plain, err := f.svc.Workspace(tc.ws).APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: []string{"read:contacts"}, Key: tc.key})
			if err != nil {
				t.Fatalf("CreateAPIKey: %v", err)
			}
			if plain != tc.key {
				t.Errorf("returned key %q, want the given key", plain)
			}
			p, err := f.svc.Authenticate(f.ctx, tc.key)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			want := &messaging.Principal{WorkspaceID: tc.ws, KeyID: k.ID, Scopes: []string{"read:contacts"}}
			if d := cmp.Diff(want, p); d != "" {
				t.Errorf("Principal (-want +got):\n%s", d)
			}
		})
	}
	// The first key still authenticates to acme despite the shared prefix.
	p, err := f.svc.Authenticate(f.ctx, "abcdefghijklmnopqrst")
	if err != nil || p.WorkspaceID != "acme" {
		t.Errorf("Authenticate(20-char key) = %+v, %v; want workspace acme", p, err)
	}
	// The same key twice is a conflict, even in another workspace.
	_, _, err = f.svc.Workspace("other").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: []string{"read:contacts"}, Key: "abcdefghijklmnopqrst"})
	wantError(t, err, messaging.CodeConflict, "")
}

func TestListAPIKeysNeverShowsPlaintext(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var plains []string
	for i, key := range []string{"", "", "explicit-bootstrap-key-1234567890"} {
		f.clock.Advance(time.Second)
		_, plain, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: []string{"read:messages"}, Key: key})
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		plains = append(plains, plain)
	}
	keys, err := f.svc.Workspace("acme").APIKeys.List(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(plains) {
		t.Fatalf("APIKeys.List = %d keys, want %d", len(keys), len(plains))
	}
	for i, k := range keys {
		plain := plains[i] // oldest first
		if !k.CreatedAt.Equal(t0.Add(time.Duration(i+1) * time.Second)) {
			t.Errorf("key %d created %v, want oldest first", i, k.CreatedAt)
		}
		if len(k.Prefix) != record.KeyPrefixLen || k.Prefix != messaging.KeyLookupID(plain) || strings.Contains(plain, k.Prefix) {
			t.Errorf("key %d: Prefix %q, want KeyLookupID of the key, sharing nothing with it", i, k.Prefix)
		}
		sum := sha256.Sum256([]byte(plain))
		if !bytes.Equal(k.Hash, sum[:]) || bytes.Equal(k.Hash, []byte(plain)) {
			t.Errorf("key %d: Hash is not the SHA-256 of the key", i)
		}
		if dump := fmt.Sprintf("%+v %v %#v", *k, k, k); strings.Contains(dump, plain) {
			t.Errorf("key %d: the record's dump contains the plaintext: %s", i, dump)
		}
		if k.WorkspaceID != "acme" || k.RevokedAt != nil || k.ExpiresAt != nil {
			t.Errorf("key %d: %+v", i, k)
		}
	}
	others, err := f.svc.Workspace("other").APIKeys.List(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(others) != 0 {
		t.Errorf("other workspace lists %d keys, want 0", len(others))
	}

	// Revoking needs the key's own workspace.
	wantError(t, second(f.svc.Workspace("other").APIKeys.Revoke(f.ctx, keys[0].ID)), messaging.CodeNotFound, "")
	wantError(t, second(f.svc.Workspace("acme").APIKeys.Revoke(f.ctx, "key_missing")), messaging.CodeNotFound, "")
	if _, err := f.svc.Authenticate(f.ctx, plains[0]); err != nil {
		t.Errorf("key revoked from the wrong workspace stopped working: %v", err)
	}
	f.clock.Advance(time.Second)
	if _, err := f.svc.Workspace("acme").APIKeys.Revoke(f.ctx, keys[0].ID); err != nil {
		t.Fatal(err)
	}
	keys, err = f.svc.Workspace("acme").APIKeys.List(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if keys[0].RevokedAt == nil || !keys[0].RevokedAt.Equal(t0.Add(4*time.Second)) {
		t.Errorf("RevokedAt = %v, want %v", keys[0].RevokedAt, t0.Add(4*time.Second))
	}
}
