package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Idempotency records of the SMS store: SMSAcceptIdempotent accepts once
// per live key of an account, and its record, debits and messages are
// stored together.

// smsIdem returns a record of key in partner, made at created, live for
// 100 seconds.
func smsIdem(partner, key, hash string, created time.Time) *sms.Idempotency {
	return &sms.Idempotency{PartnerID: partner, Key: key, RequestHash: []byte(hash), Answer: []byte(`{"answer":"` + hash + `"}`),
		CreatedAt: created, ExpiresAt: created.Add(100 * time.Second)}
}

// idemOpts compare records and results: errors by errors.Is.
var idemOpts = cmp.Options{cmpopts.EquateErrors()}

// withResults returns a copy of rec with results.
func withResults(rec *sms.Idempotency, res []sms.AcceptResult) *sms.Idempotency {
	c := *rec
	c.Results = res
	return &c
}

func smsAcceptOnce(t *testing.T, s sms.Store, rec *sms.Idempotency, msgs ...*sms.Message) ([]sms.AcceptResult, *sms.Idempotency) {
	t.Helper()
	res, prev, err := s.SMSAcceptIdempotent(context.Background(), &sms.AcceptIdempotentParams{Record: rec, Messages: msgs})
	if err != nil {
		t.Fatalf("SMSAcceptIdempotent(%s, %s): %v", rec.PartnerID, rec.Key, err)
	}
	if prev == nil && len(res) != len(msgs) {
		t.Fatalf("SMSAcceptIdempotent(%s, %s): %d results for %d messages", rec.PartnerID, rec.Key, len(res), len(msgs))
	}
	if prev != nil && res != nil {
		t.Fatalf("SMSAcceptIdempotent(%s, %s): results %+v with a previous record", rec.PartnerID, rec.Key, res)
	}
	return res, prev
}

// smsStored returns the ids of the messages stored and not yet claimed,
// sorted, claiming them all.
func smsStored(t *testing.T, s sms.Store, token string) []string {
	t.Helper()
	got, err := s.SMSClaimDue(context.Background(), &sms.ClaimParams{Now: at(3600), LeaseUntil: at(7200), Token: token, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	ids := smsIDs(got)
	sort.Strings(ids)
	return ids
}

func testSMSIdempotentAcceptOnce(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(10))
	rec := smsIdem("a", "order-42", "h1", base)
	res, prev := smsAcceptOnce(t, s, rec,
		smsMessage("m1", "a", sms.Credits(1), sms.StatusQueued, base),
		smsMessage("m2", "a", sms.Credits(100), sms.StatusQueued, base)) // refused for credit
	if prev != nil {
		t.Fatalf("first use of the key: previous record %+v", prev)
	}
	if res[0].Err != nil || res[0].Number <= 0 || res[0].Balance != sms.Credits(9) || !errors.Is(res[1].Err, sms.ErrInsufficientCredit) || res[1].Balance != sms.Credits(9) {
		t.Fatalf("results %+v: want m1 accepted (balance 9.00), m2 refused for credit", res)
	}
	want := withResults(rec, res)
	got, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "order-42", Now: at(1)})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, idemOpts); d != "" {
		t.Errorf("SMSIdempotencyGet (-want +got):\n%s", d)
	}

	// The same key again, with the same request or another one: the first
	// record, and nothing accepted.
	for _, hash := range []string{"h1", "h2"} {
		res, prev := smsAcceptOnce(t, s, smsIdem("a", "order-42", hash, at(2)),
			smsMessage("again-"+hash, "a", sms.Credits(1), sms.StatusQueued, base))
		if res != nil {
			t.Errorf("repeat with hash %s accepted again: %+v", hash, res)
		}
		if d := cmp.Diff(want, prev, idemOpts); d != "" {
			t.Errorf("repeat with hash %s: previous record (-want +got):\n%s", hash, d)
		}
	}
	if c := smsCredit(t, s, "a"); c != sms.Credits(9) {
		t.Errorf("credit = %s after repeats, want 9.00 (debited once)", c)
	}
	if d := cmp.Diff([]string{"m1"}, smsStored(t, s, "audit")); d != "" {
		t.Errorf("stored messages (-want +got):\n%s", d)
	}

	_, err = s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "order-43", Now: at(1)})
	wantErr(t, "unknown key", err, messaging.ErrNotFound)
	_, err = s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "ORDER-42", Now: at(1)})
	wantErr(t, "key differing in case", err, messaging.ErrNotFound)
}

