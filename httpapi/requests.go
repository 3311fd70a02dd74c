package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// The request bodies of the REST surface, as the OpenAPI document defines
// them. Each is decoded strictly (see decode) and turned into the
// library's params, which have no JSON form of their own.

// requestBody is a request body as decoded, which params turns into the
// library's params P (or refuses).
type requestBody[P any] interface {
	params() (*P, error)
}

// decodeParams decodes the body of r strictly (see decode) into body and
// returns its params.
func decodeParams[P any](h *Handler, w http.ResponseWriter, r *http.Request, body requestBody[P]) (*P, error) {
	if err := h.decode(w, r, body); err != nil {
		return nil, err
	}
	return body.params()
}

// sendRequest is the body of POST /v1/messages. It takes the template
// fields only to refuse them with an error naming the template endpoint.
type sendRequest struct {
	Channel        string              `json:"channel"`
	To             string              `json:"to"`
	Type           string              `json:"type"`
	Text           string              `json:"text"`
	MediaURL       string              `json:"media_url"`
	Caption        string              `json:"caption"`
	Filename       string              `json:"filename"`
	MediaID        string              `json:"media_id"`
	Interactive    *interactiveJSON    `json:"interactive"`
	Location       *locationRequest    `json:"location"`
	Contacts       []sharedContactJSON `json:"contacts"`
	Reaction       *sentReactionJSON   `json:"reaction"`
	Context        *sentContextJSON    `json:"context"`
	IdempotencyKey string              `json:"idempotency_key"`
	SendAt         string              `json:"send_at"`
	TemplateName   string              `json:"template_name"`
	Language       string              `json:"language"`
	Components     []sendComponent     `json:"components"`
}

// params returns the send of q, or a validation error on the first
// template field q carries (template_name, language, components).
func (q *sendRequest) params() (*messaging.SendParams, error) {
	if q.TemplateName != "" || q.Language != "" || len(q.Components) > 0 {
		f := "template_name"
		if q.TemplateName == "" {
			f = "language"
			if q.Language == "" {
				f = "components"
			}
		}
		return nil, badRequest(f, "template fields are not accepted by POST /v1/messages; send templates with POST /v1/messages/templates")
	}
	p := &messaging.SendParams{
		Channel: q.Channel, To: q.To, Type: q.Type, Text: q.Text, MediaURL: q.MediaURL, MediaID: q.MediaID,
		Caption: q.Caption, Filename: q.Filename, IdempotencyKey: q.IdempotencyKey,
		Interactive: converted(q.Interactive, interactiveJSON.params),
		Contacts:    convertList(q.Contacts, sharedContactJSON.params),
	}
	var err error
	if p.SendAt, err = parseSendAt(q.SendAt); err != nil {
		return nil, err
	}
	if q.Location != nil {
		l, err := q.Location.params()
		if err != nil {
			return nil, err
		}
		p.Location = l
	}
	if q.Reaction != nil {
		p.Reaction = &messaging.ReactionParams{MessageID: q.Reaction.MessageID, Emoji: q.Reaction.Emoji}
	}
	if q.Context != nil {
		if q.Context.MessageID == "" {
			return nil, badRequest("context.message_id", "is required: the id of the message to quote")
		}
		p.ReplyTo = q.Context.MessageID
	}
	return p, nil
}

// sendTemplateRequest is the body of POST /v1/messages/templates.
type sendTemplateRequest struct {
	To             string          `json:"to"`
	TemplateName   string          `json:"template_name"`
	Language       string          `json:"language"`
	Components     []sendComponent `json:"components"`
	IdempotencyKey string          `json:"idempotency_key"`
	SendAt         string          `json:"send_at"`
	// Fallback is the SMS sent when WhatsApp cannot deliver the message
	// (see fallback.go).
	Fallback *fallbackRequest `json:"fallback"`
}

func (q *sendTemplateRequest) params() (*messaging.SendTemplateParams, error) {
	cs, err := sendComponents(q.Components)
	if err != nil {
		return nil, err
	}
	at, err := parseSendAt(q.SendAt)
	if err != nil {
		return nil, err
	}
	return &messaging.SendTemplateParams{
		To: q.To, TemplateName: q.TemplateName, Language: q.Language,
		Components: cs, IdempotencyKey: q.IdempotencyKey, SendAt: at, Fallback: q.Fallback.params(),
	}, nil
}

