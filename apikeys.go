package messaging

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// APIKeys creates, lists, reads, changes and revokes the API keys of one
// workspace: a key of another workspace is not found. The plaintext of a
// key is returned only by Create; the store keeps a SHA-256 hash.
type APIKeys struct {
	svc *Service
	ws  string
}

// KeyCreateParams are the arguments of APIKeys.Create.
//
// The arguments of a handle's verbs are named after the resource and the
// verb, as ContactCreateParams and WebhookUpdateParams; those of API keys
// are KeyCreateParams and KeyUpdateParams, because APIKeyUpdateParams
// names the store's update of a key record.
type KeyCreateParams struct {
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

// Create creates an API key in the workspace and returns its record and
// its plaintext. The plaintext is returned only here; the store keeps a
// SHA-256 hash. Generated keys look like "mk_<8 chars>_<43 chars>" and
// carry 304 random bits. A scope the Creator does not hold is refused
// with CodeForbidden (Field "scopes", the message names the scope); so is
// an expiry later than the Creator's, or none when the Creator expires
// (Field "expires_at").
func (ks *APIKeys) Create(ctx context.Context, p *KeyCreateParams) (*APIKey, string, error) {
	if err := refuseUnstorableWorkspace(ks.ws); err != nil {
		return nil, "", err
	}
	if err := refuseUnstorable(p, keyCreateTexts); err != nil {
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
		if p.Creator.WorkspaceID != ks.ws {
			return nil, "", notFound("workspace", ks.ws)
		}
		if err := p.Creator.mayGrant(scopes, p.ExpiresAt); err != nil {
			return nil, "", err
		}
	}
	s := ks.svc
	if p.ExpiresAt != nil && !p.ExpiresAt.After(s.now()) {
		return nil, "", validationError("expires_at", "must be in the future (got %s)", record.FormatTime(*p.ExpiresAt))
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
	if _, err := s.GetWorkspace(ctx, ks.ws); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256([]byte(key))
	k := &APIKey{
		ID: record.NewID("key"), WorkspaceID: ks.ws, Name: p.Name, Prefix: KeyLookupID(key), Hash: sum[:],
		Scopes: scopes, ExpiresAt: utcPtr(p.ExpiresAt), CreatedAt: s.now(),
	}
	if err := s.store.APIKeyCreate(ctx, k); err != nil {
		return nil, "", wrapStoreError(err, "api key", k.ID)
	}
	s.audit(ctx, ks.ws, record.AuditKeyCreated, k.ID)
	return k, key, nil
}

// Get returns the record of a key of the workspace (never its
// plaintext). A key of another workspace is not found.
func (ks *APIKeys) Get(ctx context.Context, id string) (*APIKey, error) {
	if badID(id) {
		return nil, notFound("api key", id)
	}
	keys, err := ks.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return nil, notFound("api key", id)
}

// List returns the key records of the workspace (never plaintexts).
func (ks *APIKeys) List(ctx context.Context) ([]*APIKey, error) {
	list, err := ks.svc.store.APIKeyList(ctx, ks.ws)
	return list, wrapStoreError(err, "workspace", ks.ws)
}

// KeyUpdateParams are the arguments of APIKeys.Update (see
// KeyCreateParams for the names).
type KeyUpdateParams struct {
	// Scopes replace the key's scopes; at least one.
	Scopes []string
	// ExpiresAt replaces the key's expiry; nil means it never expires.
	ExpiresAt *time.Time
	// Editor is the key making the request, when a key edits a key: the
	// edited key must hold no scope the Editor lacks, and the new scopes
	// and expiry obey the rules of KeyCreateParams.Creator. Nil means the
	// operator, the dashboard or a Go caller, which may set anything.
	Editor *Principal
}

// Update replaces the scopes and the expiry of the key id of the
// workspace. The next request made with the key is judged by them: a key
// whose new ExpiresAt has passed is refused as expired, a scope it lost is
// forbidden. A revoked key stays revoked: revocation is final. With an
// Editor, a key stronger than it, or new scopes or an expiry it could
// not grant, are refused with CodeForbidden naming "scopes" or
// "expires_at".
func (ks *APIKeys) Update(ctx context.Context, id string, p *KeyUpdateParams) (*APIKey, error) {
	if p == nil {
		return nil, validationError("body", "is required")
	}
	if badID(id) {
		return nil, notFound("api key", id)
	}
	scopes, err := normalScopes(p.Scopes)
	if err != nil {
		return nil, err
	}
	if p.Editor != nil {
		if p.Editor.WorkspaceID != ks.ws {
			return nil, notFound("api key", id)
		}
		old, err := ks.Get(ctx, id)
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
	up := &driver.APIKeyUpdateParams{WorkspaceID: ks.ws, ID: id, Scopes: scopes, ExpiresAt: utcPtr(p.ExpiresAt)}
	if err := ks.svc.store.APIKeyUpdate(ctx, up); err != nil {
		return nil, wrapStoreError(err, "api key", id)
	}
	ks.svc.audit(ctx, ks.ws, record.AuditKeyUpdated, id)
	return ks.Get(ctx, id)
}

// Revoke revokes the key id of the workspace and returns its record.
// Revoking twice is not an error (the first RevokedAt stays). Revocation
// is final and immediate: nothing makes a revoked key work again, and the
// next Authenticate with it fails, even when the key revoked itself. It
// acts for the operator, the dashboard or a Go caller: see RevokeAs for a
// key acting.
func (ks *APIKeys) Revoke(ctx context.Context, id string) (*APIKey, error) {
	return ks.RevokeAs(ctx, nil, id)
}

// RevokeAs is Revoke made by the key by (the management API; nil acts as
// Revoke): a key may revoke only keys of its workspace that hold no scope
// it lacks, itself included. A stronger key is refused with
// CodeForbidden naming "scopes" and stays active.
func (ks *APIKeys) RevokeAs(ctx context.Context, by *Principal, id string) (*APIKey, error) {
	if badID(id) {
		return nil, notFound("api key", id)
	}
	if by != nil {
		if by.WorkspaceID != ks.ws {
			return nil, notFound("api key", id)
		}
		k, err := ks.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := by.mayManage(k, "revoke"); err != nil {
			return nil, err
		}
	}
	if err := ks.svc.store.APIKeyRevoke(ctx, &driver.APIKeyRevokeParams{WorkspaceID: ks.ws, ID: id, At: ks.svc.now()}); err != nil {
		return nil, wrapStoreError(err, "api key", id)
	}
	ks.svc.audit(ctx, ks.ws, record.AuditKeyRevoked, id)
	return ks.Get(ctx, id)
}

// mayGrant returns nil when the principal may give a key these scopes and
// this expiry (nil: never expires): every scope is one it holds, and the
// key expires no later than the principal. Otherwise a forbidden error
// naming the field.
func (p *Principal) mayGrant(scopes []string, expiresAt *time.Time) error {
	for _, sc := range scopes {
		if !p.HasScope(sc) {
			return errorOn(CodeForbidden, "scopes", fmt.Sprintf("scopes: the API key making the request lacks the scope %s, so it cannot grant it", sc), nil)
		}
	}
	if p.ExpiresAt == nil {
		return nil
	}
	if expiresAt == nil {
		return errorOn(CodeForbidden, "expires_at", fmt.Sprintf("expires_at: the API key making the request expires at %s, so the key must expire too, at or before then", record.FormatTime(*p.ExpiresAt)), nil)
	}
	if expiresAt.After(*p.ExpiresAt) {
		return errorOn(CodeForbidden, "expires_at", fmt.Sprintf("expires_at: %s is after %s, when the API key making the request expires; a key cannot outlive the key that made it", record.FormatTime(*expiresAt), record.FormatTime(*p.ExpiresAt)), nil)
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
			return errorOn(CodeForbidden, "scopes", fmt.Sprintf("scopes: the key %s holds the scope %s, which the API key making the request lacks, so it cannot %s it", k.ID, sc, verb), nil)
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
			return validationError("name", "is required: 1 to %d characters", record.MaxAPIKeyName)
		}
		return nil
	}
	if err := checkLen(record.FieldPath("name"), name, record.MaxAPIKeyName); err != nil {
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
		if !slices.Contains(record.AllScopes(), sc) {
			return nil, validationError("scopes", "unknown scope %q; allowed: %s", sc, strings.Join(record.AllScopes(), ", "))
		}
	}
	out := slices.Clone(scopes)
	slices.Sort(out)
	return slices.Compact(out), nil
}
