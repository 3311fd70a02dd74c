package sms_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
)

// keyed is a single send of account 1234 with an idempotency key.
func keyed(key string) *sms.SendParams {
	return &sms.SendParams{APIKey: apikey, PartnerID: partner, Mobile: kenya, Message: "Your code is 1234", Shortcode: "ACME", IdempotencyKey: key}
}

// replayOf is want marked replayed.
func replayOf(want *sms.SendResult) *sms.SendResult {
	c := *want
	c.Replayed = true
	return &c
}

func TestSendIdempotencyKeyReplays(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	first, err := e.svc.Send(e.ctx, keyed("order-42"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed {
		t.Error("first send is marked replayed")
	}
	e.clk.Add(time.Minute)
	for i := range 3 {
		again, err := e.svc.Send(e.ctx, keyed("order-42"))
		if err != nil {
			t.Fatalf("repeat %d: %v", i, err)
		}
		if d := cmp.Diff(replayOf(first), again); d != "" {
			t.Errorf("repeat %d (-want +got):\n%s", i, d)
		}
	}
	if b := e.balance(t); b != sms.Credits(99) {
		t.Errorf("balance %s after a send and 3 repeats, want 99.00 (debited once)", b)
	}
	if n := e.runDue(t); n != 1 {
		t.Errorf("%d messages handed to the gateway, want 1", n)
	}
	// Without a key, or with another key, the same request is a new send.
	for _, key := range []string{"", "order-43"} {
		if r := e.send(t, keyed(key)); r.Replayed || r.ID == first.ID {
			t.Errorf("send with key %q: %+v, want a new message", key, r)
		}
	}
	if b := e.balance(t); b != sms.Credits(97) {
		t.Errorf("balance %s, want 97.00", b)
	}
}

func TestSendIdempotencyKeyWithDifferentRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(p *sms.SendParams)
	}{
		{"other message", func(p *sms.SendParams) { p.Message = "Your code is 9999" }},
		{"other mobile", func(p *sms.SendParams) { p.Mobile = "254712345679" }},
		{"scheduled", func(p *sms.SendParams) { p.TimeToSend = "2026-03-05 09:00" }},
		{"pass_type given", func(p *sms.SendParams) { p.PassType = "plain" }},
		// The same characters split differently among the fields: a repeat
		// is recognised before validation, so the mobile's shape is moot.
		{"fields split differently", func(p *sms.SendParams) { p.Mobile, p.Message = "2547123456", "78Your code is 1234" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, nil)
			e.send(t, keyed("order-42"))
			p := keyed("order-42")
			tc.edit(p)
			_, err := e.svc.Send(e.ctx, p)
			wantCode(t, tc.name, err, sms.CodeIdempotencyConflict, "Idempotency-Key")
			if e := err.(*sms.Error); !strings.Contains(e.Description, `"order-42"`) || e.Replayed {
				t.Errorf("description %q (replayed %v): want the key named, not replayed", e.Description, e.Replayed)
			}
			if b := e.balance(t); b != sms.Credits(99) {
				t.Errorf("balance %s, want 99.00 (the conflict took nothing)", b)
			}
		})
	}
}

func TestSendIdempotencyKeyScopedToAccount(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	const otherKey = "other_key_0123456789abcdef"
	if _, _, err := e.svc.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: "5678", APIKey: otherKey, Senders: []string{"ACME"}, Credit: sms.Credits(10)}); err != nil {
		t.Fatal(err)
	}
	mine := e.send(t, keyed("shared"))
	p := keyed("shared")
	p.PartnerID, p.APIKey = "5678", otherKey
	theirs, err := e.svc.Send(e.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if theirs.Replayed || theirs.ID == mine.ID || theirs.Balance != sms.Credits(9) {
		t.Errorf("5678's send with 1234's key: %+v, want a new message of its own", theirs)
	}
	// A wrong apikey never reaches the remembered answer.
	p = keyed("shared")
	p.APIKey = otherKey
	_, err = e.svc.Send(e.ctx, p)
	wantCode(t, "1234's key with a wrong apikey", err, sms.CodeInvalidCredentials, "")
}

