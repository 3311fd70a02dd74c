package sms

import (
	"context"
)

// Bulk sends.

// BulkItem is one item of POST /sms/v1/messages/bulk.
type BulkItem struct {
	PartnerID string
	APIKey    string
	// PassType must be empty or "plain".
	PassType string
	// ClientSMSID is the client's reference, kept with the message.
	ClientSMSID string
	Mobile      string
	Message     string
	Shortcode   string
	// TimeToSend, optional, as for Send.
	TimeToSend string
	// Err, when set, is why the item could not be read (for example a
	// member of the wrong type): the item is refused with it (see AsError),
	// neither authenticated nor sent. Its Mobile and ClientSMSID, when
	// known, are still echoed.
	Err error
}

// BulkResult is the outcome of one bulk item.
type BulkResult struct {
	// Code is CodeSuccess or the item's error code; Description its text.
	Code        int
	Description string
	Mobile      string
	// MessageID is the provider message id (0 when refused).
	MessageID int64
	// ID is the service's message id ("" when refused).
	ID          string
	ClientSMSID string
	// NetworkID is the recipient's country calling code ("" when refused).
	NetworkID string
	// Status is "sent" or "scheduled" when accepted.
	Status string
}

// SendBulk accepts up to MaxBulk items. Each is authenticated and validated
// on its own and gets its own result, in order; one bad item never fails
// the others. Each distinct (partnerID, apikey) is authenticated once, and
// the accepted items are debited and stored in one store transaction, in
// order (so when credit runs short, the later items of that account get
// CodeLowCredit). An empty list or more than MaxBulk items is an *Error with
// CodeTooManyMessages. SendBulk is Bulk without an idempotency key.
func (s *SMS) SendBulk(ctx context.Context, items []*BulkItem) ([]*BulkResult, error) {
	r, err := s.Bulk(ctx, &BulkParams{Items: items})
	if err != nil {
		return nil, err
	}
	return r.Results, nil
}

// BulkParams are the arguments of Bulk.
type BulkParams struct {
	// Items are the messages, 1 to MaxBulk.
	Items []*BulkItem
	// IdempotencyKey, optional, makes a retry safe, as for Send. A bulk
	// request with a key must name one partnerID in all the items that
	// could be read: the key is that account's.
	IdempotencyKey string
}

// BulkResponse is the answer of Bulk.
type BulkResponse struct {
	// Results are the outcomes of the items, in order.
	Results []*BulkResult
	// Replayed is true when the results are those of an earlier request
	// with the same idempotency key: nothing was debited or stored this
	// time.
	Replayed bool
}

// Bulk is SendBulk with an optional idempotency key. With a key, a repeat
// of a bulk request the account made with the key gets its results again
// (Replayed), and the key with a different request is
// CodeIdempotencyConflict; items naming different partnerIDs are refused
// whole with CodeUnsupportedRequest. A repeat is recognised once an item
// of the account authenticated. The results of a request of which no item
// reached the store (every item refused before) are not remembered.
func (s *SMS) Bulk(ctx context.Context, p *BulkParams) (*BulkResponse, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedRequest, "", "a body is required")
	}
	items, key := p.Items, p.IdempotencyKey
	if len(items) == 0 || len(items) > MaxBulk {
		return nil, NewError(CodeTooManyMessages, "smslist", "must hold 1 to %d messages (got %d)", MaxBulk, len(items))
	}
	if key != "" {
		if err := ValidateIdempotencyKey(key); err != nil {
			return nil, err
		}
		if err := onePartner(items); err != nil {
			return nil, err
		}
	}
	auth, account := s.authenticateBulk(ctx, items)
	var hash []byte
	if key != "" && account != nil {
		hash = bulkHash(items)
		if res, found, err := replayed(ctx, s, account.PartnerID, key, hash, replayBulk); found || err != nil {
			return res, err
		}
	}
	ans, msgs := s.prepareBulk(items, auth)
	if len(msgs) == 0 {
		return &BulkResponse{Results: ans.bulkResults(nil)}, nil
	}
	// A message was prepared, so an item authenticated: account is set.
	return s.acceptBulk(ctx, account.PartnerID, key, hash, ans, msgs)
}

// bulkAuth is the outcome of authenticating one (partnerID, apikey) of a
// bulk request.
type bulkAuth struct {
	a   *Account
	err error
}

