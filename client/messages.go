package client

import (
	"context"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// SendParams is the body of POST /v1/messages (schema SendRequest): a
// text, image, video, document or audio message to To on Channel.
type SendParams struct {
	// Channel is whatsapp, instagram or messenger.
	Channel string `json:"channel"`
	// To is the recipient: an E.164 number on WhatsApp, the channel's
	// scoped user id on Instagram and Messenger.
	To string `json:"to"`
	// Type is text, image, video, document, audio, sticker, interactive,
	// location, contacts or reaction; each takes its own members below.
	Type string `json:"type"`
	// Text is the text of a text message.
	Text string `json:"text,omitempty"`
	// MediaURL is the absolute http or https URL of a media message's
	// media; Caption its caption and Filename a document's file name.
	MediaURL string `json:"media_url,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
	// MediaID sends an uploaded file (Client.Media) instead of MediaURL.
	MediaID string `json:"media_id,omitempty"`
	// Interactive is the message of type interactive.
	Interactive *Interactive `json:"interactive,omitempty"`
	// Location is the location of type location.
	Location *SendLocation `json:"location,omitempty"`
	// Contacts are the cards of type contacts (FormattedName and a phone
	// each).
	Contacts []SharedContact `json:"contacts,omitempty"`
	// Reaction is the reaction of type reaction.
	Reaction *SentReaction `json:"reaction,omitempty"`
	// Context quotes a message of the same conversation (any type but
	// reaction).
	Context *SentContext `json:"context,omitempty"`
	// IdempotencyKey makes a retry safe; Messages.Send sets one when it is
	// empty.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// SendAt, when set, schedules the message: it is queued and not
	// handed over before then (at most 35 days ahead of the server's
	// clock, at most a minute past; otherwise validation_error naming
	// send_at). Messages.Cancel cancels it until then.
	SendAt *time.Time `json:"send_at,omitempty"`
}

// SendTemplateParams is the body of POST /v1/messages/templates (schema
// SendTemplateRequest): an approved template sent on whatsapp.
type SendTemplateParams struct {
	To           string `json:"to"`
	TemplateName string `json:"template_name"`
	// Language must equal the template's language exactly ("en" and
	// "en_US" differ). Empty means "en".
	Language string `json:"language"`
	// Components carry the values of the template's variables, its media
	// header's link and its dynamic buttons' parameters.
	Components []SendComponent `json:"components,omitempty"`
	// IdempotencyKey makes a retry safe; Messages.SendTemplate sets one
	// when it is empty.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// SendAt, when set, schedules the template send, as SendParams.SendAt
	// does.
	SendAt *time.Time `json:"send_at,omitempty"`
	// Fallback, when set, sends an SMS when WhatsApp cannot deliver the
	// template (see SMSFallback).
	Fallback *Fallback `json:"fallback,omitempty"`
}

// SendComponent is a component of a template send (schema
// SendComponent): Type header, body or button.
type SendComponent struct {
	Type string `json:"type"`
	// SubType is a button component's kind: url, quick_reply or
	// copy_code.
	SubType string `json:"sub_type,omitempty"`
	// Index is a button component's zero-based position among the
	// template's buttons.
	Index      *int            `json:"index,omitempty"`
	Parameters []SendParameter `json:"parameters"`
}

// SendParameter is a parameter of a SendComponent (schema SendParameter):
// Type text carries Text; image, video and document carry Link (and a
// document Filename); coupon_code carries CouponCode; payload carries
// Payload.
type SendParameter struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Link       string `json:"link,omitempty"`
	Filename   string `json:"filename,omitempty"`
	CouponCode string `json:"coupon_code,omitempty"`
	Payload    string `json:"payload,omitempty"`
}

// SendResult is the answer of a send (schema SendResponse): the message,
// queued.
type SendResult struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Status         string `json:"status"`
	Channel        string `json:"channel"`
	To             string `json:"to"`
	// Replayed is true when the server answered with the result of an
	// earlier request with the same idempotency key (its
	// Idempotent-Replayed header); no new message was created.
	Replayed bool `json:"-"`
}

func (r *SendResult) setReplayed(v bool) { r.Replayed = v }

// Messages sends and reads the messages of the workspace.
type Messages struct{ r *restClient }

// Send sends a standard message (POST /v1/messages) and returns it queued.
// When p has no IdempotencyKey the client gives the request one (a UUID,
// Options.NewIdempotencyKey), the same for all its retries, so a retried
// send never sends twice; p itself is not changed. Result.Replayed is true
// when the server answered with the result of an earlier request with the
// same key.
func (s *Messages) Send(ctx context.Context, p *SendParams) (*SendResult, error) {
	return sendMessage(ctx, s.r, "Send", "/v1/messages", p, func(q *SendParams) *string { return &q.IdempotencyKey })
}

// SendTemplate sends a template message (POST /v1/messages/templates),
// with an idempotency key as Send does. A Template's SendExample is a
// ready-to-use p once its To is set.
func (s *Messages) SendTemplate(ctx context.Context, p *SendTemplateParams) (*SendResult, error) {
	return sendMessage(ctx, s.r, "SendTemplate", "/v1/messages/templates", p, func(q *SendTemplateParams) *string { return &q.IdempotencyKey })
}

// sendMessage posts a copy of p to path, its idempotency key (the string
// key points to) set when empty, retrying it as a POST with a key. name
// is the method's, for the error of a nil p.
func sendMessage[P any](ctx context.Context, r *restClient, name, path string, p *P, key func(*P) *string) (*SendResult, error) {
	if p == nil {
		return nil, fmt.Errorf("client: Messages.%s needs params", name)
	}
	q := *p
	k := key(&q)
	*k = r.t.idempotencyKey(*k)
	return send[SendResult](ctx, r, http.MethodPost, &q, true, path)
}

// Cancel cancels a queued message that is not being handed over yet,
// typically a scheduled one (POST /v1/messages/{id}/cancel), and returns
// it with status canceled. A message that is sent, delivered, read,
// failed, already canceled or being handed over is a conflict (an *Error
// with Field status); an id of another workspace is not_found. The
// request is retried like other idempotent calls: when a first attempt
// canceled the message but its answer was lost, the retry answers
// conflict, and Get shows the message canceled.
func (s *Messages) Cancel(ctx context.Context, id string) (*Message, error) {
	return send[Message](ctx, s.r, http.MethodPost, &struct{}{}, true, "/v1/messages/%s/cancel", id)
}

// Get returns a message of the workspace (GET /v1/messages/{id}); an id
// of another workspace is not_found.
func (s *Messages) Get(ctx context.Context, id string) (*Message, error) {
	return get[Message](ctx, s.r, nil, "/v1/messages/%s", id)
}

// MessageListParams filter and page GET /v1/messages, newest first. Empty
// fields do not filter: Direction (inbound, outbound), Status, Channel, To,
// ConversationID, and CreatedAfter and CreatedBefore (zero: no bound).
// Cursor is the NextCursor of the previous page; Limit 0 means the
// server's default.
type MessageListParams struct {
	Direction      string
	Status         string
	Channel        string
	To             string
	ConversationID string
	CreatedAfter   time.Time
	CreatedBefore  time.Time
	Cursor         string
	Limit          int
}

func (p *MessageListParams) query() url.Values {
	if p == nil {
		return url.Values{}
	}
	q := (&CursorParams{Cursor: p.Cursor, Limit: p.Limit}).query()
	for k, v := range map[string]string{"direction": p.Direction, "status": p.Status, "channel": p.Channel, "to": p.To, "conversation_id": p.ConversationID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !p.CreatedAfter.IsZero() {
		q.Set("created_after", p.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !p.CreatedBefore.IsZero() {
		q.Set("created_before", p.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	return q
}

// List returns one page of the workspace's messages, newest first (GET
// /v1/messages). p may be nil.
func (s *Messages) List(ctx context.Context, p *MessageListParams) (*MessagePage, error) {
	return get[MessagePage](ctx, s.r, p.query(), "/v1/messages")
}

// All iterates over the messages of every page from p.Cursor on (p may be
// nil), fetching a page when the previous one is used up. An error ends
// the iteration after it is yielded.
func (s *Messages) All(ctx context.Context, p *MessageListParams) iter.Seq2[*Message, error] {
	return messageSeq(p, func(q *MessageListParams) (*MessagePage, error) { return s.List(ctx, q) })
}

// Media is the media of an inbound message as Messages.Media streams it.
// The caller reads Body and must close it.
type Media struct {
	// Body is the media's bytes, read from the server as they come; a
	// read fails when the server cuts the stream off (media that grew past
	// its limit) or the call's context is done.
	Body io.ReadCloser
	// ContentType is the provider's content type, else the one the
	// message declared.
	ContentType string
	// ContentLength is the size in bytes; -1 when the server did not say.
	ContentLength int64
	// Filename is the sender's file name of a document (from
	// Content-Disposition); empty when there is none.
	Filename string
}

// Media streams the media (image, video, audio, document or sticker) of
// an inbound message of the workspace (GET /v1/messages/{id}/media); an
// id of another workspace, or of a message without media, is not_found,
// and media over the server's limit is payload_too_large (413). The call
// is retried per Options until an answer starts, never once its body is
// being read: a failed read is the caller's to retry. The body is tied to
// ctx: cancelling it aborts the read.
func (s *Messages) Media(ctx context.Context, id string) (*Media, error) {
	path, err := pathf("/v1/messages/%s/media", id)
	if err != nil {
		return nil, err
	}
	resp, err := s.r.do(ctx, &request{method: http.MethodGet, path: path, stream: true, accept: "*/*"})
	if err != nil {
		return nil, err
	}
	m := &Media{Body: resp.stream, ContentType: resp.header.Get("Content-Type"), ContentLength: -1}
	if n, err := strconv.ParseInt(resp.header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		m.ContentLength = n
	}
	if _, params, err := mime.ParseMediaType(resp.header.Get("Content-Disposition")); err == nil {
		m.Filename = params["filename"]
	}
	return m, nil
}
