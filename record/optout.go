package record

import (
	"slices"
	"time"
)

// OptOutKeywords returns the default keywords that opt the sender out
// (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, SITISHA): an inbound
// text message that is exactly one of them, ignoring case and white space,
// opts its sender out of messages on its channel. A workspace may replace
// them (WorkspaceInfo.OptOutKeywords).
func OptOutKeywords() []string {
	return []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "SITISHA"}
}

// OptInKeywords returns the default keywords that opt the sender back in
// (START, UNSTOP, ANZA). A workspace may replace them
// (WorkspaceInfo.OptInKeywords).
func OptInKeywords() []string { return []string{"START", "UNSTOP", "ANZA"} }

// Limits of a workspace's keyword lists.
const (
	// MaxKeywords is the most keywords of one list.
	MaxKeywords = 50
	// MaxKeywordLen is the longest keyword, in characters after
	// FoldKeyword.
	MaxKeywordLen = 32
)

// ActiveOptOutKeywords returns the keywords that opt a sender out in
// workspace w: its own list, or OptOutKeywords when it has none.
func (w *WorkspaceInfo) ActiveOptOutKeywords() []string {
	return slices.Clone(activeKeywords(w.OptOutKeywords, OptOutKeywords))
}

// ActiveOptInKeywords returns the keywords that opt a sender back in in
// workspace w: its own list, or OptInKeywords when it has none.
func (w *WorkspaceInfo) ActiveOptInKeywords() []string {
	return slices.Clone(activeKeywords(w.OptInKeywords, OptInKeywords))
}

// activeKeywords returns own, a stored keyword list, or the defaults
// when it is empty; the caller must not change the list returned.
func activeKeywords(own []string, defaults func() []string) []string {
	if len(own) == 0 {
		return defaults()
	}
	return own
}

// Sources of a change of a Suppression.
const (
	// OptOutByKeyword: the recipient sent a keyword.
	OptOutByKeyword = "keyword"
	// OptOutByOperator: the operator cleared the opt-out (ClearOptOut).
	OptOutByOperator = "operator"
)

// Suppression is the opt-out state of one recipient on one channel of a
// workspace: the suppression list exists whether or not a contact has the
// recipient's number.
type Suppression struct {
	WorkspaceID string
	Channel     string
	// Recipient is the address on the channel (E.164 on WhatsApp).
	Recipient string
	// OptedOut is true while sends to Recipient on Channel are refused.
	OptedOut bool
	// Source is OptOutByKeyword or OptOutByOperator.
	Source string
	// MessageID is the inbound message that carried the keyword; empty
	// for an operator's change.
	MessageID string
	// UpdatedAt is when the state last changed (the keyword message's
	// creation time, or the operator's call).
	UpdatedAt time.Time
}
