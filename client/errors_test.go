package client_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/httpapi"
)

// dropKey is a RoundTripper that sends requests without their API key.
type dropKey struct{}

func (dropKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del("X-API-Key")
	return http.DefaultTransport.RoundTrip(r)
}

// TestErrorCodes: every code of the error table the server answers is
// decoded into a *client.Error with its status, code, message, field,
// request id and correlation id, and errors.Is matches it with an *Error
// of its code, never another code nor the library's sentinel of the same
// meaning (the client does not wrap the server library's errors).
func TestErrorCodes(t *testing.T) {
	e := setup(t, func(o *httpapi.Options) {
		o.DisableRateLimits = false
		o.RateLimits = map[string]int{"GET /v1/api-keys": 1}
		o.MaxBodyBytes = 4 << 10
	})
	ctx := context.Background()
	noRetry := &client.Options{MaxAttempts: 1}
	a := e.client(t, e.A.Key, noRetry)
	// An opted-out recipient: A's contact replied STOP.
	if _, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: e.A.ID, Channel: "whatsapp", From: "+254733000999",
		ProviderMessageID: "wamid.stop", Type: "text", Text: "STOP"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code   client.Code
		status int
		field  string
		// sentinel is the library's error of the same meaning, which
		// must not match.
		sentinel error
		call     func() error
	}{
		{client.CodeUnauthorized, 401, "", nil, func() error {
			c, err := client.New(e.srv.URL, e.A.Key, &client.Options{HTTPClient: &http.Client{Transport: dropKey{}}})
			if err != nil {
				return err
			}
			_, err = c.Contacts.List(ctx, nil)
			return err
		}},
		{client.CodeInvalidAPIKey, 401, "", nil, func() error {
			_, err := e.client(t, "mk_notakey_0000000000000000000000", nil).Contacts.List(ctx, nil)
			return err
		}},
		{client.CodeForbidden, 403, "", nil, func() error {
			_, err := e.client(t, e.A.Only[record.ScopeReadMessages], nil).Contacts.List(ctx, nil)
			return err
		}},
		{client.CodeNotFound, 404, "", messaging.ErrNotFound, func() error {
			_, err := a.Contacts.Get(ctx, "ct_nope")
			return err
		}},
		{client.CodeConflict, 409, "phone", messaging.ErrConflict, func() error {
			_, err := a.Contacts.Create(ctx, &client.ContactCreateParams{FirstName: "Twin", Phone: e.A.Contact.Phone})
			return err
		}},
		{client.CodeValidation, 400, "to", nil, func() error {
			_, err := a.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "0712", Type: "text", Text: "hi"})
			return err
		}},
		{client.CodeChannelUnavailable, 422, "channel", nil, func() error {
			if _, err := a.Channels.Delete(ctx, "instagram"); err != nil {
				return err
			}
			_, err := a.Messages.Send(ctx, &client.SendParams{Channel: "instagram", To: "+254712345678", Type: "text", Text: "hi"})
			return err
		}},
		{client.CodeRecipientOptedOut, 422, "to", nil, func() error {
			_, err := a.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "+254733000999", Type: "text", Text: "hi"})
			return err
		}},
		{client.CodeOutsideWindow, 422, "to", nil, func() error {
			// B refuses free-form sends outside the window; its contact
			// never wrote.
			reject := record.OutsideWindowReject
			if _, err := e.svc.SetWorkspaceSettings(ctx, e.B.ID, &messaging.WorkspaceSettings{OutsideWindow: &reject}); err != nil {
				return err
			}
			_, err := e.client(t, e.B.Key, noRetry).Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: e.B.Contact.Phone, Type: "text", Text: "hi"})
			return err
		}},
		{client.CodeTemplateNotFound, 404, "template_name", nil, func() error {
			_, err := a.Messages.SendTemplate(ctx, &client.SendTemplateParams{To: "+254712345678", TemplateName: "no_such", Language: "en"})
			return err
		}},
		{client.CodeRateLimitExceeded, 429, "", nil, func() error {
			if _, err := a.APIKeys.List(ctx); err != nil {
				return err
			}
			_, err := a.APIKeys.List(ctx)
			return err
		}},
		{client.CodeInternal, 500, "", nil, func() error {
			boom := errors.New("disk on fire")
			e.store.getErr.Store(&boom)
			defer e.store.getErr.Store(nil)
			_, err := e.client(t, e.B.Key, noRetry).Messages.Get(ctx, e.B.Message.MessageID)
			return err
		}},
		{client.CodeServiceUnavailable, 503, "", messaging.ErrUnavailable, func() error {
			down := error(messaging.ErrUnavailable)
			e.store.getErr.Store(&down)
			defer e.store.getErr.Store(nil)
			_, err := e.client(t, e.B.Key, noRetry).Messages.Get(ctx, e.B.Message.MessageID)
			return err
		}},
		{client.CodePayloadTooLarge, 413, "", nil, func() error {
			_, err := a.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: strings.Repeat("x", 8<<10)})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			err := tt.call()
			ce := apiError(t, err)
			if ce.StatusCode != tt.status || ce.Code != tt.code || ce.Field != tt.field {
				t.Fatalf("%v: status %d code %s field %q, want %d %s %q", err, ce.StatusCode, ce.Code, ce.Field, tt.status, tt.code, tt.field)
			}
			if !errors.Is(err, &client.Error{Code: tt.code}) {
				t.Errorf("errors.Is(err, code %s) is false", tt.code)
			}
			if errors.Is(err, &client.Error{Code: "some_other_code"}) {
				t.Errorf("errors.Is matches another code")
			}
			if tt.sentinel != nil && errors.Is(err, tt.sentinel) {
				t.Errorf("errors.Is(err, %v): the client's errors do not wrap the library's", tt.sentinel)
			}
			var me *client.Error
			if !errors.As(err, &me) || me.Code != tt.code || me.Message == "" {
				t.Errorf("errors.As *client.Error: %+v", me)
			}
			if ce.CorrelationID == "" || ce.RequestID != ce.CorrelationID || !strings.Contains(err.Error(), ce.RequestID) {
				t.Errorf("request_id %q, X-Correlation-ID %q in %q", ce.RequestID, ce.CorrelationID, err.Error())
			}
			if got := ce.Temporary(); got != (tt.status == 429 || tt.status >= 500) {
				t.Errorf("Temporary() = %v", got)
			}
			if tt.status == 429 || tt.status == 503 {
				if ce.RetryAfter < time.Second {
					t.Errorf("RetryAfter %v, want the header's seconds", ce.RetryAfter)
				}
			}
		})
	}
}

