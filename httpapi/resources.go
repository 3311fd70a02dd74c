package httpapi

import (
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// timestamp marshals with messaging.FormatTime (RFC 3339 UTC, millisecond
// precision, Z), the format of the webhook payloads too.
type timestamp time.Time

// MarshalJSON implements json.Marshaler.
func (t timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + record.FormatTime(time.Time(t)) + `"`), nil
}

// messageJSON is the status form of a message (GET /v1/messages/{id}).
type messageJSON struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Channel        string `json:"channel"`
	Direction      string `json:"direction"`
	// From is the sender of an inbound message (messaging.Message.From);
	// outbound messages have none.
	From          string `json:"from,omitempty"`
	Status        string `json:"status"`
	FailureReason string `json:"failure_reason,omitempty"`
	Type          string `json:"type"`
	// Text is the text of an inbound message (a text, or the title of a
	// reply); outbound messages keep the status form.
	Text string `json:"text,omitempty"`
	// contentJSON is the content of an inbound message (media,
	// location, contacts, interactive, reaction, context,
	// unsupported_type) or the rich content of an outbound one (media_id,
	// location, contacts, interactive, reaction, context), its members
	// inlined; nil when the message carries none.
	*contentJSON
	// ReadAt is, on inbound messages only, when the message was marked
	// read (POST /v1/messages/{id}/read): null until then.
	ReadAt *readAtJSON `json:"read_at,omitempty"`
	// WindowExpiresAt is, on inbound messages, the end of the
	// customer-service window the message opened.
	WindowExpiresAt *timestamp `json:"window_expires_at,omitempty"`
	// SendAt is, on a scheduled outbound message, when it is to be
	// handed over (the send's send_at).
	SendAt *timestamp `json:"send_at,omitempty"`
	// Fallback is, on a template send with one, its SMS fallback.
	Fallback  *fallbackJSON `json:"fallback,omitempty"`
	CreatedAt timestamp     `json:"created_at"`
	UpdatedAt timestamp     `json:"updated_at"`
}

func messageView(m *messaging.Message) messageJSON {
	v := messageJSON{
		MessageID: m.ID, ConversationID: m.ConversationID, Channel: m.Channel, Direction: m.Direction,
		Status: m.Status, FailureReason: m.FailureReason, Type: m.Type,
		CreatedAt: timestamp(m.CreatedAt), UpdatedAt: timestamp(m.UpdatedAt),
	}
	if m.Direction == record.DirectionInbound {
		v.From, v.Text, v.contentJSON = m.From(), m.Text, inboundContentView(m.Content)
		v.WindowExpiresAt = optTimestamp(m.WindowExpiresAt())
		v.ReadAt = &readAtJSON{at: m.ReadAt}
	} else {
		v.contentJSON = outboundContentView(m.Outbound)
		if m.SendAt != nil {
			v.SendAt = optTimestamp(*m.SendAt)
		}
		v.Fallback = fallbackView(m.Fallback)
	}
	return v
}

// contactListItem is the item shape of GET /v1/contacts.
type contactListItem struct {
	ID        string    `json:"id"`
	FirstName string    `json:"firstName"`
	LastName  string    `json:"lastName"`
	FullName  string    `json:"fullName"`
	Phone     string    `json:"phone"`
	Email     string    `json:"email"`
	Company   string    `json:"company"`
	JobTitle  string    `json:"jobTitle"`
	Source    string    `json:"source"`
	Tags      []string  `json:"tags"`
	Lifecycle string    `json:"lifecycle"`
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
}

// contactJSON is the full contact of POST, GET and PATCH on contacts.
type contactJSON struct {
	contactListItem
	Website string `json:"website"`
	Notes   string `json:"notes"`
	// OptedOut maps each channel the contact's phone opted out of to
	// when it did.
	OptedOut map[string]timestamp `json:"opted_out"`
}

