package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// The handlers of the webhook management routes (/v1/webhooks, scope
// manage:webhooks). Secrets appear only in the answers of create and
// rotate-secret.

// webhookJSON is a webhook endpoint as the API shows it: never its secret.
type webhookJSON struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
	Enabled     bool     `json:"enabled"`
	// DisabledAt and DisabledReason ("gone", "operator") are set while
	// the endpoint is disabled.
	DisabledAt     *timestamp `json:"disabled_at"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	// PreviousSecretExpiresAt is when the secret replaced by the last
	// rotation stops signing (null when there is none).
	PreviousSecretExpiresAt *timestamp `json:"previous_secret_expires_at"`
	CreatedAt               timestamp  `json:"created_at"`
}

func timePtr(t *time.Time) *timestamp {
	if t == nil {
		return nil
	}
	ts := timestamp(*t)
	return &ts
}

func webhookView(e *messaging.WebhookEndpoint) webhookJSON {
	events := e.Events
	if events == nil {
		events = []string{}
	}
	return webhookJSON{ID: e.ID, URL: e.URL, Events: events, Description: e.Description, Enabled: e.DisabledAt == nil,
		DisabledAt: timePtr(e.DisabledAt), DisabledReason: e.DisabledReason,
		PreviousSecretExpiresAt: timePtr(e.PreviousSecretExpiresAt), CreatedAt: timestamp(e.CreatedAt)}
}

// webhookCreatedJSON is the answer of POST /v1/webhooks: the endpoint and
// its secret, shown only here.
type webhookCreatedJSON struct {
	webhookJSON
	Secret string `json:"secret"`
}

// webhookRotatedJSON is the answer of POST /v1/webhooks/{id}/rotate-secret.
type webhookRotatedJSON struct {
	ID                      string     `json:"id"`
	Secret                  string     `json:"secret"`
	PreviousSecretExpiresAt *timestamp `json:"previous_secret_expires_at"`
}

// webhookTestJSON is the answer of POST /v1/webhooks/{id}/test.
type webhookTestJSON struct {
	// StatusCode is null when the receiver did not answer.
	StatusCode *int   `json:"status_code"`
	LatencyMS  int64  `json:"latency_ms"`
	Error      string `json:"error,omitempty"`
}

// deliveryJSON is a webhook delivery as listed.
type deliveryJSON struct {
	ID             string     `json:"id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	State          string     `json:"state"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      string     `json:"last_error"`
	NextAttemptAt  *timestamp `json:"next_attempt_at"`
	LastAttemptAt  *timestamp `json:"last_attempt_at"`
	DeliveredAt    *timestamp `json:"delivered_at"`
	CreatedAt      timestamp  `json:"created_at"`
	// Test marks the record of POST /v1/webhooks/{id}/test.
	Test bool `json:"test"`
}

func deliveryView(d *messaging.WebhookDelivery) deliveryJSON {
	v := deliveryJSON{ID: messaging.WebhookDeliveryID(d), EventID: d.EventID, EventType: d.EventType, State: d.State, Attempts: d.Attempts,
		LastError: d.LastError, LastAttemptAt: timePtr(d.LastAttemptAt), DeliveredAt: timePtr(d.DeliveredAt), CreatedAt: timestamp(d.CreatedAt),
		Test: d.Test}
	if d.LastStatus != 0 {
		st := d.LastStatus
		v.LastStatusCode = &st
	}
	if d.State == record.DeliveryPending {
		v.NextAttemptAt = timePtr(&d.DueAt)
	}
	return v
}

// webhookCreateRequest is the body of POST /v1/webhooks.
type webhookCreateRequest struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
}

func (q *webhookCreateRequest) params() (*messaging.WebhookCreateParams, error) {
	return &messaging.WebhookCreateParams{URL: q.URL, Events: q.Events, Description: q.Description}, nil
}

// webhookPatch is the body of PATCH /v1/webhooks/{id}: the fields present
// are changed.
type webhookPatch struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Description *string   `json:"description"`
	Enabled     *bool     `json:"enabled"`
}

func (q *webhookPatch) params() (*messaging.WebhookUpdateParams, error) {
	return &messaging.WebhookUpdateParams{URL: q.URL, Events: q.Events, Description: q.Description, Enabled: q.Enabled}, nil
}

// noBody refuses a request body other than none or an empty JSON object,
// and any query: the body of an action (rotate-secret, test, redeliver).
func (h *Handler) noBody(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		return h.decode(w, r, &struct{}{}) // the same errors as a body that is too large or unreadable
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return h.decode(w, r, &struct{}{})
}

func (h *Handler) listWebhooks(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	list, err := h.svc.Workspace(p.WorkspaceID).Webhooks.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(list))
	for i, e := range list {
		out[i] = webhookView(e)
	}
	writeJSON(w, http.StatusOK, struct {
		Data []webhookJSON `json:"data"`
	}{out})
	return nil
}

func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &webhookCreateRequest{})
	if err != nil {
		return err
	}
	e, secret, err := h.svc.Workspace(p.WorkspaceID).Webhooks.Create(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, webhookCreatedJSON{webhookJSON: webhookView(e), Secret: secret})
	return nil
}

func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return getByID(w, r, h.svc.Workspace(p.WorkspaceID).Webhooks.Get, webhookView)
}

func (h *Handler) updateWebhook(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &webhookPatch{})
	if err != nil {
		return err
	}
	return answer(w, http.StatusOK, webhookView)(h.svc.Workspace(p.WorkspaceID).Webhooks.Update(r.Context(), r.PathValue("id"), params))
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := h.noBody(w, r); err != nil {
		return err
	}
	return answer(w, http.StatusOK, webhookView)(h.svc.Workspace(p.WorkspaceID).Webhooks.Delete(r.Context(), r.PathValue("id")))
}

func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := h.noBody(w, r); err != nil {
		return err
	}
	e, secret, err := h.svc.Workspace(p.WorkspaceID).Webhooks.RotateSecret(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, webhookRotatedJSON{ID: e.ID, Secret: secret, PreviousSecretExpiresAt: timePtr(e.PreviousSecretExpiresAt)})
	return nil
}

func (h *Handler) testWebhook(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := h.noBody(w, r); err != nil {
		return err
	}
	res, err := h.svc.Workspace(p.WorkspaceID).Webhooks.Test(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	v := webhookTestJSON{LatencyMS: res.Latency.Milliseconds(), Error: res.Error}
	if res.StatusCode != 0 {
		v.StatusCode = &res.StatusCode
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (h *Handler) listWebhookDeliveries(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := query(r, "cursor", "limit")
	if err != nil {
		return err
	}
	limit := 0
	if v, ok := q["limit"]; ok {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			return badRequest("limit", "must be an integer from 1 to %d (got %q)", record.MaxWebhookDeliveryPage, v)
		}
	}
	list, next, err := h.svc.Workspace(p.WorkspaceID).Webhooks.Deliveries(r.Context(), r.PathValue("id"), q["cursor"], limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page(viewEach(deliveryView)(list), next))
	return nil
}

func (h *Handler) redeliverWebhook(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := h.noBody(w, r); err != nil {
		return err
	}
	return answer(w, http.StatusAccepted, deliveryView)(h.svc.Workspace(p.WorkspaceID).Webhooks.Redeliver(r.Context(), r.PathValue("id"), r.PathValue("delivery_id")))
}
