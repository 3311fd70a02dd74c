package messaging

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/ujumbe/messaging/internal/paging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// KeyLookupID returns the non-secret id under which a key is stored: the
// first 16 hex digits of its SHA-256. It reveals nothing of the key, so no
// character of a key (generated or given in a bootstrap file) is stored in
// clear.
func KeyLookupID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:record.KeyPrefixLen]
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
	if err := refuseUnstorable(p, createWorkspaceTexts); err != nil {
		return nil, err
	}
	if p == nil {
		p = &CreateWorkspaceParams{}
	}
	id := p.ID
	if id == "" {
		id = record.NewID("ws")
	} else if !workspaceIDRe.MatchString(id) {
		return nil, validationError("id", "must be 1 to 64 letters, digits, '_' or '-', starting with a letter or digit")
	}
	if err := checkLen(record.FieldPath("name"), p.Name, 200); err != nil {
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
		if errors.Is(err, ErrConflict) {
			return nil, errorOn(CodeConflict, "id", fmt.Sprintf("id: a workspace %q exists already; choose another id (or leave it out for a generated one)", id), err)
		}
		return nil, wrapStoreError(err, "workspace", id)
	}
	s.audit(ctx, id, record.AuditWorkspaceCreated, id)
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

// ListWorkspaces returns a page of the deployment's workspaces in byte
// order of their ids: at most limit (1 to MaxWorkspacePage; 0 means 50)
// after the cursor (empty: from the first). next is the cursor of the
// following page, empty when there is none.
func (s *Service) ListWorkspaces(ctx context.Context, cursor string, limit int) (list []*WorkspaceInfo, next string, err error) {
	limit, ok := paging.Size(limit, 50, record.MaxWorkspacePage)
	if !ok {
		return nil, "", validationError("limit", "must be 1 to %d", record.MaxWorkspacePage)
	}
	if cursor != "" && !workspaceIDRe.MatchString(cursor) {
		return nil, "", validationError("cursor", "is not a cursor this API returned")
	}
	list, err = s.store.WorkspaceList(ctx, &driver.WorkspaceListParams{After: cursor, Limit: limit + 1})
	if err != nil {
		return nil, "", wrapStoreError(err, "workspace", "")
	}
	list, next = paging.Cut(list, limit, func(w *WorkspaceInfo) string { return w.ID })
	return list, next, nil
}

// utcPtr returns a copy of *t in UTC, or nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
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
	if found == nil || found.State(now) != record.KeyActive {
		return nil, errInvalidKey
	}
	s.touches.touch(found, now)
	return &Principal{WorkspaceID: found.WorkspaceID, KeyID: found.ID, Scopes: slices.Clone(found.Scopes), ExpiresAt: utcPtr(found.ExpiresAt)}, nil
}
