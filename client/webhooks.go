package client

import (
	"context"
	"iter"
	"net/http"
)

// Webhooks manages the webhook endpoints of the workspace and their
// deliveries (scope manage:webhooks).
type Webhooks struct{ c *Client }

// List returns the workspace's webhook endpoints (GET /v1/webhooks).
func (s *Webhooks) List(ctx context.Context) ([]*Webhook, error) {
	out, err := get[struct {
		Data []*Webhook `json:"data"`
	}](ctx, s.c, "/v1/webhooks", nil)
	if err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Create creates a webhook endpoint (POST /v1/webhooks); its Secret, for
// VerifyWebhook, is shown this once.
func (s *Webhooks) Create(ctx context.Context, p *WebhookCreateParams) (*WebhookCreated, error) {
	return send[WebhookCreated](ctx, s.c, http.MethodPost, "/v1/webhooks", p, false)
}

// Get returns a webhook endpoint (GET /v1/webhooks/{id}).
func (s *Webhooks) Get(ctx context.Context, id string) (*Webhook, error) {
	path, err := pathf("/v1/webhooks/%s", id)
	if err != nil {
		return nil, err
	}
	return get[Webhook](ctx, s.c, path, nil)
}

// Update changes the fields p sets (PATCH /v1/webhooks/{id}); Enabled true
// enables a disabled endpoint again.
func (s *Webhooks) Update(ctx context.Context, id string, p *WebhookUpdateParams) (*Webhook, error) {
	path, err := pathf("/v1/webhooks/%s", id)
	if err != nil {
		return nil, err
	}
	return send[Webhook](ctx, s.c, http.MethodPatch, path, p, false)
}

// Delete deletes a webhook endpoint (DELETE /v1/webhooks/{id}) and returns
// it as it was.
func (s *Webhooks) Delete(ctx context.Context, id string) (*Webhook, error) {
	path, err := pathf("/v1/webhooks/%s", id)
	if err != nil {
		return nil, err
	}
	return send[Webhook](ctx, s.c, http.MethodDelete, path, nil, true)
}

// RotateSecret gives an endpoint a new secret (POST
// /v1/webhooks/{id}/rotate-secret); the previous one keeps signing beside
// it until PreviousSecretExpiresAt.
func (s *Webhooks) RotateSecret(ctx context.Context, id string) (*WebhookSecret, error) {
	path, err := pathf("/v1/webhooks/%s/rotate-secret", id)
	if err != nil {
		return nil, err
	}
	return send[WebhookSecret](ctx, s.c, http.MethodPost, path, nil, false)
}

// Test sends a webhook.test event to an endpoint now (POST
// /v1/webhooks/{id}/test) and returns the receiver's answer. The test is
// recorded in the endpoint's deliveries (Deliveries), marked Test.
func (s *Webhooks) Test(ctx context.Context, id string) (*WebhookTestResult, error) {
	path, err := pathf("/v1/webhooks/%s/test", id)
	if err != nil {
		return nil, err
	}
	return send[WebhookTestResult](ctx, s.c, http.MethodPost, path, nil, false)
}

// Deliveries returns one page of an endpoint's deliveries, newest first
// (GET /v1/webhooks/{id}/deliveries). p may be nil.
func (s *Webhooks) Deliveries(ctx context.Context, id string, p *CursorParams) (*WebhookDeliveryPage, error) {
	path, err := pathf("/v1/webhooks/%s/deliveries", id)
	if err != nil {
		return nil, err
	}
	return get[WebhookDeliveryPage](ctx, s.c, path, p.query())
}

// AllDeliveries iterates over the deliveries of every page from p.Cursor
// on.
func (s *Webhooks) AllDeliveries(ctx context.Context, id string, p *CursorParams) iter.Seq2[*WebhookDelivery, error] {
	return cursorSeq(p, func(q *CursorParams) ([]*WebhookDelivery, *string, error) {
		page, err := s.Deliveries(ctx, id, q)
		if err != nil {
			return nil, nil, err
		}
		return page.Data, page.NextCursor, nil
	})
}

// Redeliver queues a delivery again (POST
// /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver).
func (s *Webhooks) Redeliver(ctx context.Context, id, deliveryID string) (*WebhookDelivery, error) {
	path, err := pathf("/v1/webhooks/%s/deliveries/%s/redeliver", id, deliveryID)
	if err != nil {
		return nil, err
	}
	return send[WebhookDelivery](ctx, s.c, http.MethodPost, path, nil, false)
}