func contactItemView(c *messaging.Contact) contactListItem {
	tags := c.Tags
	if tags == nil {
		tags = []string{}
	}
	return contactListItem{
		ID: c.ID, FirstName: c.FirstName, LastName: c.LastName, FullName: c.FullName, Phone: c.Phone,
		Email: c.Email, Company: c.Company, JobTitle: c.JobTitle, Source: c.Source, Tags: tags,
		Lifecycle: c.Lifecycle, CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
}

func contactView(c *messaging.Contact) contactJSON {
	opted := make(map[string]timestamp, len(c.OptedOut))
	for ch, at := range c.OptedOut {
		opted[ch] = timestamp(at)
	}
	return contactJSON{contactListItem: contactItemView(c), Website: c.Website, Notes: c.Notes, OptedOut: opted}
}

// contactReceiptJSON is what PATCH /v1/contacts/{id} answers a key that
// may write contacts but not read them: which contact changed and when,
// none of its fields.
type contactReceiptJSON struct {
	ID        string    `json:"id"`
	UpdatedAt timestamp `json:"updatedAt"`
}

// patchedContactView is the answer to a PATCH of c by the key p: the full
// contact when p may read contacts, else only a receipt, so that a
// write-only key never reads through a write what GET refuses it.
func patchedContactView(p *messaging.Principal, c *messaging.Contact) any {
	if p.HasScope(record.ScopeReadContacts) {
		return contactView(c)
	}
	return contactReceiptJSON{ID: c.ID, UpdatedAt: timestamp(c.UpdatedAt)}
}

type contactPageJSON struct {
	Items      []contactListItem `json:"items"`
	Total      int               `json:"total"`
	Page       int               `json:"page"`
	Limit      int               `json:"limit"`
	TotalPages int               `json:"totalPages"`
}

// templateJSON is a template as listed and read.
type templateJSON struct {
	ID          string                  `json:"id"`
	Name        string                  `json:"name"`
	Category    string                  `json:"category"`
	Language    string                  `json:"language"`
	Status      string                  `json:"status"`
	Components  []templateComponentJSON `json:"components"`
	SendExample *sendTemplateJSON       `json:"send_example"`
	// StatusReason, Quality and ProviderTemplateID extend the spec: why
	// a template was rejected, paused or disabled, the provider's quality
	// rating, and the provider's id.
	StatusReason       string    `json:"status_reason,omitempty"`
	Quality            string    `json:"quality,omitempty"`
	ProviderTemplateID string    `json:"provider_template_id,omitempty"`
	CreatedAt          timestamp `json:"created_at"`
	UpdatedAt          timestamp `json:"updated_at"`
}

func templateView(t *messaging.Template) templateJSON {
	comps := templateComponentsView(t.Components)
	if comps == nil {
		comps = []templateComponentJSON{}
	}
	return templateJSON{
		ID: t.ID, Name: t.Name, Category: t.Category, Language: t.Language, Status: t.Status,
		Components: comps, SendExample: sendExampleView(t.SendExample),
		StatusReason: t.StatusReason, Quality: t.Quality, ProviderTemplateID: t.ProviderTemplateID,
		CreatedAt: timestamp(t.CreatedAt), UpdatedAt: timestamp(t.UpdatedAt),
	}
}

// deletedJSON is the answer to the deletion of a record.
type deletedJSON struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// channelJSON is a channel of the workspace (GET, PUT and DELETE on
// /v1/channels): absent values are null. It never holds the access token,
// only its last 4 characters.
type channelJSON struct {
	Channel        string     `json:"channel"`
	Status         string     `json:"status"`
	SenderID       *string    `json:"sender_id"`
	Display        *string    `json:"display"`
	CredentialHint *string    `json:"credential_hint"`
	Error          *string    `json:"error"`
	ConnectedAt    *timestamp `json:"connected_at"`
	// Throughput is the connection's messages per second; the health
	// fields are the provider's last report (null: unknown). All are
	// null on a channel never connected with credentials.
	Throughput       *int       `json:"throughput"`
	MessagingTier    *string    `json:"messaging_tier"`
	TierChangedAt    *timestamp `json:"tier_changed_at"`
	QualityRating    *string    `json:"quality_rating"`
	QualityChangedAt *timestamp `json:"quality_changed_at"`
}

// orNull is nil for "" and &s otherwise.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// timestampOrNull is nil for nil and the timestamp of *t otherwise.
func timestampOrNull(t *time.Time) *timestamp {
	if t == nil {
		return nil
	}
	at := timestamp(*t)
	return &at
}

func channelView(c *messaging.ChannelState) channelJSON {
	v := channelJSON{Channel: c.Channel, Status: c.Status, SenderID: orNull(c.AccountID), Display: orNull(c.DisplayPhoneNumber),
		CredentialHint: orNull(c.TokenHint), Error: orNull(c.Error)}
	if c.ConnectedAt != nil {
		at := timestamp(*c.ConnectedAt)
		v.ConnectedAt = &at
	}
	if conn := c.Connection; conn != nil && c.Status != record.ConnectionDisconnected {
		n := conn.EffectiveThroughput()
		v.Throughput, v.MessagingTier, v.QualityRating = &n, orNull(conn.MessagingTier), orNull(conn.QualityRating)
		v.TierChangedAt, v.QualityChangedAt = timestampOrNull(conn.TierChangedAt), timestampOrNull(conn.QualityChangedAt)
	}
	return v
}

// sendResultJSON is the answer of a send (POST /v1/messages and POST
// /v1/messages/templates).
type sendResultJSON struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Status         string `json:"status"`
	Channel        string `json:"channel"`
	To             string `json:"to"`
}

