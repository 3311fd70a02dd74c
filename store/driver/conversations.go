package driver

import "time"

// ConversationListParams are the arguments of Store.ConversationList.
type ConversationListParams struct {
	WorkspaceID string
	// ID, when non-empty, keeps only the conversation with this id.
	ID string
	// BeforeAt and BeforeID, when BeforeID is non-empty, keep the
	// conversations after that position in the listing order
	// (LastMessageAt descending, then ID descending).
	BeforeAt time.Time
	BeforeID string
	Limit    int
}

// ContactsByPhoneParams are the arguments of Store.ContactsByPhone.
type ContactsByPhoneParams struct {
	WorkspaceID string
	// Phones are E.164 numbers, compared byte for byte.
	Phones []string
}