// parseSendAt returns the time of a send's send_at member: nil when it is
// absent or empty, else an RFC 3339 time with its offset (Z or +hh:mm), or
// a validation_error naming send_at. Its range is the library's to check.
func parseSendAt(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, badRequest("send_at", "must be an RFC 3339 time with an offset, for example 2026-03-01T09:00:00+03:00 (got %q)", s)
	}
	return &t, nil
}

// sendComponent is a component of a template send. Index is kept raw:
// the library's rule (messaging.ParseButtonIndex) reads it, so a number
// and Meta's string of digits ("0") are accepted here as in the library.
type sendComponent struct {
	Type       string          `json:"type"`
	SubType    string          `json:"sub_type"`
	Index      json.RawMessage `json:"index"`
	Parameters []sendParameter `json:"parameters"`
}

// sendParameter is a parameter of a component of a template send, as a
// request gives it and a template's send_example shows it.
type sendParameter struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Link       string `json:"link,omitempty"`
	Filename   string `json:"filename,omitempty"`
	CouponCode string `json:"coupon_code,omitempty"`
	Payload    string `json:"payload,omitempty"`
}

// sendComponents returns the library's form of cs; nil stays nil and empty
// lists stay empty. An index the library refuses is its validation error.
func sendComponents(cs []sendComponent) ([]messaging.SendComponent, error) {
	if cs == nil {
		return nil, nil
	}
	out := make([]messaging.SendComponent, len(cs))
	for i, c := range cs {
		idx, err := record.ParseButtonIndex(c.Index)
		if err != nil {
			return nil, err
		}
		out[i] = messaging.SendComponent{Type: c.Type, SubType: c.SubType, Index: idx}
		if c.Parameters != nil {
			out[i].Parameters = make([]messaging.SendParameter, len(c.Parameters))
		}
		for j, p := range c.Parameters {
			out[i].Parameters[j] = messaging.SendParameter(p)
		}
	}
	return out, nil
}

// contactCreateRequest is the body of POST /v1/contacts.
type contactCreateRequest struct {
	FirstName string   `json:"firstName"`
	LastName  string   `json:"lastName"`
	Phone     string   `json:"phone"`
	Email     string   `json:"email"`
	Company   string   `json:"company"`
	JobTitle  string   `json:"jobTitle"`
	Website   string   `json:"website"`
	Notes     string   `json:"notes"`
	Tags      []string `json:"tags"`
	Lifecycle string   `json:"lifecycle"`
}

func (q *contactCreateRequest) params() (*messaging.ContactCreateParams, error) {
	p := messaging.ContactCreateParams(*q)
	return &p, nil
}

// contactPatch is the body of PATCH /v1/contacts/{id}. A field that is
// absent is left unchanged; a string sets it; null or "" clears it (tags:
// null or [] clears). firstName cannot be cleared.
type contactPatch struct {
	p      messaging.ContactUpdateParams
	fields int
}

var patchFields = []string{"firstName", "lastName", "phone", "email", "company", "jobTitle", "website", "notes", "tags", "lifecycle"}

// UnmarshalJSON decodes a patch, keeping track of which fields are present.
func (c *contactPatch) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return badRequest("body", "must be a JSON object")
	}
	strs := map[string]**string{
		"firstName": &c.p.FirstName, "lastName": &c.p.LastName, "phone": &c.p.Phone, "email": &c.p.Email,
		"company": &c.p.Company, "jobTitle": &c.p.JobTitle, "website": &c.p.Website, "notes": &c.p.Notes,
		"lifecycle": &c.p.Lifecycle,
	}
	for k, v := range raw {
		c.fields++
		if k == "opted_out" {
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				return badRequest("opted_out", "must be a boolean (and cannot be changed through the contact)")
			}
			c.p.OptedOut = &b
			continue
		}
		if k == "tags" {
			tags := []string{}
			if string(v) != "null" {
				if err := json.Unmarshal(v, &tags); err != nil {
					return badRequest("tags", "must be an array of strings or null")
				}
				if tags == nil {
					tags = []string{}
				}
			}
			c.p.Tags = &tags
			continue
		}
		dst, ok := strs[k]
		if !ok {
			return badRequest(k, "unknown field; patchable fields: %s", strings.Join(patchFields, ", "))
		}
		s := ""
		if string(v) != "null" {
			if err := json.Unmarshal(v, &s); err != nil {
				return badRequest(k, "must be a string or null")
			}
		}
		*dst = &s
	}
	return nil
}

