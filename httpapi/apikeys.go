package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// apiKeyJSON is an API key record as the management routes show it: never
// its plaintext or hash. Prefix is the key's non-secret lookup id
// (messaging.KeyLookupID). Absent times are null.
type apiKeyJSON struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  timestamp  `json:"created_at"`
	ExpiresAt  *timestamp `json:"expires_at"`
	LastUsedAt *timestamp `json:"last_used_at"`
	RevokedAt  *timestamp `json:"revoked_at"`
}

// createdAPIKeyJSON is the answer of POST /v1/api-keys: the record and,
// this once, the plaintext key.
type createdAPIKeyJSON struct {
	apiKeyJSON
	Key string `json:"key"`
}

// apiKeyListJSON is the answer of GET /v1/api-keys.
type apiKeyListJSON struct {
	Data []apiKeyJSON `json:"data"`
}

func timestampPtr(t *time.Time) *timestamp {
	if t == nil {
		return nil
	}
	ts := timestamp(*t)
	return &ts
}

func apiKeyView(k *messaging.APIKey) apiKeyJSON {
	scopes := k.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return apiKeyJSON{
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: scopes, CreatedAt: timestamp(k.CreatedAt),
		ExpiresAt: timestampPtr(k.ExpiresAt), LastUsedAt: timestampPtr(k.LastUsedAt), RevokedAt: timestampPtr(k.RevokedAt),
	}
}

// apiKeyCreateRequest is the body of POST /v1/api-keys.
type apiKeyCreateRequest struct {
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	ExpiresAt *string  `json:"expires_at"`
}

func (q *apiKeyCreateRequest) params() (*messaging.KeyCreateParams, error) {
	p := &messaging.KeyCreateParams{Name: q.Name, Scopes: q.Scopes}
	if q.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *q.ExpiresAt)
		if err != nil {
			return nil, badRequest("expires_at", "must be an RFC 3339 time such as 2026-12-31T23:59:59Z (got %q)", *q.ExpiresAt)
		}
		p.ExpiresAt = &t
	}
	return p, nil
}

func (h *Handler) listAPIKeys(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	keys, err := h.svc.Workspace(p.WorkspaceID).APIKeys.List(r.Context())
	return answer(w, http.StatusOK, func(keys []*messaging.APIKey) apiKeyListJSON {
		return apiKeyListJSON{Data: viewEach(apiKeyView)(keys)}
	})(keys, err)
}

// createAPIKey creates a key in the caller's workspace, with the caller as
// its Creator: the library refuses scopes the caller lacks.
func (h *Handler) createAPIKey(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &apiKeyCreateRequest{})
	if err != nil {
		return err
	}
	params.Creator = p
	k, plain, err := h.svc.Workspace(p.WorkspaceID).APIKeys.Create(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, createdAPIKeyJSON{apiKeyJSON: apiKeyView(k), Key: plain})
	return nil
}

func (h *Handler) getAPIKey(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return getByID(w, r, h.svc.Workspace(p.WorkspaceID).APIKeys.Get, apiKeyView)
}

// revokeAPIKey revokes a key of the caller's workspace, the caller's own
// key included, and answers the revoked record. The library refuses a key
// holding a scope the caller lacks.
func (h *Handler) revokeAPIKey(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	return answer(w, http.StatusOK, apiKeyView)(h.svc.Workspace(p.WorkspaceID).APIKeys.RevokeAs(r.Context(), p, r.PathValue("id")))
}

// auditEventJSON is an audit event as GET /v1/audit-events shows it.
type auditEventJSON struct {
	ID        string    `json:"id"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	CreatedAt timestamp `json:"created_at"`
}

func (h *Handler) listAuditEvents(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := query(r, "cursor", "limit")
	if err != nil {
		return err
	}
	limit := 0
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badRequest("limit", "must be an integer from 1 to %d (got %q)", record.MaxAuditPage, v)
		}
		limit = n
	}
	events, next, err := h.svc.AuditEvents(r.Context(), p.WorkspaceID, q["cursor"], limit)
	if err != nil {
		return err
	}
	out := make([]auditEventJSON, len(events))
	for i, e := range events {
		out[i] = auditEventJSON{ID: e.ID, Actor: e.Actor, Action: e.Action, Target: e.Target, CreatedAt: timestamp(e.At)}
	}
	writeJSON(w, http.StatusOK, page(out, next))
	return nil
}
