package sms

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging/internal/textcheck"
)

// Single sends.

// SendParams are the fields of POST /sms/v1/messages.
type SendParams struct {
	APIKey    string
	PartnerID string
	// Mobile: international format, digits only, no plus sign.
	Mobile  string
	Message string
	// Shortcode is an approved sender id of the account.
	Shortcode string
	// TimeToSend, optional, see ParseTimeToSend.
	TimeToSend string
	// PassType must be empty or "plain" (the apikey is sent as is).
	PassType string
	// IdempotencyKey, optional, makes a retry safe: a repeat of the same
	// request with the same key gets the first answer (Replayed) and sends
	// nothing. See ValidateIdempotencyKey and IdempotencyRetention.
	IdempotencyKey string
}

// SendResult is an accepted send.
type SendResult struct {
	// ID is the service's message id.
	ID string
	// Status is "sent" when accepted for immediate sending, "scheduled"
	// when due later.
	Status string
	Mobile string
	// ProviderMessageID is Number in decimal: the id to ask delivery
	// reports with.
	ProviderMessageID string
	Number            int64
	// NetworkID is the recipient's country calling code.
	NetworkID string
	Encoding  string
	Segments  int
	// Cost is what was debited; Balance is the credit left after it.
	Cost    Credit
	Balance Credit
	// DueAt is when the message is due (now for immediate sends).
	DueAt time.Time
	// Replayed is true when the result is that of an earlier request with
	// the same idempotency key: nothing was debited or stored this time.
	Replayed bool
}

// Send statuses of SendResult.
const (
	SendStatusSent      = "sent"
	SendStatusScheduled = "scheduled"
)

// item is the validated content of one send.
// unstorable refuses, with 1009 naming the field, a value that no store can
// keep: a NUL character or bytes that are not UTF-8. fields alternate
// names and values, checked in that order.
func unstorable(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if rule := textcheck.Rule(fields[i+1]); rule != "" {
			return NewError(CodeUnsupportedDataType, fields[i], "%s", rule)
		}
	}
	return nil
}

type item struct {
	mobile, text, sender, clientRef, timeToSend, passType string
}

// prepare validates it for account a and returns the message to store,
// without Number.
func (s *SMS) prepare(a *Account, it *item) (*Message, error) {
	if err := unstorable("clientsmsid", it.clientRef, "message", it.text, "mobile", it.mobile,
		"pass_type", it.passType, "shortcode", it.sender, "timeToSend", it.timeToSend); err != nil {
		return nil, err
	}
	cc, err := ValidMobile(it.mobile)
	if err != nil {
		return nil, err
	}
	if it.passType != "" && it.passType != "plain" {
		return nil, NewError(CodeUnsupportedDataType, "pass_type", "only \"plain\" is supported (got %q)", clip(it.passType))
	}
	if strings.TrimSpace(it.text) == "" {
		return nil, NewError(CodeUnsupportedDataType, "message", "is required and must not be blank")
	}
	if !utf8.ValidString(it.text) || strings.ContainsRune(it.text, 0) {
		return nil, NewError(CodeUnsupportedDataType, "message", "must be valid UTF-8 without NUL characters")
	}
	enc, parts := Segments(it.text)
	if parts > s.opts.MaxSegments {
		return nil, NewError(CodeUnsupportedDataType, "message", "takes %d SMS parts in %s, at most %d are allowed", parts, enc, s.opts.MaxSegments)
	}
	if it.sender == "" {
		return nil, NewError(CodeInvalidSender, "shortcode", "is required")
	}
	if _, ok := slices.BinarySearch(a.Senders, it.sender); !ok {
		return nil, NewError(CodeInvalidSender, "shortcode", "%q is not an approved sender id of this account", clip(it.sender))
	}
	loc, err := s.location(a.TimeZone)
	if err != nil {
		return nil, systemError(err)
	}
	now := s.now()
	due, scheduled, err := ParseTimeToSend(it.timeToSend, loc, now)
	if err != nil {
		return nil, err
	}
	status := StatusQueued
	if scheduled {
		status = StatusScheduled
	}
	return &Message{
		ID: record.NewID("sms"), PartnerID: a.PartnerID, Mobile: it.mobile, Text: it.text,
		Sender: it.sender, ClientSMSID: it.clientRef, Encoding: enc, Segments: parts,
		Cost: a.CostPerSegment * Credit(parts), Status: status, DueAt: due,
		NetworkID: strconv.Itoa(cc), CreatedAt: now, UpdatedAt: now,
	}, nil
}

func sendStatus(m *Message) string {
	if m.Status == StatusScheduled {
		return SendStatusScheduled
	}
	return SendStatusSent
}

// Send authenticates, validates and accepts one SMS: its cost is debited
// (CodeLowCredit, taking nothing, when the credit cannot cover it) and it is
// stored for the scheduler, due at once or at timeToSend. With an
// IdempotencyKey, a repeat of a request the account made with the key
// gets its answer again (see IdempotencyRetention), and the key with a
// different request is CodeIdempotencyConflict.
func (s *SMS) Send(ctx context.Context, p *SendParams) (*SendResult, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedRequest, "", "a body is required")
	}
	key := p.IdempotencyKey
	if key != "" {
		if err := ValidateIdempotencyKey(key); err != nil {
			return nil, err
		}
	}
	a, err := s.Authenticate(ctx, p.PartnerID, p.APIKey)
	if err != nil {
		return nil, err
	}
	return s.sendFor(ctx, a, p)
}

// sendFor is Send for the account a, authenticated (or trusted, see
// Fallback), once p's idempotency key is known to be valid.
func (s *SMS) sendFor(ctx context.Context, a *Account, p *SendParams) (*SendResult, error) {
	key := p.IdempotencyKey
	var hash []byte
	if key != "" {
		hash = sendHash(p)
		if res, found, err := replayed(ctx, s, a.PartnerID, key, hash, replaySend); found || err != nil {
			return res, err
		}
	}
	m, err := s.prepare(a, &item{mobile: p.Mobile, text: p.Message, sender: p.Shortcode, timeToSend: p.TimeToSend, passType: p.PassType})
	if err != nil {
		return nil, err
	}
	ans := &answer{Items: []answerItem{pendingItem(1, a, m)}}
	res, prev, err := s.accept(ctx, a.PartnerID, key, hash, ans, []*Message{m})
	if err != nil {
		return nil, systemError(err)
	}
	if prev != nil {
		return replaySend(prev, hash)
	}
	if res[0].Err == nil && m.Status == StatusQueued {
		s.wakeScheduler()
	}
	return ans.sendResult(res, false)
}

// replaySend answers a repeat of the single send rec remembers.
func replaySend(rec *Idempotency, hash []byte) (*SendResult, error) {
	ans, err := replay(rec, hash)
	if err != nil {
		return nil, err
	}
	if len(ans.Items) != 1 || ans.Items[0].Msg != 1 {
		return nil, systemError(fmt.Errorf("idempotency record %q of %s is not a single send", rec.Key, rec.PartnerID))
	}
	return ans.sendResult(rec.Results, true)
}

// lowCredit is the refusal of m, of account a, when the credit cannot cover
// it.
func lowCredit(a *Account, m *Message) *Error {
	return NewError(CodeLowCredit, "message", "costs %s credits (%d %s parts at %s), more than the account's balance", m.Cost, m.Segments, m.Encoding, a.CostPerSegment)
}