func (c *contactPatch) params() (*messaging.ContactUpdateParams, error) {
	if c.fields == 0 {
		return nil, badRequest("body", "must set at least one of %s", strings.Join(patchFields, ", "))
	}
	return &c.p, nil
}

// templateCreateRequest is the body of POST /v1/templates. It has no
// status: a template created through the API is a draft, submitted with
// POST /v1/templates/{id}/submit (a "status" member is refused as unknown).
type templateCreateRequest struct {
	Name       string                  `json:"name"`
	Category   string                  `json:"category"`
	Language   string                  `json:"language"`
	Components []templateComponentJSON `json:"components"`
}

func (q *templateCreateRequest) params() (*messaging.TemplateCreateParams, error) {
	return &messaging.TemplateCreateParams{Name: q.Name, Category: q.Category, Language: q.Language,
		Components: templateComponentsParams(q.Components), Status: record.TemplateDraft}, nil
}

// templatePatch is the body of PATCH /v1/templates/{id}: the fields of
// the draft to change; absent fields are left unchanged. null is refused,
// as every field of a template is required.
type templatePatch struct {
	Name       *string                  `json:"name"`
	Category   *string                  `json:"category"`
	Language   *string                  `json:"language"`
	Components *[]templateComponentJSON `json:"components"`
}

// UnmarshalJSON decodes a patch, refusing null members by name.
func (q *templatePatch) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return badRequest("body", "must be a JSON object")
	}
	for k, v := range raw {
		if string(v) == "null" {
			return badRequest(k, "cannot be cleared (null); every field of a template is required")
		}
	}
	type plain templatePatch
	_, err := decodeMembers(b, (*plain)(q), "body")
	return err
}

func (q *templatePatch) params() (*messaging.TemplatePatch, error) {
	p := &messaging.TemplatePatch{Name: q.Name, Category: q.Category, Language: q.Language}
	if q.Components != nil {
		cs := templateComponentsParams(*q.Components)
		p.Components = &cs
	}
	return p, nil
}

// channelPutType is the type of the body of PUT /v1/channels/{channel}: a
// struct of one string member per credential field of the service's
// channels (their specs' Account, Owner and Display names, in the order of
// the channels: for Meta's, phone_number_id, waba_id,
// display_phone_number, instagram_account_id and page_id) and
// access_token. It is built once per Handler, so that the strict decoder
// refuses unknown and mistyped members as it does in every body, whatever
// the channels.
func channelPutType(specs []messaging.ChannelSpec) reflect.Type {
	var names []string
	for _, spec := range specs {
		for _, f := range []messaging.ChannelField{spec.Account, spec.Owner, spec.Display} {
			if f.Name != "" && !slices.Contains(names, f.Name) {
				names = append(names, f.Name)
			}
		}
	}
	names = append(names, "access_token")
	fields := make([]reflect.StructField, len(names))
	for i, n := range names {
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(`json:"` + n + `"`)}
	}
	return reflect.StructOf(fields)
}

// channelCredentials reads a decoded body of channelPutType: its members
// by name (an empty one is absent) and its access token.
func channelCredentials(body reflect.Value) *messaging.ChannelCredentials {
	creds := &messaging.ChannelCredentials{Fields: map[string]string{}}
	t := body.Type()
	for i := range t.NumField() {
		name, v := t.Field(i).Tag.Get("json"), body.Field(i).String()
		switch {
		case name == "access_token":
			creds.AccessToken = v
		case v != "":
			creds.Fields[name] = v
		}
	}
	return creds
}