// TestSendIdempotencyRetention moves the clock: a key is remembered for
// IdempotencyRetention after its first request, then free for a new one.
func TestSendIdempotencyRetention(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	first := e.send(t, keyed("k"))
	e.clk.Add(sms.IdempotencyRetention - time.Nanosecond)
	if again := e.send(t, keyed("k")); !again.Replayed || again.ID != first.ID {
		t.Errorf("repeat just before the retention ends: %+v, want the first answer replayed", again)
	}
	p := keyed("k")
	p.Message = "something else"
	_, err := e.svc.Send(e.ctx, p)
	wantCode(t, "other request just before the retention ends", err, sms.CodeIdempotencyConflict, "Idempotency-Key")
	e.clk.Add(time.Nanosecond)
	second := e.send(t, p)
	if second.Replayed || second.ID == first.ID {
		t.Errorf("send once the retention ended: %+v, want a new message", second)
	}
	if again := e.send(t, p); !again.Replayed || again.ID != second.ID {
		t.Errorf("repeat of the new request: %+v, want it replayed", again)
	}
	if b := e.balance(t); b != sms.Credits(98) {
		t.Errorf("balance %s, want 98.00 (two messages)", b)
	}
}

// TestSendIdempotencyRefusalsBeforeTheStoreAreNotRemembered: a request
// refused by validation stored nothing, so the key stays free.
func TestSendIdempotencyRefusalsBeforeTheStoreAreNotRemembered(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	bad := keyed("k")
	bad.Mobile = "0712345678"
	_, err := e.svc.Send(e.ctx, bad)
	wantCode(t, "bad mobile", err, sms.CodeInvalidMobile, "mobile")
	if r := e.send(t, keyed("k")); r.Replayed {
		t.Errorf("corrected request after a refusal: %+v, want a new send", r)
	}
}

// TestSendIdempotencyRemembersLowCredit: a send refused for credit reached
// the store; its repeat is refused again, replayed, even after a top-up.
func TestSendIdempotencyRemembersLowCredit(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	setLowCredit(t, e, sms.Credits(1))
	p := keyed("k")
	p.Message = strings.Repeat("a", 161) // two parts
	_, first := e.svc.Send(e.ctx, p)
	wantCode(t, "two parts with one credit", first, sms.CodeLowCredit, "message")
	if first.(*sms.Error).Replayed {
		t.Error("first refusal marked replayed")
	}
	if _, err := e.svc.TopUp(e.ctx, partner, sms.Credits(10)); err != nil {
		t.Fatal(err)
	}
	_, again := e.svc.Send(e.ctx, p)
	wantCode(t, "repeat after a top-up", again, sms.CodeLowCredit, "message")
	if a, f := again.(*sms.Error), first.(*sms.Error); !a.Replayed || a.Description != f.Description {
		t.Errorf("repeat: %q replayed %v; want %q replayed", a.Description, a.Replayed, f.Description)
	}
	if b := e.balance(t); b != sms.Credits(11) {
		t.Errorf("balance %s, want 11.00", b)
	}
}

// TestSendIdempotencyAnswersAsTheFirstTime: what changed since the first
// request does not change its answer, even when the request would now be
// refused: 12:00 in Nairobi a year ahead is within a year of now, 12:00 in
// Los Angeles is not.
func TestSendIdempotencyAnswersAsTheFirstTime(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	p := keyed("k")
	p.TimeToSend = "2027-03-04 12:00"
	first := e.send(t, p)
	if first.Status != sms.SendStatusScheduled {
		t.Fatalf("first send: status %s, want scheduled", first.Status)
	}
	if err := e.svc.SetCostPerSegment(e.ctx, partner, sms.Credits(5)); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.SetTimeZone(e.ctx, partner, "America/Los_Angeles"); err != nil {
		t.Fatal(err)
	}
	again, err := e.svc.Send(e.ctx, p)
	if err != nil {
		t.Fatalf("repeat: %v", err)
	}
	if d := cmp.Diff(replayOf(first), again); d != "" {
		t.Errorf("repeat after a cost and time zone change (-want +got):\n%s", d)
	}
	p.IdempotencyKey = ""
	_, err = e.svc.Send(e.ctx, p)
	wantCode(t, "the same request without the key", err, sms.CodeUnsupportedDataType, "timeToSend")
}

