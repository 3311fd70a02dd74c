package client

import (
	"context"
	"iter"
	"net/http"
)

// Webhooks manages the webhook endpoints of the workspace and their
// deliveries (scope manage:webhooks).
type Webhooks struct{ r *restClient }

// List returns the workspace's webhook endpoints (GET /v1/webhooks).
func (s *Webhooks) List(ctx context.Context) ([]*Webhook, error) {
	return getData[*Webhook](ctx, s.r, "/v1/webhooks")
}

// Create creates a webhook endpoint (POST /v1/webhooks); its Secret, for
// VerifyWebhook, is shown this once.
func (s *Webhooks) Create(ctx context.Context, p *WebhookCreateParams) (*WebhookCreated, error) {
	return send[WebhookCreated](ctx, s.r, http.MethodPost, p, false, "/v1/webhooks")
}

// Get returns a webhook endpoint (GET /v1/webhooks/{id}).
func (s *Webhooks) Get(ctx context.Context, id string) (*Webhook, error) {
	return get[Webhook](ctx, s.r, nil, "/v1/webhooks/%s", id)
}

// Update changes the fields p sets (PATCH /v1/webhooks/{id}); Enabled true
// enables a disabled endpoint again.
func (s *Webhooks) Update(ctx context.Context, id string, p *WebhookUpdateParams) (*Webhook, error) {
	return send[Webhook](ctx, s.r, http.MethodPatch, p, false, "/v1/webhooks/%s", id)
}

// Delete deletes a webhook endpoint (DELETE /v1/webhooks/{id}) and returns
// it as it was.
func (s *Webhooks) Delete(ctx context.Context, id string) (*Webhook, error) {
	return send[Webhook](ctx, s.r, http.MethodDelete, nil, true, "/v1/webhooks/%s", id)
}

// RotateSecret gives an endpoint a new secret (POST
// /v1/webhooks/{id}/rotate-secret); the previous one keeps signing beside
// it until PreviousSecretExpiresAt.
func (s *Webhooks) RotateSecret(ctx context.Context, id string) (*WebhookSecret, error) {
	return send[WebhookSecret](ctx, s.r, http.MethodPost, nil, false, "/v1/webhooks/%s/rotate-secret", id)
}

// Test sends a webhook.test event to an endpoint now (POST
// /v1/webhooks/{id}/test) and returns the receiver's answer. The test is
// recorded in the endpoint's deliveries (Deliveries), marked Test.
func (s *Webhooks) Test(ctx context.Context, id string) (*WebhookTestResult, error) {
	return send[WebhookTestResult](ctx, s.r, http.MethodPost, nil, false, "/v1/webhooks/%s/test", id)
}

// Deliveries returns one page of an endpoint's deliveries, newest first
// (GET /v1/webhooks/{id}/deliveries). p may be nil.
func (s *Webhooks) Deliveries(ctx context.Context, id string, p *CursorParams) (*WebhookDeliveryPage, error) {
	return get[WebhookDeliveryPage](ctx, s.r, p.query(), "/v1/webhooks/%s/deliveries", id)
}

// AllDeliveries iterates over the deliveries of every page from p.Cursor
// on.
func (s *Webhooks) AllDeliveries(ctx context.Context, id string, p *CursorParams) iter.Seq2[*WebhookDelivery, error] {
	return cursorSeq(p, func(q *CursorParams) (*WebhookDeliveryPage, error) { return s.Deliveries(ctx, id, q) })
}

// Redeliver queues a delivery again (POST
// /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver).
func (s *Webhooks) Redeliver(ctx context.Context, id, deliveryID string) (*WebhookDelivery, error) {
	return send[WebhookDelivery](ctx, s.r, http.MethodPost, nil, false, "/v1/webhooks/%s/deliveries/%s/redeliver", id, deliveryID)
}
