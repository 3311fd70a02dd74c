package messaging

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// FoldKeyword returns text as keywords are compared: upper case, every
// white space character removed ("  Stop all " is "STOPALL").
func FoldKeyword(text string) string {
	return strings.ToUpper(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, text))
}

// keywordList validates a keyword list given for field and returns it
// folded (FoldKeyword), in its order; an empty list is nil (the
// defaults). Each keyword must hold 1 to MaxKeywordLen characters after
// folding and no control character, none may repeat another after
// folding, and the list holds at most MaxKeywords.
func keywordList(field string, list []string) ([]string, error) {
	if len(list) > record.MaxKeywords {
		return nil, validationError(field, "must hold at most %d keywords (got %d)", record.MaxKeywords, len(list))
	}
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]string, len(list))
	for i, k := range list {
		f := FoldKeyword(k)
		at := record.FieldPath(field).Index(i)
		if n := utf8.RuneCountInString(f); n < 1 || n > record.MaxKeywordLen {
			return nil, validationErrorAt(at, "must hold 1 to %d characters besides white space (got %d in %q)", record.MaxKeywordLen, n, k)
		}
		if strings.IndexFunc(f, unicode.IsControl) >= 0 {
			return nil, validationErrorAt(at, "must not hold control characters")
		}
		if j := slices.Index(out[:i], f); j >= 0 {
			return nil, validationErrorAt(at, "repeats %s[%d]: both are %s once case and white space are ignored", field, j, f)
		}
		out[i] = f
	}
	return out, nil
}

