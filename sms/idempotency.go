package sms

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/attribute"
	"hash"
	"strconv"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/spans"
)

// Idempotency keys. A client that may retry a send after an ambiguous
// failure (a timeout after the service accepted it) gives the request an
// idempotency key: SendParams.IdempotencyKey, BulkParams.IdempotencyKey (the
// Idempotency-Key header of the REST surface). Keys are scoped to the
// account. For IdempotencyRetention after the first request with a key,
// the account's repeats of the same request get the first answer again,
// marked replayed (SendResult.Replayed, BulkResponse.Replayed,
// Error.Replayed), and nothing is debited or sent again; the same key with
// a different request is refused with CodeIdempotencyConflict. After
// IdempotencyRetention the key is free again.
//
// The record of a key is stored by Store.SMSAcceptIdempotent in the
// transaction that debits and stores the request's messages, so neither
// ever exists without the other, and two concurrent requests with one key
// make one accept: the later waits for the earlier's transaction and then
// gets its answer. Only the answers of requests that reached the store are
// remembered: messages accepted, or refused for credit. A request refused
// before (credentials, validation, a bulk without a valid item) stores
// nothing, so a repeat is worked out afresh; so is one whose store
// transaction failed (CodeSystemError), which stored nothing either. A
// repeat is recognised before its content is validated: once a key is
// remembered, its request answers as the first time whatever changed
// since (a timeToSend now in the past, the balance).

// MaxIdempotencyKey is the longest idempotency key, in characters.
const MaxIdempotencyKey = 255

// IdempotencyRetention is how long an idempotency key is remembered after
// the request that first used it.
const IdempotencyRetention = 24 * time.Hour

// keyField names the idempotency key in errors.
const keyField = "Idempotency-Key"

// ValidateIdempotencyKey checks an idempotency key: 1 to MaxIdempotencyKey
// printable ASCII characters (space to '~'). Otherwise it returns an *Error
// with CodeUnsupportedDataType naming the Idempotency-Key.
func ValidateIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKey {
		return NewError(CodeUnsupportedDataType, keyField, "must be 1 to %d printable ASCII characters (got %d bytes)", MaxIdempotencyKey, len(key))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c > 0x7e {
			return NewError(CodeUnsupportedDataType, keyField, "must be 1 to %d printable ASCII characters (byte %d is 0x%02x)", MaxIdempotencyKey, i, c)
		}
	}
	return nil
}

// errKeyReused is the answer to a key reused with a different request.
func errKeyReused(key string) *Error {
	return NewError(CodeIdempotencyConflict, keyField,
		"%q was used in the last %d hours by a different request of this account; repeat that request unchanged to get its answer again, or use a new key for a new request",
		clip(key), int(IdempotencyRetention/time.Hour))
}

// requestHash hashes a request with SHA-256: its kind, then its fields,
// each prefixed with its length, so that two different requests never
// share an encoding.
type requestHash struct{ h hash.Hash }

func newRequestHash(kind string) *requestHash {
	r := &requestHash{h: sha256.New()}
	r.str(kind)
	return r
}

func (r *requestHash) str(ss ...string) {
	var n [binary.MaxVarintLen64]byte
	for _, s := range ss {
		r.h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		r.h.Write([]byte(s))
	}
}

func (r *requestHash) sum() []byte { return r.h.Sum(nil) }

// sendHash identifies a single send: every field, the apikey included (a
// request is the same when its body is).
func sendHash(p *SendParams) []byte {
	h := newRequestHash("send")
	h.str(p.PartnerID, p.APIKey, p.Mobile, p.Message, p.Shortcode, p.TimeToSend, p.PassType)
	return h.sum()
}

// bulkHash identifies a bulk request: every item in order, every field of
// each, and the refusal of an item that could not be read.
func bulkHash(items []*BulkItem) []byte {
	h := newRequestHash("bulk")
	h.str(strconv.Itoa(len(items)))
	for _, it := range items {
		switch {
		case it == nil:
			h.str("nil")
		case it.Err != nil:
			e := AsError(it.Err)
			h.str("unreadable", strconv.Itoa(e.Code), e.Description, it.Mobile, it.ClientSMSID)
		default:
			h.str("item", it.PartnerID, it.APIKey, it.PassType, it.ClientSMSID, it.Mobile, it.Message, it.Shortcode, it.TimeToSend)
		}
	}
	return h.sum()
}

