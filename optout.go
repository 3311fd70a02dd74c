package messaging

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Opt-out keywords: an inbound text message that is exactly one of them,
// ignoring case and white space, opts its sender out of (or back into)
// messages on its channel.
var (
	// defaultOptOutKeywords are the keywords of an opt-out.
	defaultOptOutKeywords = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "SITISHA"}
	// defaultOptInKeywords are the keywords of an opt-in.
	defaultOptInKeywords = []string{"START", "UNSTOP", "ANZA"}
)

// OptOutKeywords returns the keywords that opt the sender out (STOP,
// STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, SITISHA).
func OptOutKeywords() []string { return slices.Clone(defaultOptOutKeywords) }

// OptInKeywords returns the keywords that opt the sender back in (START,
// UNSTOP, ANZA).
func OptInKeywords() []string { return slices.Clone(defaultOptInKeywords) }

// Events of opt-outs.
const (
	// EventContactOptedOut is announced when a recipient opts out of a
	// channel; its Data is a ContactEventData.
	EventContactOptedOut = "contact.opted_out"
	// EventContactOptedIn is announced when a recipient opts back in.
	EventContactOptedIn = "contact.opted_in"
)

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

// SuppressionSetParams are the arguments of Store.SuppressionSet.
type SuppressionSetParams struct {
	Suppression *Suppression
	// Event, when non-nil, is queued if the state changes.
	Event *EventRecord
}

// SuppressionListParams are the arguments of Store.SuppressionList.
type SuppressionListParams struct {
	WorkspaceID string
	// Recipients are the addresses asked about (at least one).
	Recipients []string
}

// ContactEventData is the payload of contact.opted_out and
// contact.opted_in events.
type ContactEventData struct {
	Channel string `json:"channel"`
	// To is the recipient's address on the channel.
	To string `json:"to"`
	// ContactID is the contact whose phone is To, if any.
	ContactID string `json:"contact_id,omitempty"`
	OptedOut  bool   `json:"opted_out"`
	// Source is "keyword" or "operator".
	Source string `json:"source"`
	// MessageID is the inbound message that carried the keyword.
	MessageID string    `json:"message_id,omitempty"`
	At        time.Time `json:"at"`
}

func (ContactEventData) eventData() {}

// MarshalJSON implements json.Marshaler: At is written with FormatTime.
func (d ContactEventData) MarshalJSON() ([]byte, error) {
	type fields ContactEventData
	return json.Marshal(struct {
		fields
		At jsonTime `json:"at"`
	}{fields(d), jsonTime(d.At)})
}

// keyword reports whether an inbound text is an opt-out or an opt-in
// keyword: the whole text, in any case, white space ignored.
func keyword(text string) (optOut, optIn bool) {
	k := strings.ToUpper(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, text))
	return slices.Contains(defaultOptOutKeywords, k), slices.Contains(defaultOptInKeywords, k)
}

// applyKeyword records the opt-out or opt-in an inbound message carries,
// if it is a keyword. It runs for repeated reports too (the change is
// idempotent), so a crash between storing the message and this change is
// repaired when the provider reports the message again.
func (s *Service) applyKeyword(ctx context.Context, m *Message) error {
	if m.Type != TypeText {
		return nil
	}
	out, in := keyword(m.Text)
	if !out && !in {
		return nil
	}
	_, err := s.setSuppression(ctx, &Suppression{WorkspaceID: m.WorkspaceID, Channel: m.Channel, Recipient: m.To,
		OptedOut: out, Source: OptOutByKeyword, MessageID: m.ID, UpdatedAt: m.CreatedAt})
	return err
}

