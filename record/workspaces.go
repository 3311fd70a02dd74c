package record

import (
	"fmt"
	"slices"
	"time"
)

// Scopes of API keys.
const (
	ScopeReadMessages  = "read:messages"
	ScopeWriteMessages = "write:messages"
	ScopeReadTemplates = "read:templates"
	ScopeReadContacts  = "read:contacts"
	ScopeWriteContacts = "write:contacts"
	// The management scopes extend the spec's five: each covers reading
	// and changing its resource through the management API.
	ScopeManageKeys      = "manage:keys"
	ScopeManageTemplates = "manage:templates"
	ScopeManageChannels  = "manage:channels"
	ScopeManageWebhooks  = "manage:webhooks"
)

// AllScopes lists every scope.
func AllScopes() []string {
	return []string{ScopeReadMessages, ScopeWriteMessages, ScopeReadTemplates, ScopeReadContacts, ScopeWriteContacts,
		ScopeManageKeys, ScopeManageTemplates, ScopeManageChannels, ScopeManageWebhooks}
}

// WorkspaceInfo is a workspace record.
type WorkspaceInfo struct {
	ID   string
	Name string
	// Channels lists the connected channels, sorted.
	Channels []string
	// OutsideWindow is what a free-form send outside the customer-service
	// window gets: OutsideWindowProvider (stored as empty, the default) or
	// OutsideWindowReject.
	OutsideWindow string
	// UnconfirmedSends is what becomes of a message whose send outcome
	// stayed unknown through the dispatcher's confirmation window:
	// UnconfirmedResend (stored as empty, the default) or UnconfirmedFail.
	// See ActiveUnconfirmedSends.
	UnconfirmedSends string
	// OptOutKeywords are the workspace's opt-out keywords, folded
	// (FoldKeyword); empty means the defaults (OptOutKeywords). See
	// ActiveOptOutKeywords.
	OptOutKeywords []string
	// OptInKeywords are the workspace's opt-in keywords, folded; empty
	// means the defaults (OptInKeywords). See ActiveOptInKeywords.
	OptInKeywords []string
	CreatedAt     time.Time
}

// APIKey is a stored API key. The plaintext is never stored, not even in
// part: only Prefix (KeyLookupID of the key, used to find it) and Hash (the
// SHA-256 of the whole key, compared in constant time).
type APIKey struct {
	ID          string
	WorkspaceID string
	// Name tells keys apart in lists (for example "billing service"); empty
	// for keys made by a bootstrap file or a Go call that gave none.
	Name      string
	Prefix    string
	Hash      []byte
	Scopes    []string
	ExpiresAt *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
	// LastUsedAt is when the key last authenticated a request, nil if
	// never. It is recorded at most once a minute per key (see
	// messaging.Service.Authenticate), so it may lag the real last use by a minute.
	LastUsedAt *time.Time
}

// Clone returns a deep copy of k: changing the copy's scopes, hash or
// times never changes k.
func (k *APIKey) Clone() *APIKey {
	c := *k
	c.Hash = slices.Clone(k.Hash)
	c.Scopes = slices.Clone(k.Scopes)
	c.ExpiresAt, c.RevokedAt, c.LastUsedAt = clonePtr(k.ExpiresAt), clonePtr(k.RevokedAt), clonePtr(k.LastUsedAt)
	return &c
}

// Clone returns a deep copy of w: changing the copy's lists never changes
// w.
func (w *WorkspaceInfo) Clone() *WorkspaceInfo {
	c := *w
	c.Channels = slices.Clone(w.Channels)
	c.OptOutKeywords = slices.Clone(w.OptOutKeywords)
	c.OptInKeywords = slices.Clone(w.OptInKeywords)
	return &c
}

// clonePtr returns a pointer to a copy of *p, or nil when p is nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// States of an API key (APIKey.State).
const (
	// KeyActive: the key authenticates requests.
	KeyActive = "active"
	// KeyRevoked: the key was revoked; revocation is final.
	KeyRevoked = "revoked"
	// KeyExpired: the key's ExpiresAt has come.
	KeyExpired = "expired"
)

// State returns the state of k at now: KeyRevoked once it is revoked,
// else KeyExpired from its ExpiresAt on, else KeyActive. Authenticate
// accepts only an active key.
func (k *APIKey) State(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return KeyExpired
	}
	return KeyActive
}

// MaxAPIKeyName is the longest APIKey.Name, in characters.
const MaxAPIKeyName = 100

// KeyPrefixLen is the length of the lookup id stored in APIKey.Prefix.
const KeyPrefixLen = 16

// MaxWorkspacePage is the largest page of ListWorkspaces.
const MaxWorkspacePage = 100

// String names the key by its id and public prefix, never its hash, so
// that a key printed or logged shows nothing secret.
func (k *APIKey) String() string { return fmt.Sprintf("APIKey(%s, %s)", k.ID, k.Prefix) }