func TestIdempotencyKeyRules(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	for _, key := range []string{"a", " ", "order 42/x?y=z", strings.Repeat("~", sms.MaxIdempotencyKey), "550e8400-e29b-41d4-a716-446655440000"} {
		if err := sms.ValidateIdempotencyKey(key); err != nil {
			t.Errorf("ValidateIdempotencyKey(%q): %v", key, err)
		}
	}
	for _, key := range []string{"", strings.Repeat("k", sms.MaxIdempotencyKey+1), "tab\there", "new\nline", "del\x7f", "caf\u00e9", "nul\x00"} {
		wantCode(t, strconv.Quote(key), sms.ValidateIdempotencyKey(key), sms.CodeUnsupportedDataType, "Idempotency-Key")
		if key == "" {
			continue // an empty key is no key for Send
		}
		_, err := e.svc.Send(e.ctx, keyed(key))
		wantCode(t, "Send with "+strconv.Quote(key), err, sms.CodeUnsupportedDataType, "Idempotency-Key")
		_, err = e.svc.Bulk(e.ctx, &sms.BulkParams{Items: []*sms.BulkItem{bulkItem(kenya, "1")}, IdempotencyKey: key})
		wantCode(t, "Bulk with "+strconv.Quote(key), err, sms.CodeUnsupportedDataType, "Idempotency-Key")
	}
	if b := e.balance(t); b != sms.Credits(100) {
		t.Errorf("refused keys changed the balance to %s", b)
	}
}

// TestSendIdempotencyConcurrentRepeats sends one keyed request 16 times at
// once: one message, one debit, one answer.
func TestSendIdempotencyConcurrentRepeats(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	const n = 16
	results := make([]*sms.SendResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = e.svc.Send(e.ctx, keyed("same"))
		}()
	}
	close(start)
	wg.Wait()
	var first *sms.SendResult
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("send %d: %v", i, errs[i])
		}
		if !r.Replayed {
			if first != nil {
				t.Fatalf("two sends were not replays: %+v and %+v", first, r)
			}
			first = r
		}
	}
	if first == nil {
		t.Fatal("every send was a replay")
	}
	for i, r := range results {
		if r.Replayed {
			if d := cmp.Diff(replayOf(first), r); d != "" {
				t.Errorf("send %d (-want +got):\n%s", i, d)
			}
		}
	}
	if b := e.balance(t); b != sms.Credits(99) {
		t.Errorf("balance %s, want 99.00", b)
	}
	if m := e.runDue(t); m != 1 {
		t.Errorf("%d messages handed to the gateway, want 1", m)
	}
}

func bulkKeyed(key string, items ...*sms.BulkItem) *sms.BulkParams {
	return &sms.BulkParams{Items: items, IdempotencyKey: key}
}

