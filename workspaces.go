package messaging

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
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
	// Service.Authenticate), so it may lag the real last use by a minute.
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

// KeyLookupID returns the non-secret id under which a key is stored: the
// first 16 hex digits of its SHA-256. It reveals nothing of the key, so no
// character of a key (generated or given in a bootstrap file) is stored in
// clear.
func KeyLookupID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:KeyPrefixLen]
}

// Principal is an authenticated API key: its workspace, scopes and
// expiry.
type Principal struct {
	WorkspaceID string
	KeyID       string
	Scopes      []string
	// ExpiresAt is when the key stops working; nil means never. A key
	// the principal creates or edits may not outlive it.
	ExpiresAt *time.Time
}

// HasScope reports whether the principal holds scope.
func (p *Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Require returns nil when the principal holds scope, else a forbidden
// error naming it.
func (p *Principal) Require(scope string) error {
	if p.HasScope(scope) {
		return nil
	}
	return &Error{Code: CodeForbidden, Message: fmt.Sprintf("the API key lacks the scope %s", scope)}
}

var workspaceIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// CreateWorkspaceParams are the arguments of CreateWorkspace.
type CreateWorkspaceParams struct {
	// ID is the workspace id: 1 to 64 letters, digits, '_' or '-', starting
	// with a letter or digit. Empty means generate one.
	ID   string
	Name string
	// Channels to connect at creation, without credentials: channels the
	// service serves (Service.Channels).
	Channels []string
	// OutsideWindow is the workspace's policy for free-form sends outside
	// the customer-service window (see WorkspaceSettings); empty is
	// OutsideWindowProvider.
	OutsideWindow string
	// UnconfirmedSends is the workspace's policy for a send whose outcome
	// stays unknown (see WorkspaceSettings); empty is UnconfirmedResend.
	UnconfirmedSends string
	// OptOutKeywords replace the default opt-out keywords (OptOutKeywords)
	// of the workspace; empty keeps the defaults. Each keyword holds 1 to
	// MaxKeywordLen characters once folded (FoldKeyword: case and white
	// space ignored, and it is stored folded), none repeats another, none
	// is also an opt-in keyword, and a list holds at most MaxKeywords. An
	// error names the keyword's field, e.g. "opt_out_keywords[2]".
	OptOutKeywords []string
	// OptInKeywords replace the default opt-in keywords (OptInKeywords),
	// with the same rules.
	OptInKeywords []string
}

// CreateWorkspace creates a workspace.
func (s *Service) CreateWorkspace(ctx context.Context, p *CreateWorkspaceParams) (*WorkspaceInfo, error) {
	if err := refuseUnstorable(p); err != nil {
		return nil, err
	}
	if p == nil {
		p = &CreateWorkspaceParams{}
	}
	id := p.ID
	if id == "" {
		id = NewID("ws")
	} else if !workspaceIDRe.MatchString(id) {
		return nil, validationError("id", "must be 1 to 64 letters, digits, '_' or '-', starting with a letter or digit")
	}
	if err := checkLen("name", p.Name, 200); err != nil {
		return nil, err
	}
	for _, c := range p.Channels {
		if s.spec(c) == nil {
			return nil, validationError("channels", "must only hold %s (got %q)", orList(s.Channels()), c)
		}
	}
	policy, err := outsideWindowPolicy(p.OutsideWindow)
	if err != nil {
		return nil, err
	}
	unconfirmed, err := unconfirmedSendsPolicy(p.UnconfirmedSends)
	if err != nil {
		return nil, err
	}
	optOut, err := keywordList("opt_out_keywords", p.OptOutKeywords)
	if err != nil {
		return nil, err
	}
	optIn, err := keywordList("opt_in_keywords", p.OptInKeywords)
	if err != nil {
		return nil, err
	}
	if err := checkKeywordOverlap(optOut, optIn, true, true); err != nil {
		return nil, err
	}
	chans := slices.Clone(p.Channels)
	slices.Sort(chans)
	chans = slices.Compact(chans)
	w := &WorkspaceInfo{ID: id, Name: p.Name, Channels: chans, OutsideWindow: policy, UnconfirmedSends: unconfirmed,
		OptOutKeywords: optOut, OptInKeywords: optIn, CreatedAt: s.now()}
	if err := s.store.WorkspaceCreate(ctx, w); err != nil {
		return nil, wrapStoreError(err, "workspace", id)
	}
	s.audit(ctx, id, AuditWorkspaceCreated, id)
	return w, nil
}

// GetWorkspace returns a workspace record.
//
// It reads the store, not the cache of the send path (Options.CacheTTL):
// the record is current even when another instance just changed it.
func (s *Service) GetWorkspace(ctx context.Context, id string) (*WorkspaceInfo, error) {
	w, err := s.raw.WorkspaceGet(ctx, id)
	if err != nil {
		return nil, wrapStoreError(err, "workspace", id)
	}
	return w, nil
}

// MaxWorkspacePage is the largest page of ListWorkspaces.
const MaxWorkspacePage = 100

// ListWorkspaces returns a page of the deployment's workspaces in byte
// order of their ids: at most limit (1 to MaxWorkspacePage; 0 means 50)
// after the cursor (empty: from the first). next is the cursor of the
// following page, empty when there is none.
func (s *Service) ListWorkspaces(ctx context.Context, cursor string, limit int) (list []*WorkspaceInfo, next string, err error) {
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > MaxWorkspacePage {
		return nil, "", validationError("limit", "must be 1 to %d", MaxWorkspacePage)
	}
	if cursor != "" && !workspaceIDRe.MatchString(cursor) {
		return nil, "", validationError("cursor", "is not a cursor this API returned")
	}
	list, err = s.store.WorkspaceList(ctx, &WorkspaceListParams{After: cursor, Limit: limit + 1})
	if err != nil {
		return nil, "", wrapStoreError(err, "workspace", "")
	}
	if len(list) > limit {
		list = list[:limit]
		next = list[limit-1].ID
	}
	if list == nil {
		list = []*WorkspaceInfo{}
	}
	return list, next, nil
}

// CreateAPIKeyParams are the arguments of CreateAPIKey.
type CreateAPIKeyParams struct {
	WorkspaceID string
	// Name tells the key apart in lists: at most MaxAPIKeyName characters,
	// without control characters or surrounding white space. It is
	// required when Creator is set (a key made through the management
	// API); bootstrap files and Go callers may leave it empty.
	Name string
	// Scopes granted to the key; at least one.
	Scopes []string
	// ExpiresAt, when set, is when the key stops working; it must be after
	// the service clock's now.
	ExpiresAt *time.Time
	// Key, when set, is used as the key instead of a generated one (for
	// bootstrap files): 20 to 128 visible ASCII characters.
	Key string
	// Creator is the key making the request, when a key creates a key
	// (the management API): every requested scope must be one it holds
	// and, when the Creator expires, ExpiresAt must be set and no later
	// than the Creator's, so no key can mint a key stronger or longer
	// lived than itself. Nil means the operator, the dashboard or a Go
	// caller, which may grant any scope and any expiry.
	Creator *Principal
}

// CreateAPIKey creates an API key and returns its record and its plaintext.
// The plaintext is returned only here; the store keeps a SHA-256 hash.
// Generated keys look like "mk_<8 chars>_<43 chars>" and carry 304 random
// bits. A scope the Creator does not hold is refused with CodeForbidden
// (Field "scopes", the message names the scope); so is an expiry later
// than the Creator's, or none when the Creator expires (Field
// "expires_at").
func (s *Service) CreateAPIKey(ctx context.Context, p *CreateAPIKeyParams) (*APIKey, string, error) {
	if err := refuseUnstorable(p); err != nil {
		return nil, "", err
	}
	if p == nil {
		return nil, "", validationError("body", "is required")
	}
	if err := checkKeyName(p.Name, p.Creator != nil); err != nil {
		return nil, "", err
	}
	scopes, err := normalScopes(p.Scopes)
	if err != nil {
		return nil, "", err
	}
	if p.Creator != nil {
		if p.Creator.WorkspaceID != p.WorkspaceID {
			return nil, "", notFound("workspace", p.WorkspaceID)
		}
		if err := p.Creator.mayGrant(scopes, p.ExpiresAt); err != nil {
			return nil, "", err
		}
	}
	if p.ExpiresAt != nil && !p.ExpiresAt.After(s.now()) {
		return nil, "", validationError("expires_at", "must be in the future (got %s)", FormatTime(*p.ExpiresAt))
	}
	key := p.Key
	if key == "" {
		var pub [6]byte
		var sec [32]byte
		if _, err := rand.Read(pub[:]); err != nil {
			return nil, "", &Error{Code: CodeInternal, Message: "internal error", Err: err}
		}
		_, _ = rand.Read(sec[:])
		key = "mk_" + base64.RawURLEncoding.EncodeToString(pub[:])[:8] + "_" + base64.RawURLEncoding.EncodeToString(sec[:])
	} else if !WellFormedKey(key) {
		return nil, "", validationError("key", "must be 20 to 128 visible ASCII characters")
	}
	if _, err := s.GetWorkspace(ctx, p.WorkspaceID); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256([]byte(key))
	k := &APIKey{
		ID: NewID("key"), WorkspaceID: p.WorkspaceID, Name: p.Name, Prefix: KeyLookupID(key), Hash: sum[:],
		Scopes: scopes, ExpiresAt: utcPtr(p.ExpiresAt), CreatedAt: s.now(),
	}
	if err := s.store.APIKeyCreate(ctx, k); err != nil {
		return nil, "", wrapStoreError(err, "api key", k.ID)
	}
	s.audit(ctx, p.WorkspaceID, AuditKeyCreated, k.ID)
	return k, key, nil
}

// mayGrant returns nil when the principal may give a key these scopes and
// this expiry (nil: never expires): every scope is one it holds, and the
// key expires no later than the principal. Otherwise a forbidden error
// naming the field.
func (p *Principal) mayGrant(scopes []string, expiresAt *time.Time) error {
	for _, sc := range scopes {
		if !p.HasScope(sc) {
			return &Error{Code: CodeForbidden, Field: "scopes",
				Message: fmt.Sprintf("scopes: the API key making the request lacks the scope %s, so it cannot grant it", sc)}
		}
	}
	if p.ExpiresAt == nil {
		return nil
	}
	if expiresAt == nil {
		return &Error{Code: CodeForbidden, Field: "expires_at",
			Message: fmt.Sprintf("expires_at: the API key making the request expires at %s, so the key must expire too, at or before then", FormatTime(*p.ExpiresAt))}
	}
	if expiresAt.After(*p.ExpiresAt) {
		return &Error{Code: CodeForbidden, Field: "expires_at",
			Message: fmt.Sprintf("expires_at: %s is after %s, when the API key making the request expires; a key cannot outlive the key that made it", FormatTime(*expiresAt), FormatTime(*p.ExpiresAt))}
	}
	return nil
}

// mayManage returns nil when the principal may revoke or edit the key k:
// k is of its workspace (else not found) and holds no scope the
// principal lacks (else forbidden naming "scopes"), so a key cannot act
// on a stronger one.
func (p *Principal) mayManage(k *APIKey, verb string) error {
	if k.WorkspaceID != p.WorkspaceID {
		return notFound("api key", k.ID)
	}
	for _, sc := range k.Scopes {
		if !p.HasScope(sc) {
			return &Error{Code: CodeForbidden, Field: "scopes",
				Message: fmt.Sprintf("scopes: the key %s holds the scope %s, which the API key making the request lacks, so it cannot %s it", k.ID, sc, verb)}
		}
	}
	return nil
}

// checkKeyName checks the name of a new key: at most MaxAPIKeyName
// characters, no control characters, no surrounding white space, and not
// empty when required.
func checkKeyName(name string, required bool) error {
	if name == "" {
		if required {
			return validationError("name", "is required: 1 to %d characters", MaxAPIKeyName)
		}
		return nil
	}
	if err := checkLen("name", name, MaxAPIKeyName); err != nil {
		return err
	}
	if strings.TrimSpace(name) != name {
		return validationError("name", "must not start or end with white space")
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return validationError("name", "must not hold control characters")
	}
	return nil
}

// normalScopes checks scopes (at least one, each known) and returns them
// sorted, without duplicates.
func normalScopes(scopes []string) ([]string, error) {
	if len(scopes) == 0 {
		return nil, validationError("scopes", "must hold at least one scope")
	}
	for _, sc := range scopes {
		if !slices.Contains(AllScopes(), sc) {
			return nil, validationError("scopes", "unknown scope %q; allowed: %s", sc, strings.Join(AllScopes(), ", "))
		}
	}
	out := slices.Clone(scopes)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// utcPtr returns a copy of *t in UTC, or nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// UpdateAPIKeyParams are the arguments of UpdateAPIKey.
type UpdateAPIKeyParams struct {
	WorkspaceID string
	// ID is the key's id (APIKey.ID).
	ID string
	// Scopes replace the key's scopes; at least one.
	Scopes []string
	// ExpiresAt replaces the key's expiry; nil means it never expires.
	ExpiresAt *time.Time
	// Editor is the key making the request, when a key edits a key: the
	// edited key must hold no scope the Editor lacks, and the new scopes
	// and expiry obey the rules of CreateAPIKeyParams.Creator. Nil means
	// the operator, the dashboard or a Go caller, which may set anything.
	Editor *Principal
}

// UpdateAPIKey replaces the scopes and the expiry of a key of the
// workspace. The next request made with the key is judged by them: a key
// whose new ExpiresAt has passed is refused as expired, a scope it lost is
// forbidden. A revoked key stays revoked: revocation is final. With an
// Editor, a key stronger than it, or new scopes or an expiry it could
// not grant, are refused with CodeForbidden naming "scopes" or
// "expires_at".
func (s *Service) UpdateAPIKey(ctx context.Context, p *UpdateAPIKeyParams) (*APIKey, error) {
	if p == nil {
		return nil, validationError("body", "is required")
	}
	if badID(p.ID) {
		return nil, notFound("api key", p.ID)
	}
	scopes, err := normalScopes(p.Scopes)
	if err != nil {
		return nil, err
	}
	if p.Editor != nil {
		if p.Editor.WorkspaceID != p.WorkspaceID {
			return nil, notFound("api key", p.ID)
		}
		old, err := s.GetAPIKey(ctx, p.WorkspaceID, p.ID)
		if err != nil {
			return nil, err
		}
		if err := p.Editor.mayManage(old, "edit"); err != nil {
			return nil, err
		}
		if err := p.Editor.mayGrant(scopes, p.ExpiresAt); err != nil {
			return nil, err
		}
	}
	up := &APIKeyUpdateParams{WorkspaceID: p.WorkspaceID, ID: p.ID, Scopes: scopes, ExpiresAt: utcPtr(p.ExpiresAt)}
	if err := s.store.APIKeyUpdate(ctx, up); err != nil {
		return nil, wrapStoreError(err, "api key", p.ID)
	}
	s.audit(ctx, p.WorkspaceID, AuditKeyUpdated, p.ID)
	return s.GetAPIKey(ctx, p.WorkspaceID, p.ID)
}

// GetAPIKey returns the record of a key of the workspace (never its
// plaintext). A key of another workspace is not found.
func (s *Service) GetAPIKey(ctx context.Context, workspaceID, keyID string) (*APIKey, error) {
	if badID(keyID) {
		return nil, notFound("api key", keyID)
	}
	keys, err := s.ListAPIKeys(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == keyID {
			return k, nil
		}
	}
	return nil, notFound("api key", keyID)
}

// WellFormedKey reports whether key has the shape of an API key: 20 to 128
// visible ASCII characters.
func WellFormedKey(key string) bool {
	if len(key) < 20 || len(key) > 128 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= 0x20 || key[i] >= 0x7f {
			return false
		}
	}
	return true
}

// RevokeAPIKey revokes a key of the workspace and returns its record.
// Revoking twice is not an error (the first RevokedAt stays). Revocation
// is final and immediate: nothing makes a revoked key work again, and the
// next Authenticate with it fails, even when the key revoked itself. It
// acts for the operator, the dashboard or a Go caller: see
// RevokeAPIKeyAs for a key acting.
func (s *Service) RevokeAPIKey(ctx context.Context, workspaceID, keyID string) (*APIKey, error) {
	return s.RevokeAPIKeyAs(ctx, nil, workspaceID, keyID)
}

// RevokeAPIKeyAs is RevokeAPIKey made by the key by (the management API;
// nil acts as RevokeAPIKey): a key may revoke only keys of its workspace
// that hold no scope it lacks, itself included. A stronger key is
// refused with CodeForbidden naming "scopes" and stays active.
func (s *Service) RevokeAPIKeyAs(ctx context.Context, by *Principal, workspaceID, keyID string) (*APIKey, error) {
	if badID(keyID) {
		return nil, notFound("api key", keyID)
	}
	if by != nil {
		if by.WorkspaceID != workspaceID {
			return nil, notFound("api key", keyID)
		}
		k, err := s.GetAPIKey(ctx, workspaceID, keyID)
		if err != nil {
			return nil, err
		}
		if err := by.mayManage(k, "revoke"); err != nil {
			return nil, err
		}
	}
	if err := s.store.APIKeyRevoke(ctx, &APIKeyRevokeParams{WorkspaceID: workspaceID, ID: keyID, At: s.now()}); err != nil {
		return nil, wrapStoreError(err, "api key", keyID)
	}
	s.audit(ctx, workspaceID, AuditKeyRevoked, keyID)
	return s.GetAPIKey(ctx, workspaceID, keyID)
}

// ListAPIKeys returns the key records of a workspace (never plaintexts).
func (s *Service) ListAPIKeys(ctx context.Context, workspaceID string) ([]*APIKey, error) {
	ks, err := s.store.APIKeyList(ctx, workspaceID)
	return ks, wrapStoreError(err, "workspace", workspaceID)
}

var errInvalidKey = &Error{Code: CodeInvalidAPIKey, Message: "the API key is invalid, revoked or expired"}

// Authenticate checks an API key and returns its workspace and scopes. An
// unknown, revoked, expired or malformed key gives invalid_api_key (the
// message does not say which). Hashes are compared in constant time.
//
// A successful call records the key's use in APIKey.LastUsedAt at most
// once every KeyTouchEvery per key and Service, without waiting for it:
// the write is queued and made by a background goroutine (Close waits for
// it). When more than DefaultKeyTouchQueue writes wait, further uses are
// not recorded until the queue drains.
func (s *Service) Authenticate(ctx context.Context, key string) (*Principal, error) {
	if !WellFormedKey(key) {
		return nil, errInvalidKey
	}
	cands, err := s.store.APIKeysByPrefix(ctx, KeyLookupID(key))
	if err != nil {
		return nil, wrapStoreError(err, "api key", "")
	}
	sum := sha256.Sum256([]byte(key))
	var found *APIKey
	for _, k := range cands {
		if subtle.ConstantTimeCompare(sum[:], k.Hash) == 1 {
			found = k
		}
	}
	now := s.now()
	if found == nil || found.State(now) != KeyActive {
		return nil, errInvalidKey
	}
	s.touches.touch(found, now)
	return &Principal{WorkspaceID: found.WorkspaceID, KeyID: found.ID, Scopes: slices.Clone(found.Scopes), ExpiresAt: utcPtr(found.ExpiresAt)}, nil
}

// String names the key by its id and public prefix, never its hash, so
// that a key printed or logged shows nothing secret.
func (k *APIKey) String() string { return fmt.Sprintf("APIKey(%s, %s)", k.ID, k.Prefix) }