// authenticateBulk authenticates each distinct (partnerID, apikey) of the
// items that could be read, once, in order. It returns the outcomes by
// pair and the account of the first item that authenticated (nil when
// none did).
func (s *SMS) authenticateBulk(ctx context.Context, items []*BulkItem) (map[[2]string]bulkAuth, *Account) {
	auth := map[[2]string]bulkAuth{}
	var account *Account
	for _, it := range items {
		if it == nil || it.Err != nil {
			continue
		}
		k := [2]string{it.PartnerID, it.APIKey}
		if _, ok := auth[k]; ok {
			continue
		}
		a, err := s.Authenticate(ctx, it.PartnerID, it.APIKey)
		auth[k] = bulkAuth{a, err}
		if err == nil && account == nil {
			account = a
		}
	}
	return auth, account
}

// prepareBulk validates each item with the outcome of its authentication:
// it returns the answer, holding a refusal for each refused item and a
// pending result for each other, and the messages of the pending items,
// in order.
func (s *SMS) prepareBulk(items []*BulkItem, auth map[[2]string]bulkAuth) (*answer, []*Message) {
	ans := &answer{Items: make([]answerItem, len(items))}
	var msgs []*Message
	for i, it := range items {
		switch {
		case it == nil:
			ans.Items[i] = refusedItem(NewError(CodeUnsupportedDataType, "", "item must be a JSON object"), "", "")
			continue
		case it.Err != nil:
			ans.Items[i] = refusedItem(it.Err, it.Mobile, it.ClientSMSID)
			continue
		}
		ar := auth[[2]string{it.PartnerID, it.APIKey}]
		if ar.err != nil {
			ans.Items[i] = refusedItem(ar.err, it.Mobile, it.ClientSMSID)
			continue
		}
		m, err := s.prepare(ar.a, &item{mobile: it.Mobile, text: it.Message, sender: it.Shortcode,
			clientRef: it.ClientSMSID, timeToSend: it.TimeToSend, passType: it.PassType})
		if err != nil {
			ans.Items[i] = refusedItem(err, it.Mobile, it.ClientSMSID)
			continue
		}
		msgs = append(msgs, m)
		ans.Items[i] = pendingItem(len(msgs), ar.a, m)
	}
	return ans, msgs
}

// acceptBulk debits and stores msgs, the pending items of ans, for the
// account partnerID (with the idempotency key and the request's hash, when
// key is set), wakes the scheduler when one of them is due now, and
// answers. A store failure refuses every pending item with it.
func (s *SMS) acceptBulk(ctx context.Context, partnerID, key string, hash []byte, ans *answer, msgs []*Message) (*BulkResponse, error) {
	res, prev, err := s.accept(ctx, partnerID, key, hash, ans, msgs)
	if err != nil {
		// Nothing was stored: the items handed to the store get 1005.
		s.log.ErrorContext(ctx, "sms: bulk accept failed", "err", err.Error())
		res = make([]AcceptResult, len(msgs))
		for j := range res {
			res[j].Err = err
		}
		return &BulkResponse{Results: ans.bulkResults(res)}, nil
	}
	if prev != nil {
		return replayBulk(prev, hash)
	}
	wake := false
	for j, m := range msgs {
		wake = wake || (res[j].Err == nil && m.Status == StatusQueued)
	}
	if wake {
		s.wakeScheduler()
	}
	return &BulkResponse{Results: ans.bulkResults(res)}, nil
}

// replayBulk answers a repeat of the bulk request rec remembers.
func replayBulk(rec *Idempotency, hash []byte) (*BulkResponse, error) {
	ans, err := replay(rec, hash)
	if err != nil {
		return nil, err
	}
	return &BulkResponse{Results: ans.bulkResults(rec.Results), Replayed: true}, nil
}

// onePartner checks that the items that could be read name one partnerID,
// the scope of a bulk request's idempotency key.
func onePartner(items []*BulkItem) error {
	first := ""
	seen := false
	for _, it := range items {
		if it == nil || it.Err != nil {
			continue
		}
		if !seen {
			first, seen = it.PartnerID, true
			continue
		}
		if it.PartnerID != first {
			return NewError(CodeUnsupportedRequest, keyField, "a bulk request with an Idempotency-Key must name one partnerID in all its items (got %q and %q); send the items of each account in a request of its own",
				clip(first), clip(it.PartnerID))
		}
	}
	return nil
}

func setErr(r *BulkResult, err error) {
	e := AsError(err)
	r.Code, r.Description = e.Code, e.Description
}