func TestBulkIdempotencyKeyReplays(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	setLowCredit(t, e, sms.Credits(2))
	items := func() []*sms.BulkItem {
		return []*sms.BulkItem{
			bulkItem(kenya, "1"),
			bulkItem("0712345678", "2"), // refused before the store
			nil,
			{Err: sms.NewError(sms.CodeUnsupportedDataType, "mobile", "must be a string"), ClientSMSID: "4"},
			bulkItem(kenya, "5"),
			bulkItem(kenya, "6"), // refused for credit
			{PartnerID: partner, APIKey: "wrong-key-0123456789abcdef", ClientSMSID: "7", Mobile: kenya, Message: "x", Shortcode: "ACME"},
		}
	}
	first, err := e.svc.Bulk(e.ctx, bulkKeyed("batch-1", items()...))
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, r := range first.Results {
		codes = append(codes, r.Code)
	}
	if d := cmp.Diff([]int{200, 1003, 1009, 1009, 200, 1004, 1006}, codes); d != "" || first.Replayed {
		t.Fatalf("first bulk: codes (-want +got):\n%s replayed %v", d, first.Replayed)
	}
	if err := e.svc.SetCostPerSegment(e.ctx, partner, sms.Credits(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.TopUp(e.ctx, partner, sms.Credits(10)); err != nil {
		t.Fatal(err)
	}
	again, err := e.svc.Bulk(e.ctx, bulkKeyed("batch-1", items()...))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&sms.BulkResponse{Results: first.Results, Replayed: true}, again); d != "" {
		t.Errorf("repeat (-want +got):\n%s", d)
	}
	if b := e.balance(t); b != sms.Credits(10) {
		t.Errorf("balance %s, want 10.00 (2 spent by the first bulk, 10 added)", b)
	}
	if n := e.runDue(t); n != 2 {
		t.Errorf("%d messages handed to the gateway, want 2", n)
	}
	// A different list with the key: refused.
	changed := items()
	changed[3].Err = sms.NewError(sms.CodeUnsupportedDataType, "mobile", "must be a number")
	_, err = e.svc.Bulk(e.ctx, bulkKeyed("batch-1", changed...))
	wantCode(t, "bulk with another unreadable item", err, sms.CodeIdempotencyConflict, "Idempotency-Key")
	_, err = e.svc.Bulk(e.ctx, bulkKeyed("batch-1", items()[:6]...))
	wantCode(t, "bulk with an item less", err, sms.CodeIdempotencyConflict, "Idempotency-Key")
	// A single send with the key of a bulk: refused.
	_, err = e.svc.Send(e.ctx, keyed("batch-1"))
	wantCode(t, "single send with a bulk's key", err, sms.CodeIdempotencyConflict, "Idempotency-Key")
}

func TestBulkIdempotencyKeyNeedsOneAccount(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	other := &sms.BulkItem{PartnerID: "5678", APIKey: apikey, ClientSMSID: "2", Mobile: kenya, Message: "x", Shortcode: "ACME"}
	_, err := e.svc.Bulk(e.ctx, bulkKeyed("k", bulkItem(kenya, "1"), other))
	wantCode(t, "two partnerIDs", err, sms.CodeUnsupportedRequest, "Idempotency-Key")
	noPartner := bulkItem(kenya, "3")
	noPartner.PartnerID = ""
	_, err = e.svc.Bulk(e.ctx, bulkKeyed("k", bulkItem(kenya, "1"), noPartner))
	wantCode(t, "an item without partnerID", err, sms.CodeUnsupportedRequest, "Idempotency-Key")
	if b := e.balance(t); b != sms.Credits(100) {
		t.Errorf("refused bulks changed the balance to %s", b)
	}
	// Without a key the same items are fine; unreadable items do not count.
	if _, err := e.svc.Bulk(e.ctx, bulkKeyed("", bulkItem(kenya, "1"), other)); err != nil {
		t.Errorf("bulk of two accounts without a key: %v", err)
	}
	r, err := e.svc.Bulk(e.ctx, bulkKeyed("k", bulkItem(kenya, "1"), nil, &sms.BulkItem{Err: errors.New("unreadable")}))
	if err != nil || r.Results[0].Code != 200 {
		t.Errorf("keyed bulk of one account with unreadable items: %+v, %v", r, err)
	}
}

// TestBulkIdempotencyNotRememberedBeforeTheStore: a bulk of which no item
// reached the store stored nothing; a corrected repeat is a new request,
// and a repeat of a bulk whose every item failed authentication gets no
// remembered answer.
func TestBulkIdempotencyNotRememberedBeforeTheStore(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	r, err := e.svc.Bulk(e.ctx, bulkKeyed("k", bulkItem("0712345678", "1")))
	if err != nil || r.Results[0].Code != sms.CodeInvalidMobile || r.Replayed {
		t.Fatalf("bulk of a bad item: %+v, %v", r, err)
	}
	r, err = e.svc.Bulk(e.ctx, bulkKeyed("k", bulkItem(kenya, "1")))
	if err != nil || r.Results[0].Code != 200 || r.Replayed {
		t.Fatalf("corrected bulk: %+v, %v; want accepted afresh", r, err)
	}
	wrong := bulkItem(kenya, "1")
	wrong.APIKey = "wrong-key-0123456789abcdef"
	r, err = e.svc.Bulk(e.ctx, bulkKeyed("k", wrong))
	if err != nil || r.Results[0].Code != sms.CodeInvalidCredentials || r.Replayed {
		t.Errorf("used key with a wrong apikey: %+v, %v; want 1006, not the remembered answer", r, err)
	}
}

// lookupBlind is a store whose look-up of idempotency keys finds nothing,
// as when a concurrent request with the same key commits between the
// look-up and the accept: the accept then finds the record.
type lookupBlind struct{ sms.Store }

func (lookupBlind) SMSIdempotencyGet(context.Context, *sms.IdempotencyGetParams) (*sms.Idempotency, error) {
	return nil, messaging.ErrNotFound
}

func TestIdempotencyRecordFoundByTheAccept(t *testing.T) {
	t.Parallel()
	e := setup(t, &setupOpts{store: lookupBlind{memstore.New()}})
	first := e.send(t, keyed("k"))
	again := e.send(t, keyed("k"))
	if d := cmp.Diff(replayOf(first), again); d != "" {
		t.Errorf("repeat (-want +got):\n%s", d)
	}
	p := keyed("k")
	p.Message = "other"
	_, err := e.svc.Send(e.ctx, p)
	wantCode(t, "other request", err, sms.CodeIdempotencyConflict, "Idempotency-Key")

	b1, err := e.svc.Bulk(e.ctx, bulkKeyed("b", bulkItem(kenya, "1"), bulkItem(kenya, "2")))
	if err != nil {
		t.Fatal(err)
	}
	b2, err := e.svc.Bulk(e.ctx, bulkKeyed("b", bulkItem(kenya, "1"), bulkItem(kenya, "2")))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&sms.BulkResponse{Results: b1.Results, Replayed: true}, b2); d != "" {
		t.Errorf("bulk repeat (-want +got):\n%s", d)
	}
	_, err = e.svc.Bulk(e.ctx, bulkKeyed("b", bulkItem(kenya, "1")))
	wantCode(t, "other bulk", err, sms.CodeIdempotencyConflict, "Idempotency-Key")
	if b := e.balance(t); b != sms.Credits(97) {
		t.Errorf("balance %s, want 97.00 (one send, one bulk of two)", b)
	}
}