func sendResultView(r *messaging.SendResult) sendResultJSON {
	return sendResultJSON{MessageID: r.MessageID, ConversationID: r.ConversationID, Status: r.Status, Channel: r.Channel, To: r.To}
}

// templateSyncJSON is the answer of POST /v1/templates/sync: what the sync
// changed.
type templateSyncJSON struct {
	Listed      int `json:"listed"`
	Created     int `json:"created"`
	Updated     int `json:"updated"`
	Removed     int `json:"removed"`
	Resubmitted int `json:"resubmitted"`
}

// templateComponentJSON is a component of a template, as the requests
// give it and the answers show it.
type templateComponentJSON struct {
	Type     string               `json:"type"`
	Format   string               `json:"format,omitempty"`
	Text     string               `json:"text,omitempty"`
	Buttons  []templateButtonJSON `json:"buttons,omitempty"`
	Examples []string             `json:"examples,omitempty"`
	// ExampleMedia is the id of the sample of a media header (an upload
	// of purpose template_sample), shown to the provider's reviewers.
	ExampleMedia string `json:"example_media,omitempty"`
}

// templateButtonJSON is a button of a template's BUTTONS component.
type templateButtonJSON struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	URL         string `json:"url,omitempty"`
	PhoneNumber string `json:"phone_number,omitempty"`
	Example     string `json:"example,omitempty"`
}

// templateComponentsView returns the JSON form of cs; nil stays nil.
func templateComponentsView(cs []messaging.TemplateComponent) []templateComponentJSON {
	return convertList(cs, func(c messaging.TemplateComponent) templateComponentJSON {
		return templateComponentJSON{Type: c.Type, Format: c.Format, Text: c.Text, Examples: c.Examples, ExampleMedia: c.ExampleMedia,
			Buttons: convertList(c.Buttons, func(b messaging.TemplateButton) templateButtonJSON { return templateButtonJSON(b) })}
	})
}

// templateComponentsParams returns the library's form of cs; nil stays
// nil and empty lists stay empty.
func templateComponentsParams(cs []templateComponentJSON) []messaging.TemplateComponent {
	return convertList(cs, func(c templateComponentJSON) messaging.TemplateComponent {
		return messaging.TemplateComponent{Type: c.Type, Format: c.Format, Text: c.Text, Examples: c.Examples, ExampleMedia: c.ExampleMedia,
			Buttons: convertList(c.Buttons, func(b templateButtonJSON) messaging.TemplateButton { return messaging.TemplateButton(b) })}
	})
}

// convertList returns f applied to each element of in, nil for nil.
func convertList[In, Out any](in []In, f func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// sendTemplateJSON is the send_example of a template: a ready body of
// POST /v1/messages/templates.
type sendTemplateJSON struct {
	To             string              `json:"to"`
	TemplateName   string              `json:"template_name"`
	Language       string              `json:"language"`
	Components     []sendComponentJSON `json:"components,omitempty"`
	IdempotencyKey string              `json:"idempotency_key,omitempty"`
}

// sendComponentJSON is a component of a send_example.
type sendComponentJSON struct {
	Type       string          `json:"type"`
	SubType    string          `json:"sub_type,omitempty"`
	Index      *int            `json:"index,omitempty"`
	Parameters []sendParameter `json:"parameters"`
}

func sendExampleView(p *messaging.SendTemplateParams) *sendTemplateJSON {
	if p == nil {
		return nil
	}
	return &sendTemplateJSON{To: p.To, TemplateName: p.TemplateName, Language: p.Language, IdempotencyKey: p.IdempotencyKey,
		Components: convertList(p.Components, func(c messaging.SendComponent) sendComponentJSON {
			return sendComponentJSON{Type: c.Type, SubType: c.SubType, Index: c.Index,
				Parameters: convertList(c.Parameters, func(q messaging.SendParameter) sendParameter { return sendParameter(q) })}
		})}
}
