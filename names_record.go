package messaging

import "github.com/ujumbe/messaging/record"

// The records an embedder names most, re-exported from package record
// (which holds every record, its values and limits). A record.X and the
// messaging.X of the same name are one type.
type (
	APIKey             = record.APIKey
	AuditEvent         = record.AuditEvent
	ChannelConnection  = record.ChannelConnection
	Code               = record.Code
	Contact            = record.Contact
	Conversation       = record.Conversation
	Error              = record.Error
	InboundContent     = record.InboundContent
	Interactive        = record.Interactive
	InteractiveHeader  = record.InteractiveHeader
	InteractiveList    = record.InteractiveList
	ListRow            = record.ListRow
	ListSection        = record.ListSection
	Location           = record.Location
	MediaRef           = record.MediaRef
	OutboundContent    = record.OutboundContent
	InteractiveButton  = record.InteractiveButton
	SharedContact      = record.SharedContact
	ContactPhone       = record.ContactPhone
	ContactEmail       = record.ContactEmail
	CTAURL             = record.CTAURL
	UploadedMedia      = record.UploadedMedia
	Message            = record.Message
	MessageQueueStats  = record.MessageQueueStats
	Path               = record.Path
	ReplyContext       = record.ReplyContext
	SendComponent      = record.SendComponent
	SendParameter      = record.SendParameter
	SendTemplateParams = record.SendTemplateParams
	Session            = record.Session
	Suppression        = record.Suppression
	Template           = record.Template
	TemplateButton     = record.TemplateButton
	TemplateComponent  = record.TemplateComponent
	WebhookDelivery    = record.WebhookDelivery
	WebhookEndpoint    = record.WebhookEndpoint
	WorkspaceInfo      = record.WorkspaceInfo
	WorkspaceSettings  = record.WorkspaceSettings
)

// Channels.
const (
	ChannelWhatsApp  = record.ChannelWhatsApp
	ChannelInstagram = record.ChannelInstagram
	ChannelMessenger = record.ChannelMessenger
)

// Message statuses: queued -> sent -> delivered -> read, failed from any
// but read, and canceled from queued (Messages.Cancel).
const (
	StatusQueued    = record.StatusQueued
	StatusSent      = record.StatusSent
	StatusDelivered = record.StatusDelivered
	StatusRead      = record.StatusRead
	StatusFailed    = record.StatusFailed
	StatusCanceled  = record.StatusCanceled
)

// The error codes of the Messaging API (see record.Code).
const (
	CodeUnauthorized       = record.CodeUnauthorized
	CodeInvalidAPIKey      = record.CodeInvalidAPIKey
	CodeForbidden          = record.CodeForbidden
	CodeNotFound           = record.CodeNotFound
	CodeConflict           = record.CodeConflict
	CodeValidation         = record.CodeValidation
	CodeChannelUnavailable = record.CodeChannelUnavailable
	CodeTemplateNotFound   = record.CodeTemplateNotFound
	CodeRateLimitExceeded  = record.CodeRateLimitExceeded
	CodeInternal           = record.CodeInternal
	CodeServiceUnavailable = record.CodeServiceUnavailable
	CodeRecipientOptedOut  = record.CodeRecipientOptedOut
	CodeOutsideWindow      = record.CodeOutsideWindow
)

// The store sentinels: an *Error matches them by code (errors.Is).
var (
	ErrNotFound    = record.ErrNotFound
	ErrConflict    = record.ErrConflict
	ErrUnavailable = record.ErrUnavailable
)
