package record

import (
	"bytes"
	"encoding/json"
	"time"
)

// SendTemplateParams are the fields of a template send.
type SendTemplateParams struct {
	To           string `json:"to"`
	TemplateName string `json:"template_name"`
	// Language must equal the template's language exactly ("en" and
	// "en_US" differ). Empty means "en".
	Language       string          `json:"language"`
	Components     []SendComponent `json:"components,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	// SendAt, when set, schedules the send: the message is stored queued
	// and not handed over before then. It must be at most
	// MaxSendAhead after the service's clock and not before it by more
	// than SendAtTolerance.
	SendAt *time.Time `json:"send_at,omitempty"`
	// Fallback, when set, sends an SMS when the WhatsApp message fails as
	// undeliverable or is not delivered in time (see SMSFallbackParams).
	Fallback *FallbackParams `json:"fallback,omitempty"`
}

// FallbackParams are the fallbacks of a template send.
type FallbackParams struct {
	// SMS is the SMS fallback.
	SMS *SMSFallbackParams `json:"sms,omitempty"`
}

// SMSFallbackParams name the SMS a template send falls back to.
type SMSFallbackParams struct {
	// Text is the SMS's text: not blank, within the SMS service's limit
	// of parts.
	Text string `json:"text"`
	// PartnerID is an SMS account linked to the workspace.
	PartnerID string `json:"partner_id"`
	// Shortcode is an approved sender id of the account.
	Shortcode string `json:"shortcode"`
	// After is how long the WhatsApp message has to be delivered before
	// the SMS goes out, in seconds; 0 means the service's default
	// (messaging.Options.SMSFallbackAfter).
	After int `json:"after,omitempty"`
}

// SendComponent is a component of a template send: type header, body or
// button. A button component has SubType url, quick_reply or copy_code and
// the zero-based Index of the template's button.
type SendComponent struct {
	Type       string          `json:"type"`
	SubType    string          `json:"sub_type,omitempty"`
	Index      *int            `json:"index,omitempty"`
	Parameters []SendParameter `json:"parameters"`
}

// SendParameter is a parameter of a send component. Type text carries Text;
// image, video and document carry Link (and Filename for a document);
// coupon_code carries CouponCode; payload carries Payload.
type SendParameter struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Link       string `json:"link,omitempty"`
	Filename   string `json:"filename,omitempty"`
	CouponCode string `json:"coupon_code,omitempty"`
	Payload    string `json:"payload,omitempty"`
}

// UnmarshalJSON decodes a send component, accepting a button's index as a
// number or, as Meta's documentation writes it, a string of digits
// ("index": "0"). Unknown fields are refused.
func (c *SendComponent) UnmarshalJSON(b []byte) error {
	type plain SendComponent
	var raw struct {
		plain
		Index json.RawMessage `json:"index,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	*c = SendComponent(raw.plain)
	n, err := ParseButtonIndex(raw.Index)
	if err != nil {
		return err
	}
	c.Index = n
	return nil
}

// ParseButtonIndex returns the button index that the raw JSON value of a
// send component's "index" member holds: a number or, as Meta's
// documentation writes it, a string of digits ("0"). An absent or null
// value is nil; anything else is a validation_error naming
// components.index. It is the one rule for the member, which
// SendComponent's UnmarshalJSON and the REST surface's decoder both apply;
// the range (0 to 9) is checked with the rest of the components at send.
func ParseButtonIndex(raw json.RawMessage) (*int, error) {
	idx := bytes.TrimSpace(raw)
	if len(idx) == 0 || string(idx) == "null" {
		return nil, nil
	}
	if idx[0] == '"' {
		var s string
		if err := json.Unmarshal(idx, &s); err != nil || !allDigits(s, 2) {
			return nil, validationErrorAt(FieldPath("components").Member("index"), "must be a number or a string of digits (got %s)", idx)
		}
		idx = []byte(s)
	}
	var n int
	if err := json.Unmarshal(idx, &n); err != nil {
		return nil, validationErrorAt(FieldPath("components").Member("index"), "must be a number or a string of digits (got %s)", idx)
	}
	return &n, nil
}