// answer is the answer of a send or bulk request, one item per request
// item, as known before the store accepts the messages: an item handed to
// the store holds both its answers, accepted and refused for credit, for
// the store's results to choose from. It is what an idempotency record
// keeps (as JSON, Idempotency.Answer), and the first answer and every
// replay are built from it by the same code, so they are the same.
type answer struct {
	Items []answerItem `json:"items"`
}

type answerItem struct {
	// Msg is 1 + the index of the item's message among the messages
	// handed to the store (and in their results); 0 for an item refused
	// before the store, whose Code and Description are its refusal.
	Msg         int    `json:"msg,omitempty"`
	Code        int    `json:"code,omitempty"`
	Description string `json:"description,omitempty"`
	Mobile      string `json:"mobile,omitempty"`
	ClientSMSID string `json:"clientsmsid,omitempty"`
	// The answer when the store accepts the message.
	ID        string    `json:"id,omitempty"`
	Status    string    `json:"status,omitempty"`
	NetworkID string    `json:"networkid,omitempty"`
	Encoding  string    `json:"encoding,omitempty"`
	Segments  int       `json:"segments,omitempty"`
	Cost      Credit    `json:"cost,omitempty"`
	DueAt     time.Time `json:"due_at,omitzero"`
	// LowCredit is the description of the answer when the store refuses
	// the message for credit.
	LowCredit string `json:"low_credit,omitempty"`
}

// pendingItem is the answer item of m, of account a, handed to the store
// as its n-th message (from 1).
func pendingItem(n int, a *Account, m *Message) answerItem {
	return answerItem{
		Msg: n, Mobile: m.Mobile, ClientSMSID: m.ClientSMSID, ID: m.ID, Status: sendStatus(m), NetworkID: m.NetworkID,
		Encoding: m.Encoding, Segments: m.Segments, Cost: m.Cost, DueAt: m.DueAt, LowCredit: lowCredit(a, m).Description,
	}
}

// refusedItem is the answer item of an item refused before the store.
func refusedItem(err error, mobile, clientRef string) answerItem {
	e := AsError(err)
	return answerItem{Code: e.Code, Description: e.Description, Mobile: mobile, ClientSMSID: clientRef}
}

// refusal is the error of the item's message when the store refused it
// (r is its result), nil when the store accepted it.
func (it *answerItem) refusal(r AcceptResult) *Error {
	switch {
	case r.Err == nil:
		return nil
	case errors.Is(r.Err, ErrInsufficientCredit):
		return &Error{Code: CodeLowCredit, Description: it.LowCredit, Field: "message"}
	}
	return systemError(r.Err)
}

// sendResult is the answer of a single send given the store's results.
func (a *answer) sendResult(res []AcceptResult, replayed bool) (*SendResult, error) {
	it := &a.Items[0]
	r := res[it.Msg-1]
	if e := it.refusal(r); e != nil {
		e.Replayed = replayed
		return nil, e
	}
	return &SendResult{
		ID: it.ID, Status: it.Status, Mobile: it.Mobile, ProviderMessageID: strconv.FormatInt(r.Number, 10),
		Number: r.Number, NetworkID: it.NetworkID, Encoding: it.Encoding, Segments: it.Segments,
		Cost: it.Cost, Balance: r.Balance, DueAt: it.DueAt, Replayed: replayed,
	}, nil
}

// bulkResults are the answers of a bulk request given the store's results.
func (a *answer) bulkResults(res []AcceptResult) []*BulkResult {
	out := make([]*BulkResult, len(a.Items))
	for i := range a.Items {
		it := &a.Items[i]
		r := &BulkResult{Mobile: it.Mobile, ClientSMSID: it.ClientSMSID}
		out[i] = r
		if it.Msg == 0 {
			r.Code, r.Description = it.Code, it.Description
			continue
		}
		ar := res[it.Msg-1]
		if e := it.refusal(ar); e != nil {
			setErr(r, e)
			continue
		}
		r.Code, r.Description = CodeSuccess, CodeText(CodeSuccess)
		r.MessageID, r.ID, r.NetworkID, r.Status = ar.Number, it.ID, it.NetworkID, it.Status
	}
	return out
}