func testSMSIdempotencyScopedToAccount(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(10))
	smsAccount(t, s, "b", sms.Credits(10))
	resA, prev := smsAcceptOnce(t, s, smsIdem("a", "k", "ha", base), smsMessage("ma", "a", sms.Credits(1), sms.StatusQueued, base))
	if prev != nil {
		t.Fatalf("a's first use of k: previous record %+v", prev)
	}
	resB, prev := smsAcceptOnce(t, s, smsIdem("b", "k", "hb", base), smsMessage("mb", "b", sms.Credits(2), sms.StatusQueued, base))
	if prev != nil {
		t.Fatalf("b's first use of k, used by a: previous record %+v", prev)
	}
	if resA[0].Err != nil || resB[0].Err != nil || resA[0].Number == resB[0].Number {
		t.Fatalf("results a %+v, b %+v: want both accepted", resA, resB)
	}
	if a, b := smsCredit(t, s, "a"), smsCredit(t, s, "b"); a != sms.Credits(9) || b != sms.Credits(8) {
		t.Errorf("credits a %s, b %s; want 9.00 and 8.00", a, b)
	}
	for p, want := range map[string]*sms.Idempotency{
		"a": withResults(smsIdem("a", "k", "ha", base), resA),
		"b": withResults(smsIdem("b", "k", "hb", base), resB),
	} {
		got, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: p, Key: "k", Now: base})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got, idemOpts); d != "" {
			t.Errorf("record of k in %s (-want +got):\n%s", p, d)
		}
	}
}

func testSMSIdempotencyExpires(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(10))
	first := smsIdem("a", "k", "h1", base) // expires at +100
	if _, prev := smsAcceptOnce(t, s, first, smsMessage("m1", "a", sms.Credits(1), sms.StatusQueued, base)); prev != nil {
		t.Fatalf("first use: previous record %+v", prev)
	}
	if _, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "k", Now: at(99)}); err != nil {
		t.Errorf("record at +99, before it expires: %v", err)
	}
	_, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "k", Now: at(100)})
	wantErr(t, "record at +100, when it expires", err, messaging.ErrNotFound)
	// Still live at +99: a repeat then is refused.
	if res, prev := smsAcceptOnce(t, s, smsIdem("a", "k", "h2", at(99)), smsMessage("m2", "a", sms.Credits(1), sms.StatusQueued, base)); prev == nil {
		t.Fatalf("repeat at +99 accepted: %+v", res)
	}
	// Expired at +100: the key is free, and the new record replaces it.
	second := smsIdem("a", "k", "h3", at(100))
	res, prev := smsAcceptOnce(t, s, second, smsMessage("m3", "a", sms.Credits(1), sms.StatusQueued, base))
	if prev != nil {
		t.Fatalf("use of an expired key: previous record %+v", prev)
	}
	got, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "k", Now: at(150)})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(withResults(second, res), got, idemOpts); d != "" {
		t.Errorf("record after reuse (-want +got):\n%s", d)
	}
	if c := smsCredit(t, s, "a"); c != sms.Credits(8) {
		t.Errorf("credit = %s, want 8.00 (m1 and m3)", c)
	}
	if d := cmp.Diff([]string{"m1", "m3"}, smsStored(t, s, "audit")); d != "" {
		t.Errorf("stored messages (-want +got):\n%s", d)
	}
}

func testSMSIdempotentMissingAccount(t *testing.T, s sms.Store) {
	ctx := context.Background()
	_, _, err := s.SMSAcceptIdempotent(ctx, &sms.AcceptIdempotentParams{Record: smsIdem("ghost", "k", "h", base), Messages: []*sms.Message{smsMessage("m1", "ghost", sms.Credits(1), sms.StatusQueued, base)}})
	wantErr(t, "keyed accept for a missing account", err, messaging.ErrNotFound)
	_, err = s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "ghost", Key: "k", Now: base})
	wantErr(t, "record of a failed accept", err, messaging.ErrNotFound)
	// The account created later uses the key afresh.
	smsAccount(t, s, "ghost", sms.Credits(1))
	if res, prev := smsAcceptOnce(t, s, smsIdem("ghost", "k", "h", base), smsMessage("m2", "ghost", sms.Credits(1), sms.StatusQueued, base)); prev != nil || res[0].Err != nil {
		t.Errorf("first accept of the new account: %+v, previous record %+v", res, prev)
	}
}

// testSMSConcurrentIdempotentAccepts runs 16 accepts with the same key at
// once: exactly one accepts, the others get its record.
func testSMSConcurrentIdempotentAccepts(t *testing.T, s sms.Store) {
	const n = 16
	smsAccount(t, s, "a", sms.Credits(100))
	rec := smsIdem("a", "same", "h", base)
	type outcome struct {
		res  []sms.AcceptResult
		prev *sms.Idempotency
		err  error
	}
	outs := make([]outcome, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := *rec
			res, prev, err := s.SMSAcceptIdempotent(context.Background(), &sms.AcceptIdempotentParams{Record: &r, Messages: []*sms.Message{smsMessage(fmt.Sprintf("m%02d", i), "a", sms.Credits(3), sms.StatusQueued, base)}})
			outs[i] = outcome{res, prev, err}
		}()
	}
	close(start)
	wg.Wait()
	var winner []sms.AcceptResult
	winners := 0
	for i, o := range outs {
		if o.err != nil {
			t.Fatalf("accept %d: %v", i, o.err)
		}
		if o.prev == nil {
			winners++
			winner = o.res
		}
	}
	if winners != 1 {
		t.Fatalf("%d of %d concurrent accepts with one key accepted, want exactly 1", winners, n)
	}
	want := withResults(rec, winner)
	for i, o := range outs {
		if o.prev == nil {
			continue
		}
		if d := cmp.Diff(want, o.prev, idemOpts); d != "" {
			t.Errorf("accept %d: previous record (-want +got):\n%s", i, d)
		}
	}
	if c := smsCredit(t, s, "a"); c != sms.Credits(97) {
		t.Errorf("credit = %s, want 97.00 (one debit of 3.00)", c)
	}
	if got := smsStored(t, s, "audit"); len(got) != 1 {
		t.Errorf("stored messages %v, want exactly one", got)
	}
}