// setSuppression stores sup with its event and announces the event if
// the state changed.
func (s *Service) setSuppression(ctx context.Context, sup *Suppression) (bool, error) {
	typ := EventContactOptedIn
	if sup.OptedOut {
		typ = EventContactOptedOut
	}
	data := ContactEventData{Channel: sup.Channel, To: sup.Recipient, OptedOut: sup.OptedOut, Source: sup.Source,
		MessageID: sup.MessageID, At: sup.UpdatedAt}
	if sup.Channel == ChannelWhatsApp {
		cs, err := s.store.ContactsByPhone(ctx, &ContactsByPhoneParams{WorkspaceID: sup.WorkspaceID, Phones: []string{sup.Recipient}})
		if err != nil {
			return false, wrapStoreError(err, "contact", "")
		}
		if len(cs) > 0 {
			data.ContactID = cs[0].ID
		}
	}
	ev := &Event{ID: NewID("evt"), Type: typ, CreatedAt: s.now(), WorkspaceID: sup.WorkspaceID, MessageID: sup.MessageID, Data: data}
	rec, err := ev.record()
	if err != nil {
		return false, wrapStoreError(err, "suppression", "")
	}
	changed, err := s.store.SuppressionSet(ctx, &SuppressionSetParams{Suppression: sup, Event: rec})
	if err != nil {
		return false, wrapStoreError(err, "suppression", "")
	}
	if changed {
		s.wakeWebhooks()
		s.events.publish(ctx, ev)
	}
	return changed, nil
}

// optedOut returns the channels on which each of recipients opted out,
// with the time.
func (s *Service) optedOut(ctx context.Context, ws string, recipients []string) (map[string]map[string]time.Time, error) {
	var rs []string
	for _, r := range recipients {
		if r != "" && !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	out := map[string]map[string]time.Time{}
	if len(rs) == 0 {
		return out, nil
	}
	list, err := s.store.SuppressionList(ctx, &SuppressionListParams{WorkspaceID: ws, Recipients: rs})
	if err != nil {
		return nil, wrapStoreError(err, "suppression", "")
	}
	for _, sup := range list {
		if !sup.OptedOut {
			continue
		}
		if out[sup.Recipient] == nil {
			out[sup.Recipient] = map[string]time.Time{}
		}
		out[sup.Recipient][sup.Channel] = sup.UpdatedAt
	}
	return out, nil
}

// refuseOptedOut returns recipient_opted_out when to opted out of channel.
func (s *Service) refuseOptedOut(ctx context.Context, ws, channel, to string) error {
	opted, err := s.optedOut(ctx, ws, []string{to})
	if err != nil {
		return err
	}
	if at, ok := opted[to][channel]; ok {
		return &Error{Code: CodeRecipientOptedOut, Field: "to",
			Message: "to: " + to + " opted out of " + channel + " messages at " + FormatTime(at) +
				"; only the recipient can opt back in, by replying START"}
	}
	return nil
}

// OptOut is the opt-out state of a recipient on a channel, as
// ClearOptOut answers it.
type OptOut struct {
	Channel string
	To      string
	// OptedOut is false after ClearOptOut.
	OptedOut bool
	// Changed is false when the recipient was not opted out.
	Changed bool
}

// ClearOptOut opts a recipient back in on a channel, on the operator's
// authority: for a recipient who asked to be messaged again by other
// means. It is audited ("contact.opted_in", target "channel:to") and
// announced with a contact.opted_in event. Only the operator may call it;
// the workspace's API keys cannot (a recipient opts back in by replying
// START).
func (s *Service) ClearOptOut(ctx context.Context, workspaceID, channel, to string) (*OptOut, error) {
	if err := refuseUnstorable(&struct{ W, C, T string }{workspaceID, channel, to}); err != nil {
		return nil, err
	}
	if err := validateChannel(channel); err != nil {
		return nil, err
	}
	norm, err := validateRecipient(channel, to)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.WorkspaceGet(ctx, workspaceID); err != nil {
		return nil, wrapStoreError(err, "workspace", workspaceID)
	}
	changed, err := s.setSuppression(ctx, &Suppression{WorkspaceID: workspaceID, Channel: channel, Recipient: norm,
		OptedOut: false, Source: OptOutByOperator, UpdatedAt: s.now()})
	if err != nil {
		return nil, err
	}
	if changed {
		s.audit(ctx, workspaceID, EventContactOptedIn, channel+":"+norm)
	}
	return &OptOut{Channel: channel, To: norm, OptedOut: false, Changed: changed}, nil
}
