package client

import (
	"context"
	"errors"
	"net/http"

	"github.com/ujumbe/messaging"
)

// Messages sends and reads the messages of the workspace.
type Messages struct{ c *Client }

// Send sends a standard message (POST /v1/messages) and returns it queued.
// When p has no IdempotencyKey the client gives the request one (a UUID,
// Options.NewIdempotencyKey), the same for all its retries, so a retried
// send never sends twice; p itself is not changed. Result.Replayed is true
// when the server answered with the result of an earlier request with the
// same key.
func (s *Messages) Send(ctx context.Context, p *messaging.SendParams) (*messaging.SendResult, error) {
	if p == nil {
		return nil, errors.New("client: Messages.Send needs params")
	}
	q := *p
	if q.IdempotencyKey == "" {
		q.IdempotencyKey = s.c.t.newKey()
	}
	return s.send(ctx, "/v1/messages", &q)
}

// SendTemplate sends a template message (POST /v1/messages/templates),
// with an idempotency key as Send does. A Template's SendExample is a
// ready-to-use p once its To is set.
func (s *Messages) SendTemplate(ctx context.Context, p *messaging.SendTemplateParams) (*messaging.SendResult, error) {
	if p == nil {
		return nil, errors.New("client: Messages.SendTemplate needs params")
	}
	q := *p
	if q.IdempotencyKey == "" {
		q.IdempotencyKey = s.c.t.newKey()
	}
	return s.send(ctx, "/v1/messages/templates", &q)
}

func (s *Messages) send(ctx context.Context, path string, body any) (*messaging.SendResult, error) {
	var out messaging.SendResult
	resp, err := s.c.call(ctx, http.MethodPost, path, nil, body, &out, true)
	if err != nil {
		return nil, err
	}
	out.Replayed = resp.header.Get("Idempotent-Replayed") == "true"
	return &out, nil
}

// Get returns a message of the workspace (GET /v1/messages/{id}); an id
// of another workspace is not_found.
func (s *Messages) Get(ctx context.Context, id string) (*Message, error) {
	path, err := pathf("/v1/messages/%s", id)
	if err != nil {
		return nil, err
	}
	return get[Message](ctx, s.c, path, nil)
}