// The request hash an idempotency record keeps is compared with the hash
// of every later request under its key, so it must not change between
// releases: these literal values were computed by the release that
// introduced them and pin the encoding of the hashed fields.
func TestRequestHashIsFrozen(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	tests := []struct {
		name string
		send func(key string) error
		want string
	}{
		{"send", func(key string) error {
			_, err := e.svc.Send(e.ctx, &sms.SendParams{APIKey: apikey, PartnerID: partner, Mobile: kenya, Message: "Your code is 1234",
				Shortcode: "ACME", TimeToSend: "2026-03-04 15:00", PassType: "plain", IdempotencyKey: key})
			return err
		}, "77c6ef0b4483502f25d8f61775b7c7136ac93a335175ad633f93f6677b5e3a8b"},
		{"bulk with an unreadable item", func(key string) error {
			_, err := e.svc.Bulk(e.ctx, &sms.BulkParams{IdempotencyKey: key, Items: []*sms.BulkItem{
				{PartnerID: partner, APIKey: apikey, PassType: "plain", ClientSMSID: "c-1", Mobile: kenya, Message: "Hello", Shortcode: "ACME"},
				{Err: sms.NewError(sms.CodeUnsupportedDataType, "mobile", "must be a string"), Mobile: "", ClientSMSID: "c-2"},
				{PartnerID: partner, APIKey: apikey, Mobile: "254712345679", Message: "Hi", Shortcode: "ACME", TimeToSend: "2026-03-04 15:00"},
			}})
			return err
		}, "202bdffb59ae3fb0397e4b1fa98908d7f74a3b5db5245c3c56665be93a75edf6"},
	}
	for _, tc := range tests {
		key := "pin-" + tc.name
		if err := tc.send(key); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rec, err := e.store.SMSIdempotencyGet(e.ctx, &sms.IdempotencyGetParams{PartnerID: partner, Key: key, Now: e.clk.Now()})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := hex.EncodeToString(rec.RequestHash); got != tc.want {
			t.Errorf("%s: request hash %s, want %s", tc.name, got, tc.want)
		}
	}
}