// remembered returns the live record of key in the account partnerID, nil
// when there is none.
func (s *SMS) remembered(ctx context.Context, partnerID, key string) (*Idempotency, error) {
	rec, err := s.store.SMSIdempotencyGet(ctx, &IdempotencyGetParams{PartnerID: partnerID, Key: key, Now: s.now()})
	if errors.Is(err, messaging.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, systemError(err)
	}
	return rec, nil
}

// replayed answers a repeat of a request with an idempotency key: when
// partnerID remembers key, found is true and res is that answer, through
// replay (a request whose hash is not hash is refused there); when it does
// not, found is false and the request is to be served.
func replayed[T any](ctx context.Context, s *SMS, partnerID, key string, hash []byte, replay func(*Idempotency, []byte) (T, error)) (res T, found bool, err error) {
	rec, err := s.remembered(ctx, partnerID, key)
	if err != nil || rec == nil {
		return res, false, err
	}
	res, err = replay(rec, hash)
	return res, true, err
}

// replay returns the answer rec remembers for a repeat of its request, a
// request whose hash is hash; a different request is CodeIdempotencyConflict.
func replay(rec *Idempotency, hash []byte) (*answer, error) {
	if !bytes.Equal(rec.RequestHash, hash) {
		return nil, errKeyReused(rec.Key)
	}
	var a answer
	if err := json.Unmarshal(rec.Answer, &a); err != nil {
		return nil, systemError(fmt.Errorf("idempotency record %q of %s: %w", rec.Key, rec.PartnerID, err))
	}
	if len(a.Items) == 0 {
		return nil, systemError(fmt.Errorf("idempotency record %q of %s has no items", rec.Key, rec.PartnerID))
	}
	for _, it := range a.Items {
		if it.Msg < 0 || it.Msg > len(rec.Results) {
			return nil, systemError(fmt.Errorf("idempotency record %q of %s: message %d of %d results", rec.Key, rec.PartnerID, it.Msg, len(rec.Results)))
		}
	}
	return &a, nil
}

// accept hands msgs, of the account partnerID, to the store: with a key,
// together with the record of the request (hash) and its answer a. It
// returns the store's results, or, when the key was remembered meanwhile
// (a concurrent request with the same key got there first), its record.
// Errors are the store's.
func (s *SMS) accept(ctx context.Context, partnerID, key string, hash []byte, a *answer, msgs []*Message) ([]AcceptResult, *Idempotency, error) {
	var res []AcceptResult
	var prev *Idempotency
	var err error
	ctx, span := s.tel.start(ctx, "sms.accept")
	if spans.Recording(span) {
		span.SetAttributes(AttrAccount.String(partnerID), attribute.Int("sms.messages", len(msgs)))
	}
	defer func() { spans.End(span, err) }()
	if key == "" {
		res, err = s.store.SMSAccept(ctx, msgs)
	} else {
		blob, merr := json.Marshal(a)
		if merr != nil {
			return nil, nil, merr
		}
		now := s.now()
		res, prev, err = s.store.SMSAcceptIdempotent(ctx, &AcceptIdempotentParams{Record: &Idempotency{
			PartnerID: partnerID, Key: key, RequestHash: hash, Answer: blob, CreatedAt: now, ExpiresAt: now.Add(IdempotencyRetention),
		}, Messages: msgs})
	}
	if err != nil {
		return nil, nil, err
	}
	if prev == nil && len(res) != len(msgs) {
		err = fmt.Errorf("store returned %d results for %d messages", len(res), len(msgs))
		return nil, nil, err
	}
	if prev == nil {
		s.tel.acceptedAll(ctx, msgs, res)
	}
	return res, prev, nil
}
