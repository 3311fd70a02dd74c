package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Client calls the workspace Messaging API (/v1) of a server with one API
// key. Its services group the routes by resource. A Client is safe for
// concurrent use.
type Client struct {
	t   *transport
	key string

	// Messages sends and reads messages.
	Messages *Messages
	// Conversations lists conversations and their messages.
	Conversations *Conversations
	// Templates lists, reads and manages templates.
	Templates *Templates
	// Contacts creates, lists, reads and updates contacts.
	Contacts *Contacts
	// Channels lists, connects and disconnects the workspace's channels.
	Channels *Channels
	// APIKeys lists, creates, reads and revokes the workspace's API keys.
	APIKeys *APIKeys
	// AuditEvents lists the workspace's management changes.
	AuditEvents *AuditEvents
	// Webhooks manages webhook endpoints and their deliveries.
	Webhooks *Webhooks
}

// New returns a Client of the Messaging API at baseURL (the server's root,
// for example "https://api.example.com"; the client adds /v1/...) with the
// API key apiKey, sent as X-API-Key. opts may be nil for the defaults.
func New(baseURL, apiKey string, opts *Options) (*Client, error) {
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("client: apiKey is required: an API key of the workspace (Settings -> Developers)")
	}
	t, err := newTransport(baseURL, opts)
	if err != nil {
		return nil, err
	}
	c := &Client{t: t, key: apiKey}
	c.Messages = &Messages{c: c}
	c.Conversations = &Conversations{c: c}
	c.Templates = &Templates{c: c}
	c.Contacts = &Contacts{c: c}
	c.Channels = &Channels{c: c}
	c.APIKeys = &APIKeys{c: c}
	c.AuditEvents = &AuditEvents{c: c}
	c.Webhooks = &Webhooks{c: c}
	return c, nil
}

// call makes a request of the Messaging API and decodes its answer into out
// (when out is not nil). GET, PUT and DELETE are retryable; a POST is when
// retryable is set (it carries an idempotency key).
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any, retryable bool) (*response, error) {
	resp, err := c.do(ctx, &request{method: method, path: path, query: query, body: body, retryable: retryable})
	if err != nil {
		return nil, err
	}
	if out != nil {
		if err := decodeJSON(resp, out); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// do makes req, a request of the Messaging API, with the key's header and
// the API's error envelope. GET, PUT and DELETE are retryable; another
// method is when req.retryable is set.
func (c *Client) do(ctx context.Context, req *request) (*response, error) {
	switch req.method {
	case http.MethodGet, http.MethodPut, http.MethodDelete:
		req.retryable = true
	}
	req.header, req.decodeError = http.Header{"X-Api-Key": {c.key}}, envelopeError
	return c.t.do(ctx, req)
}

// pathf formats a path whose arguments are path segments: each is escaped
// (an id "a/b" stays one segment). An empty segment is refused, as it
// would address another route.
func pathf(format string, segs ...string) (string, error) {
	args := make([]any, len(segs))
	for i, s := range segs {
		if s == "" {
			return "", errors.New("client: an id is required (got an empty string)")
		}
		args[i] = url.PathEscape(s)
	}
	return fmt.Sprintf(format, args...), nil
}

// get is call of GET path into a new T.
func get[T any](ctx context.Context, c *Client, path string, query url.Values) (*T, error) {
	var out T
	if _, err := c.call(ctx, http.MethodGet, path, query, nil, &out, true); err != nil {
		return nil, err
	}
	return &out, nil
}

// send is call of method path with body into a new T.
func send[T any](ctx context.Context, c *Client, method, path string, body any, retryable bool) (*T, error) {
	var out T
	if _, err := c.call(ctx, method, path, nil, body, &out, retryable); err != nil {
		return nil, err
	}
	return &out, nil
}