// TestBadInput: the client refuses what it cannot send with an error
// naming the argument, before any request.
func TestBadInput(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	if _, err := client.New("ftp://example.com", "k", nil); err == nil || !strings.Contains(err.Error(), "baseURL") {
		t.Errorf("ftp base URL: %v", err)
	}
	if _, err := client.New("api.example.com", "k", nil); err == nil {
		t.Errorf("a base URL without scheme: no error")
	}
	if _, err := client.New(e.srv.URL, " ", nil); err == nil || !strings.Contains(err.Error(), "apiKey") {
		t.Errorf("blank key: %v", err)
	}
	c := e.client(t, e.A.Key, nil)
	if _, err := c.Contacts.Get(ctx, ""); err == nil || !strings.Contains(err.Error(), "id is required") {
		t.Errorf("empty id: %v", err)
	}
	// An id with a slash, a '?' or a '%' stays one path segment: the
	// contact is not found, by its whole id.
	for _, id := range []string{"a/b", "x?y=1", "%2e%2e"} {
		_, err := c.Contacts.Get(ctx, id)
		if !errors.Is(err, &client.Error{Code: client.CodeNotFound}) || !strings.Contains(err.Error(), strconv.Quote(id)) {
			t.Errorf("id %q: %v, want the contact %q not found", id, err, id)
		}
	}
	if _, err := c.Messages.Send(ctx, nil); err == nil {
		t.Errorf("nil params: no error")
	}
	// A patch setting nothing is the server's validation error.
	_, err := c.Contacts.Update(ctx, e.A.Contact.ID, &client.ContactUpdateParams{})
	if ce := apiError(t, err); ce.Code != client.CodeValidation || ce.Field != "body" {
		t.Errorf("empty patch: %v (field %q)", err, ce.Field)
	}
}
