package record

import "slices"

// Types of inbound messages beyond the send types (TypeText, TypeImage,
// TypeVideo, TypeDocument, TypeAudio). An inbound message of a type the
// service does not know is stored as TypeUnsupported with the provider's
// type name in InboundContent.RawType.
const (
	TypeSticker     = "sticker"
	TypeLocation    = "location"
	TypeContacts    = "contacts"
	TypeInteractive = "interactive"
	// TypeButton is a tap on a quick-reply button of a template.
	TypeButton      = "button"
	TypeReaction    = "reaction"
	TypeUnsupported = "unsupported"
)

// InboundContent is what an inbound message carries beyond its text: the
// media, location, shared contacts, interactive reply or reaction of its
// type, and the message it replies to. Only the member of the message's
// type is set. Its JSON form is that of the message.received event.
type InboundContent struct {
	// Media is the media of an image, video, audio, document or sticker.
	Media *InboundMedia `json:"media,omitempty"`
	// Location is the location of a location message.
	Location *Location `json:"location,omitempty"`
	// Contacts are the contact cards of a contacts message.
	Contacts []SharedContact `json:"contacts,omitempty"`
	// Reply is the button or list reply of an interactive or button
	// message.
	Reply *InteractiveReply `json:"interactive,omitempty"`
	// Reaction is the reaction of a reaction message.
	Reaction *Reaction `json:"reaction,omitempty"`
	// Context is the message this one replies to (WhatsApp's
	// context.id), when it quotes one.
	Context *ReplyContext `json:"context,omitempty"`
	// RawType is the provider's type name of an unsupported message.
	RawType string `json:"unsupported_type,omitempty"`
}

// InboundMedia is the media of an inbound message, held by the provider:
// messaging.Messages.Media fetches it.
type InboundMedia struct {
	// ProviderMediaID is the provider's id of the media (WhatsApp's media
	// id). It is useless without the workspace's access token.
	ProviderMediaID string `json:"provider_media_id"`
	MimeType        string `json:"mime_type,omitempty"`
	// SHA256 is the provider's checksum of the media, when given.
	SHA256   string `json:"sha256,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
	// Animated reports an animated sticker.
	Animated bool `json:"animated,omitempty"`
}

// Location is a shared location.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
	URL       string  `json:"url,omitempty"`
}

// SharedContact is a contact card sent by a customer.
type SharedContact struct {
	FormattedName string         `json:"formatted_name,omitempty"`
	FirstName     string         `json:"first_name,omitempty"`
	LastName      string         `json:"last_name,omitempty"`
	Organization  string         `json:"organization,omitempty"`
	Phones        []ContactPhone `json:"phones,omitempty"`
	Emails        []ContactEmail `json:"emails,omitempty"`
}

// ContactPhone is a phone number of a SharedContact.
type ContactPhone struct {
	Phone string `json:"phone,omitempty"`
	// WaID is the WhatsApp id of the number, when it has one.
	WaID string `json:"wa_id,omitempty"`
	Type string `json:"type,omitempty"`
}

// ContactEmail is an email address of a SharedContact.
type ContactEmail struct {
	Email string `json:"email,omitempty"`
	Type  string `json:"type,omitempty"`
}

// Kinds of InteractiveReply.
const (
	ReplyButton      = "button_reply"
	ReplyList        = "list_reply"
	ReplyQuickButton = "quick_reply"
)

// InteractiveReply is the customer's choice in an interactive message
// (a reply button or a list row) or a template's quick-reply button.
type InteractiveReply struct {
	// Kind is ReplyButton, ReplyList or ReplyQuickButton (the payload of a
	// template's quick-reply button is its ID).
	Kind        string `json:"type"`
	ID          string `json:"id,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Reaction is an emoji reaction to a message. An empty Emoji removes the
// sender's earlier reaction.
type Reaction struct {
	// MessageID is the workspace's id of the message reacted to; empty
	// when the provider id names no message of the workspace.
	MessageID string `json:"message_id,omitempty"`
	// ProviderMessageID is the provider's id of the message reacted to.
	ProviderMessageID string `json:"provider_message_id"`
	Emoji             string `json:"emoji"`
}

// ReplyContext is the message an inbound message replies to.
type ReplyContext struct {
	// MessageID is the workspace's id of the message replied to; empty
	// when the provider id names no message of the workspace.
	MessageID string `json:"message_id,omitempty"`
	// ProviderMessageID is the provider's id of the message replied to.
	ProviderMessageID string `json:"provider_message_id"`
}

// Clone returns a deep copy of c (nil for nil).
func (c *InboundContent) Clone() *InboundContent {
	if c == nil {
		return nil
	}
	cp := *c
	cp.Media, cp.Location, cp.Reply = clonePtr(c.Media), clonePtr(c.Location), clonePtr(c.Reply)
	cp.Reaction, cp.Context = clonePtr(c.Reaction), clonePtr(c.Context)
	cp.Contacts = cloneContacts(c.Contacts)
	return &cp
}

// cloneContacts returns a deep copy of cs (nil for nil).
func cloneContacts(cs []SharedContact) []SharedContact {
	if cs == nil {
		return nil
	}
	out := make([]SharedContact, len(cs))
	for i, sc := range cs {
		sc.Phones = slices.Clone(sc.Phones)
		sc.Emails = slices.Clone(sc.Emails)
		out[i] = sc
	}
	return out
}