// testSMSIdempotentCancellationTruth runs keyed accepts of a few keys on a
// few accounts from many writers, a tenth of them cancelled mid-way
// (see cancel.go). Whatever was answered, a record and its debits and
// messages exist together or not at all: the messages stored are exactly
// those the records name as accepted, each account's credit is its
// opening credit less their cost, and every answer agrees with the record.
func testSMSIdempotentCancellationTruth(t *testing.T, s sms.Store) {
	ctx := context.Background()
	const accounts, keys = 4, 24
	opening := sms.Credits(100000)
	for a := range accounts {
		smsAccount(t, s, fmt.Sprintf("p%d", a), opening)
	}
	seed := cancelSeed(t)
	type answer struct {
		res  []sms.AcceptResult
		prev *sms.Idempotency
	}
	var mu sync.Mutex
	answers := map[[2]string][]answer{}
	runWriters(seed, func(rng *rand.Rand, w, i int) {
		c, cancel := maybeCancel(rng)
		defer cancel()
		p, k := fmt.Sprintf("p%d", rng.IntN(accounts)), fmt.Sprintf("k%d", rng.IntN(keys))
		var msgs []*sms.Message
		for j := range 1 + rng.IntN(3) {
			msgs = append(msgs, smsMessage(fmt.Sprintf("sms_%d_%d_%d", w, i, j), p, sms.Credit(1+rng.IntN(500)), sms.StatusQueued, at(0)))
		}
		rec := smsIdem(p, k, fmt.Sprintf("h_%d_%d", w, i), base)
		res, prev, err := s.SMSAcceptIdempotent(c, &sms.AcceptIdempotentParams{Record: rec, Messages: msgs})
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		answers[[2]string{p, k}] = append(answers[[2]string{p, k}], answer{res, prev})
	})

	wantStored := map[string][]int64{}
	for a := range accounts {
		p := fmt.Sprintf("p%d", a)
		for k := range keys {
			key := fmt.Sprintf("k%d", k)
			rec, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: p, Key: key, Now: base})
			if errors.Is(err, messaging.ErrNotFound) {
				if n := len(answers[[2]string{p, key}]); n > 0 {
					t.Errorf("%s %s: %d accepts answered, no record", p, key, n)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			accepted := 0
			for _, ans := range answers[[2]string{p, key}] {
				if ans.prev != nil {
					if d := cmp.Diff(rec, ans.prev, idemOpts); d != "" {
						t.Errorf("%s %s: a repeat got a record other than the stored one (-stored +answered):\n%s", p, key, d)
					}
					continue
				}
				accepted++
				if d := cmp.Diff(rec.Results, ans.res, idemOpts); d != "" {
					t.Errorf("%s %s: accept answered other results than its record's (-record +answered):\n%s", p, key, d)
				}
			}
			// The accept that wrote the record committed, so it answered
			// so; no other accept did.
			if accepted != 1 {
				t.Errorf("%s %s: %d accepts answered accepted for one record, want exactly 1", p, key, accepted)
			}
			for _, r := range rec.Results {
				if r.Err == nil {
					wantStored[p] = append(wantStored[p], r.Number)
				}
			}
		}
	}
	all, err := s.SMSClaimDue(ctx, &sms.ClaimParams{Now: at(10), LeaseUntil: at(3600), Token: "audit", Limit: cancelWriters * cancelOps * 3})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	stored := map[string]sms.Credit{}
	for _, m := range all {
		got[m.PartnerID] = append(got[m.PartnerID], m.Number)
		stored[m.PartnerID] += m.Cost
	}
	for _, ns := range []map[string][]int64{got, wantStored} {
		for _, v := range ns {
			sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		}
	}
	if d := cmp.Diff(wantStored, got); d != "" {
		t.Errorf("stored messages against those the records name (-records +stored):\n%s", d)
	}
	for a := range accounts {
		p := fmt.Sprintf("p%d", a)
		if c := smsCredit(t, s, p); c+stored[p] != opening {
			t.Errorf("account %s: credit %v + cost of stored messages %v = %v, want the opening credit %v", p, c, stored[p], c+stored[p], opening)
		}
	}
}
