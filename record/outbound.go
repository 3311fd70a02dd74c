package record

import (
	"slices"
	"time"
)

// Limits of rich outbound messages: Meta's documented limits for WhatsApp
// interactive messages (Cloud API reference, "Interactive messages" and
// "Interactive list messages") and for reactions and contacts, which the
// service checks before a message is stored. The README's "Rich outbound
// messages" section lists each with its source.
const (
	MaxInteractiveBody   = 1024
	MaxInteractiveFooter = 60
	MaxInteractiveHeader = 60
	MaxReplyButtons      = 3
	MaxButtonTitle       = 20
	MaxButtonID          = 256
	MaxListButton        = 20
	MaxListSections      = 10
	MaxListRows          = 10
	MaxSectionTitle      = 24
	MaxRowTitle          = 24
	MaxRowDescription    = 72
	MaxRowID             = 200
	MaxCTADisplayText    = 20
	// MaxLocationText bounds a location's name and address (a choice of
	// the service: Meta documents none).
	MaxLocationText = 1000
	// MaxContactCards bounds the cards of a contacts message (a choice of
	// the service: Meta documents none).
	MaxContactCards = 10
	// MaxReactionAge is how old a message may be to be reacted to: Meta
	// refuses reactions to messages older than 30 days.
	MaxReactionAge = 30 * 24 * time.Hour
)

// Interactive types (Interactive.Type).
const (
	InteractiveTypeButton = "button"
	InteractiveTypeList   = "list"
	InteractiveTypeCTAURL = "cta_url"
)

// OutboundContent is what an outbound message carries beyond its text,
// media link and template: the interactive message, location, contact
// cards or reaction of its type, the uploaded media it sends, and the
// message it quotes. Only the members of the message's type are set; nil
// on messages that carry none of them.
type OutboundContent struct {
	// Interactive is the message of type interactive.
	Interactive *Interactive `json:"interactive,omitempty"`
	// Location is the location of a location message.
	Location *Location `json:"location,omitempty"`
	// Contacts are the cards of a contacts message.
	Contacts []SharedContact `json:"contacts,omitempty"`
	// Reaction is the reaction of a reaction message: the message reacted
	// to (ours and the provider's id) and the emoji, empty to remove it.
	Reaction *Reaction `json:"reaction,omitempty"`
	// Context is the message this one quotes (context.message_id).
	Context *ReplyContext `json:"context,omitempty"`
	// Media is the uploaded media an image, video, document, audio or
	// sticker message sends instead of Message.MediaURL.
	Media *MediaRef `json:"media,omitempty"`
}

// MediaRef names a media file uploaded to the provider (see Media): the
// service's id and the provider's, resolved when the message was
// accepted.
type MediaRef struct {
	// ID is the service's media id (med_...).
	ID string `json:"media_id"`
	// ProviderMediaID is the provider's id of the upload.
	ProviderMediaID string `json:"provider_media_id,omitempty"`
	// MimeType is the upload's MIME type.
	MimeType string `json:"mime_type,omitempty"`
}

// Interactive is an interactive message: reply buttons, a list or a
// call-to-action URL button, with a body, an optional header and footer.
type Interactive struct {
	// Type is InteractiveTypeButton, InteractiveTypeList or
	// InteractiveTypeCTAURL.
	Type   string             `json:"type"`
	Header *InteractiveHeader `json:"header,omitempty"`
	Body   string             `json:"body"`
	Footer string             `json:"footer,omitempty"`
	// Buttons are the reply buttons of a button message.
	Buttons []InteractiveButton `json:"buttons,omitempty"`
	// List is the list of a list message.
	List *InteractiveList `json:"list,omitempty"`
	// CTA is the button of a cta_url message.
	CTA *CTAURL `json:"cta_url,omitempty"`
}

// InteractiveHeader is the header of an interactive message: a text, or
// an image, video or document given by link or uploaded media.
type InteractiveHeader struct {
	// Type is text, image, video or document.
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	MediaURL string    `json:"media_url,omitempty"`
	Media    *MediaRef `json:"media,omitempty"`
	// Filename is the file name of a document header.
	Filename string `json:"filename,omitempty"`
}

// InteractiveButton is a reply button: the id the customer's reply carries and
// the title shown.
type InteractiveButton struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// InteractiveList is the list of a list message: the label of the button
// that opens it and its sections.
type InteractiveList struct {
	Button   string        `json:"button"`
	Sections []ListSection `json:"sections"`
}

// ListSection is a section of a list; its title is required when the
// list has more than one section.
type ListSection struct {
	Title string    `json:"title,omitempty"`
	Rows  []ListRow `json:"rows"`
}

// ListRow is a row of a list section.
type ListRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// CTAURL is the button of a cta_url message: its text and the https URL
// it opens.
type CTAURL struct {
	DisplayText string `json:"display_text"`
	URL         string `json:"url"`
}

// Clone returns a deep copy of c (nil for nil).
func (c *OutboundContent) Clone() *OutboundContent {
	if c == nil {
		return nil
	}
	cp := *c
	cp.Location, cp.Reaction, cp.Context, cp.Media = clonePtr(c.Location), clonePtr(c.Reaction), clonePtr(c.Context), clonePtr(c.Media)
	cp.Contacts = cloneContacts(c.Contacts)
	if c.Interactive != nil {
		in := *c.Interactive
		if in.Header != nil {
			h := *in.Header
			h.Media = clonePtr(h.Media)
			in.Header = &h
		}
		in.Buttons = slices.Clone(in.Buttons)
		in.CTA = clonePtr(in.CTA)
		if in.List != nil {
			l := *in.List
			l.Sections = slices.Clone(l.Sections)
			for i := range l.Sections {
				l.Sections[i].Rows = slices.Clone(l.Sections[i].Rows)
			}
			in.List = &l
		}
		cp.Interactive = &in
	}
	return &cp
}

// Media purposes (UploadedMedia.Purpose).
const (
	// MediaForMessages is an upload to send in messages (media_id).
	MediaForMessages = "message"
	// MediaForTemplateSample is a sample of a template's media header,
	// uploaded for the provider's reviewers (example_media).
	MediaForTemplateSample = "template_sample"
)

// Media kinds (UploadedMedia.Kind): the message types a file is sent as.
const (
	MediaImage    = TypeImage
	MediaVideo    = TypeVideo
	MediaAudio    = TypeAudio
	MediaDocument = TypeDocument
	MediaSticker  = TypeSticker
)

// UploadedMedia is a file uploaded to the provider through a workspace's
// connection: what it is, and the provider's id (or, for a template
// sample, its upload handle) to send it by.
type UploadedMedia struct {
	ID          string
	WorkspaceID string
	Channel     string
	// Purpose is MediaForMessages or MediaForTemplateSample.
	Purpose string
	// Kind is the message type it is sent as (image, video, audio,
	// document, sticker).
	Kind     string
	MimeType string
	// Size is its length in bytes.
	Size     int64
	Filename string
	// SHA256 is the hex SHA-256 of its bytes.
	SHA256 string
	// ProviderMediaID is the provider's media id, or the upload handle of
	// a template sample.
	ProviderMediaID string
	// Animated reports an animated sticker.
	Animated  bool
	CreatedAt time.Time
	// ExpiresAt is when the provider forgets it (30 days after the upload
	// on WhatsApp).
	ExpiresAt time.Time
}