// optionalKeywordList is keywordList for a list that may be absent: nil
// (no change) gives nil, anything else a pointer to the checked list.
func optionalKeywordList(field string, list *[]string) (*[]string, error) {
	if list == nil {
		return nil, nil
	}
	out, err := keywordList(field, *list)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// checkKeywordOverlap refuses a keyword that is in both the opt-out list
// out and the opt-in list in (stored forms: nil is the defaults). The
// error names a list that changed (the caller's own list before a list
// of defaults, the opt-in list first), with the keyword's index when the
// list is the workspace's own.
func checkKeywordOverlap(out, in []string, outChanged, inChanged bool) error {
	activeOut, activeIn := (&WorkspaceInfo{OptOutKeywords: out}).ActiveOptOutKeywords(), (&WorkspaceInfo{OptInKeywords: in}).ActiveOptInKeywords()
	check := func(field string, list, other []string, own bool, otherName string) error {
		for i, k := range list {
			if !slices.Contains(other, k) {
				continue
			}
			at := record.FieldPath(field)
			if own {
				at = at.Index(i)
			}
			return validationErrorAt(at, "%s is also an %s keyword of the workspace: a keyword cannot both opt out and opt in", k, otherName)
		}
		return nil
	}
	// A list given by the caller is blamed before the defaults it clashes
	// with.
	for _, own := range []bool{true, false} {
		if inChanged && (in != nil) == own {
			if err := check("opt_in_keywords", activeIn, activeOut, own, "opt-out"); err != nil {
				return err
			}
		}
		if outChanged && (out != nil) == own {
			if err := check("opt_out_keywords", activeOut, activeIn, own, "opt-in"); err != nil {
				return err
			}
		}
	}
	return nil
}

// Events of opt-outs.
const (
	// EventContactOptedOut is announced when a recipient opts out of a
	// channel; its Data is a ContactEventData.
	EventContactOptedOut = "contact.opted_out"
	// EventContactOptedIn is announced when a recipient opts back in.
	EventContactOptedIn = "contact.opted_in"
)

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

// keyword reports whether an inbound text, folded (FoldKeyword: the whole
// text, in any case, white space ignored), is an opt-out or an opt-in
// keyword of workspace w.
func keyword(w *WorkspaceInfo, folded string) (optOut, optIn bool) {
	return slices.Contains(w.ActiveOptOutKeywords(), folded),
		slices.Contains(w.ActiveOptInKeywords(), folded)
}

// applyKeyword records the opt-out or opt-in an inbound message carries,
// if it is a keyword of its workspace. It runs for repeated reports too
// (the change is idempotent), so a crash between storing the message and
// this change is repaired when the provider reports the message again.
func (s *Service) applyKeyword(ctx context.Context, m *Message) error {
	if m.Type != record.TypeText {
		return nil
	}
	// No keyword is longer than MaxKeywordLen: a longer text needs no
	// look-up of the workspace's lists.
	folded := FoldKeyword(m.Text)
	if n := utf8.RuneCountInString(folded); n == 0 || n > record.MaxKeywordLen {
		return nil
	}
	w, err := s.store.WorkspaceGet(ctx, m.WorkspaceID)
	if err != nil {
		return wrapStoreError(err, "workspace", m.WorkspaceID)
	}
	out, in := keyword(w, folded)
	if !out && !in {
		return nil
	}
	_, err = s.setSuppression(ctx, &Suppression{WorkspaceID: m.WorkspaceID, Channel: m.Channel, Recipient: m.To,
		OptedOut: out, Source: record.OptOutByKeyword, MessageID: m.ID, UpdatedAt: m.CreatedAt})
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
	if s.phoneRecipients(sup.Channel) {
		cs, err := s.store.ContactsByPhone(ctx, &driver.ContactsByPhoneParams{WorkspaceID: sup.WorkspaceID, Phones: []string{sup.Recipient}})
		if err != nil {
			return false, wrapStoreError(err, "contact", "")
		}
		if len(cs) > 0 {
			data.ContactID = cs[0].ID
		}
	}
	ev := &Event{ID: record.NewID("evt"), Type: typ, CreatedAt: s.now(), WorkspaceID: sup.WorkspaceID, MessageID: sup.MessageID, Data: data}
	rec, err := ev.record()
	if err != nil {
		return false, wrapStoreError(err, "suppression", "")
	}
	changed, err := s.store.SuppressionSet(ctx, &driver.SuppressionSetParams{Suppression: sup, Event: rec})
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
	list, err := s.store.SuppressionList(ctx, &driver.SuppressionListParams{WorkspaceID: ws, Recipients: rs})
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

// optedOutError is recipient_opted_out for a message to to on channel in
// workspace ws, whose recipient opted out at at; it names the workspace's
// first opt-in keyword.
func (s *Service) optedOutError(ctx context.Context, ws, channel, to string, at time.Time) error {
	keyword := record.OptInKeywords()[0]
	if w, err := s.store.WorkspaceGet(ctx, ws); err == nil {
		keyword = w.ActiveOptInKeywords()[0]
	}
	return errorOn(CodeRecipientOptedOut, "to", "to: "+to+" opted out of "+channel+" messages at "+record.FormatTime(at)+
		"; only the recipient can opt back in, by replying "+keyword, nil)
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
// an opt-in keyword of the workspace, START by default).
func (s *Service) ClearOptOut(ctx context.Context, workspaceID, channel, to string) (*OptOut, error) {
	if err := new(texts).at(nil, "workspaceID", workspaceID, "channel", channel, "to", to).result(); err != nil {
		return nil, err
	}
	if err := s.validateChannel(channel); err != nil {
		return nil, err
	}
	norm, err := validateRecipient(s.spec(channel), channel, to)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.WorkspaceGet(ctx, workspaceID); err != nil {
		return nil, wrapStoreError(err, "workspace", workspaceID)
	}
	changed, err := s.setSuppression(ctx, &Suppression{WorkspaceID: workspaceID, Channel: channel, Recipient: norm,
		OptedOut: false, Source: record.OptOutByOperator, UpdatedAt: s.now()})
	if err != nil {
		return nil, err
	}
	if changed {
		s.audit(ctx, workspaceID, EventContactOptedIn, channel+":"+norm)
	}
	return &OptOut{Channel: channel, To: norm, OptedOut: false, Changed: changed}, nil
}
