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
	// Media uploads files to send by id and reads uploads.
	Media *MediaUploads
}

// New returns a Client of the Messaging API at baseURL (the server's root,
// for example "https://api.example.com"; the client adds /v1/...) with the
// API key apiKey, sent as X-API-Key. opts may be nil for the defaults.
func New(baseURL, apiKey string, opts *Options) (*Client, error) {
	r, err := newRestClient(baseURL, opts, apiKey, "apiKey is required: an API key of the workspace (Settings -> Developers)",
		http.Header{"X-Api-Key": {apiKey}})
	if err != nil {
		return nil, err
	}
	return &Client{
		Messages: &Messages{r}, Conversations: &Conversations{r}, Templates: &Templates{r}, Contacts: &Contacts{r},
		Channels: &Channels{r}, APIKeys: &APIKeys{r}, AuditEvents: &AuditEvents{r}, Webhooks: &Webhooks{r}, Media: &MediaUploads{r},
	}, nil
}

// restClient is the request plumbing of the JSON routes, the workspace API
// (/v1) and the operator routes (/admin/v1): the transport, the header
// carrying the credential, and the error envelope.
type restClient struct {
	t    *transport
	auth http.Header
}

// newRestClient returns the plumbing of a client whose requests carry the
// headers auth, which hold secret. A blank secret is refused with the
// error "client: " + required.
func newRestClient(baseURL string, opts *Options, secret, required string, auth http.Header) (*restClient, error) {
	if strings.TrimSpace(secret) == "" {
		return nil, errors.New("client: " + required)
	}
	t, err := newTransport(baseURL, opts)
	if err != nil {
		return nil, err
	}
	return &restClient{t: t, auth: auth}, nil
}

// call makes a request and decodes its answer into out (when out is not
// nil); see do for which requests are retried.
func (r *restClient) call(ctx context.Context, method, path string, query url.Values, body, out any, retryable bool) (*response, error) {
	resp, err := r.do(ctx, &request{method: method, path: path, query: query, body: body, retryable: retryable})
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

// do makes req with the credential's header and the API's error envelope.
// GET, PUT and DELETE are retryable; another method is when req.retryable
// is set: the caller says repeating it is safe (a POST with an
// idempotency key, a PATCH setting what it names, a POST whose repeat
// changes nothing).
func (r *restClient) do(ctx context.Context, req *request) (*response, error) {
	switch req.method {
	case http.MethodGet, http.MethodPut, http.MethodDelete:
		req.retryable = true
	}
	req.header, req.decodeError = r.auth, envelopeError
	return r.t.do(ctx, req)
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

// get is GET of the path format with segs (see pathf) and query, decoded
// into a new T.
func get[T any](ctx context.Context, r *restClient, query url.Values, format string, segs ...string) (*T, error) {
	return callf[T](ctx, r, http.MethodGet, query, nil, false, format, segs...)
}

// send is a request of method with body to the path format with segs
// (see pathf), decoded into a new T; retryable as for restClient.do.
func send[T any](ctx context.Context, r *restClient, method string, body any, retryable bool, format string, segs ...string) (*T, error) {
	return callf[T](ctx, r, method, nil, body, retryable, format, segs...)
}

// sendParams is send of the params p, which the method name cannot do
// without: a nil p is an error naming it.
func sendParams[T, P any](ctx context.Context, r *restClient, name, method string, p *P, retryable bool, format string, segs ...string) (*T, error) {
	if p == nil {
		return nil, fmt.Errorf("client: %s needs params", name)
	}
	return send[T](ctx, r, method, p, retryable, format, segs...)
}

// callf is restClient.call of the path format with segs (see pathf) into a
// new T.
func callf[T any](ctx context.Context, r *restClient, method string, query url.Values, body any, retryable bool, format string, segs ...string) (*T, error) {
	path, err := pathf(format, segs...)
	if err != nil {
		return nil, err
	}
	var out T
	if _, err := r.call(ctx, method, path, query, body, &out, retryable); err != nil {
		return nil, err
	}
	return &out, nil
}

// getArray is get of an answer that is a JSON array.
func getArray[T any](ctx context.Context, r *restClient, query url.Values, path string) ([]T, error) {
	out, err := get[[]T](ctx, r, query, path)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// getData is get of an answer {"data": [...]} listing every record of a
// kind at once.
func getData[T any](ctx context.Context, r *restClient, path string) ([]T, error) {
	out, err := get[struct {
		Data []T `json:"data"`
	}](ctx, r, nil, path)
	if err != nil {
		return nil, err
	}
	return out.Data, nil
}
