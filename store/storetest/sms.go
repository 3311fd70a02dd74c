package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// RunSMS runs the conformance suite of sms.Store. newStore must return a
// new, empty store and arrange its closing with t.Cleanup.
func RunSMS(t *testing.T, newStore func(t *testing.T) sms.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s sms.Store)
	}{
		{"Accounts", testSMSAccounts},
		{"AcceptDebits", testSMSAcceptDebits},
		{"AcceptRunningBalance", testSMSAcceptRunningBalance},
		{"AcceptLargeBatch", testSMSAcceptLargeBatch},
		{"AcceptMissingAccountStoresNothing", testSMSAcceptMissingAccount},
		{"ConcurrentDebitsNeverGoNegative", testSMSConcurrentDebits},
		{"MessageRoundTripAndIsolation", testSMSMessageRoundTrip},
		{"ClaimOnlyDue", testSMSClaimOnlyDue},
		{"QueueStats", testSMSQueueStats},
		{"ConcurrentClaimersOneEach", testSMSConcurrentClaimers},
		{"Complete", testSMSComplete},
		{"ClaimMarksUnconfirmed", testSMSClaimMarksUnconfirmed},
		{"ConfirmUnknownHandOver", testSMSConfirm},
		{"Reports", testSMSReports},
		{"ReportPushQueuedWithTheReport", testSMSReportPush},
		{"MessageByGatewayID", testSMSMessageByGatewayID},
		{"CancellationTruth", testSMSCancellationTruth},
		{"IdempotentAcceptOnce", testSMSIdempotentAcceptOnce},
		{"IdempotencyScopedToAccount", testSMSIdempotencyScopedToAccount},
		{"IdempotencyExpires", testSMSIdempotencyExpires},
		{"IdempotentMissingAccountStoresNothing", testSMSIdempotentMissingAccount},
		{"ConcurrentIdempotentAcceptsAcceptOnce", testSMSConcurrentIdempotentAccepts},
		{"IdempotentCancellationTruth", testSMSIdempotentCancellationTruth},
		{"LongTextsKept", testSMSLongTextsKept},
		{"ContextCanceled", testSMSContextCanceled},
		{"LedgerRecordsEveryChange", testSMSLedgerRecordsEveryChange},
		{"TopUpReference", testSMSTopUpReference},
		{"TopUpOverflow", testSMSTopUpOverflow},
		{"ConcurrentTopUps", testSMSConcurrentTopUps},
		{"AccountList", testSMSAccountList},
		{"MessageList", testSMSMessageList},
		{"AccountCallback", testSMSAccountCallback},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

func smsAccount(t *testing.T, s sms.Store, id string, credit sms.Credit) {
	t.Helper()
	a := &sms.Account{PartnerID: id, KeyHash: []byte("hash-" + id), Senders: []string{"ACME"}, Credit: credit,
		TimeZone: "UTC", CostPerSegment: sms.Credits(1), CreatedAt: base, UpdatedAt: base}
	if err := s.SMSAccountCreate(context.Background(), a); err != nil {
		t.Fatalf("SMSAccountCreate(%s): %v", id, err)
	}
}

func smsMessage(id, partner string, cost sms.Credit, status string, due time.Time) *sms.Message {
	return &sms.Message{ID: id, PartnerID: partner, Mobile: "254712345678", Text: "hello " + id, Sender: "ACME",
		ClientSMSID: "c-" + id, Encoding: sms.EncodingGSM7, Segments: 1, Cost: cost, Status: status, DueAt: due,
		NetworkID: "254", CreatedAt: base, UpdatedAt: base}
}

func smsCredit(t *testing.T, s sms.Store, id string) sms.Credit {
	t.Helper()
	a, err := s.SMSAccountGet(context.Background(), id)
	if err != nil {
		t.Fatalf("SMSAccountGet(%s): %v", id, err)
	}
	return a.Credit
}

func smsAccept(t *testing.T, s sms.Store, msgs ...*sms.Message) []sms.AcceptResult {
	t.Helper()
	res, err := s.SMSAccept(context.Background(), msgs)
	if err != nil {
		t.Fatalf("SMSAccept: %v", err)
	}
	if len(res) != len(msgs) {
		t.Fatalf("SMSAccept: %d results for %d messages", len(res), len(msgs))
	}
	return res
}

func testSMSAccounts(t *testing.T, s sms.Store) {
	ctx := context.Background()
	a := &sms.Account{PartnerID: "1234", KeyHash: []byte("0123456789abcdef0123456789abcdef"), Senders: []string{"ZED", "ACME"},
		Credit: sms.Credits(100), TimeZone: "Africa/Nairobi", CostPerSegment: 150, CreatedAt: base, UpdatedAt: base}
	if err := s.SMSAccountCreate(ctx, a); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "duplicate account", s.SMSAccountCreate(ctx, &sms.Account{PartnerID: "1234", KeyHash: []byte("x"), TimeZone: "UTC", CreatedAt: base, UpdatedAt: base}), messaging.ErrConflict)
	_, err := s.SMSAccountGet(ctx, "missing")
	wantErr(t, "missing account", err, messaging.ErrNotFound)
	_, err = s.SMSAccountKey(ctx, "missing")
	wantErr(t, "key of a missing account", err, messaging.ErrNotFound)
	key, err := s.SMSAccountKey(ctx, "1234")
	if err != nil || cmp.Diff(a.KeyHash, key) != "" {
		t.Errorf("SMSAccountKey = %q, %v; want %q", key, err, a.KeyHash)
	}

	got, err := s.SMSAccountGet(ctx, "1234")
	if err != nil {
		t.Fatal(err)
	}
	want := *a
	want.Senders = []string{"ACME", "ZED"}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("SMSAccountGet (-want +got):\n%s", d)
	}

	tz, cost := "UTC", sms.Credit(200)
	got, err = s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "1234", AddSenders: []string{"ACME", "BETA"}, TimeZone: &tz, CostPerSegment: &cost, At: at(5)})
	if err != nil {
		t.Fatal(err)
	}
	want.Senders, want.TimeZone, want.CostPerSegment, want.UpdatedAt = []string{"ACME", "BETA", "ZED"}, "UTC", 200, at(5)
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("SMSAccountUpdate (-want +got):\n%s", d)
	}
	// Nil fields change nothing.
	got, err = s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "1234", At: at(6)})
	if err != nil {
		t.Fatal(err)
	}
	if got.TimeZone != "UTC" || got.CostPerSegment != 200 || len(got.Senders) != 3 {
		t.Errorf("empty update changed the account: %+v", got)
	}
	_, err = s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "missing", AddSenders: []string{"X"}, At: at(6)})
	wantErr(t, "update of a missing account", err, messaging.ErrNotFound)

	e, _, err := s.SMSCreditAdd(ctx, &sms.CreditAddParams{PartnerID: "1234", Amount: sms.Credit(1050), Max: sms.MaxCredit, At: at(7)})
	if err != nil {
		t.Fatal(err)
	}
	bal := e.Balance
	if bal != sms.Credit(11050) || smsCredit(t, s, "1234") != sms.Credit(11050) {
		t.Errorf("after top-up of 10.50: balance %s, stored %s; want 110.50", bal, smsCredit(t, s, "1234"))
	}
	_, _, err = s.SMSCreditAdd(ctx, &sms.CreditAddParams{PartnerID: "missing", Amount: 100, Max: sms.MaxCredit, At: at(7)})
	wantErr(t, "top-up of a missing account", err, messaging.ErrNotFound)
}

// testSMSAcceptRunningBalance: an account with enough for every message
// of a batch is debited at once, and each result still carries the credit
// after its own debit.
func testSMSAcceptRunningBalance(t *testing.T, s sms.Store) {
	smsAccount(t, s, "c", sms.Credits(10))
	run := smsAccept(t, s,
		smsMessage("c1", "c", sms.Credits(1), sms.StatusQueued, base),
		smsMessage("c2", "c", sms.Credits(2), sms.StatusQueued, base),
		smsMessage("c3", "c", sms.Credits(3), sms.StatusQueued, base),
	)
	for i, want := range []sms.Credit{sms.Credits(9), sms.Credits(7), sms.Credits(4)} {
		if run[i].Err != nil || run[i].Balance != want {
			t.Errorf("c%d: %+v, want accepted with balance %s", i+1, run[i], want)
		}
	}
}

func testSMSAcceptDebits(t *testing.T, s sms.Store) {
	smsAccount(t, s, "a", sms.Credits(3))
	smsAccount(t, s, "b", sms.Credits(10))
	res := smsAccept(t, s,
		smsMessage("m1", "a", sms.Credits(2), sms.StatusQueued, base),
		smsMessage("m2", "a", sms.Credits(2), sms.StatusQueued, base), // 1 left: refused
		smsMessage("m3", "b", sms.Credits(4), sms.StatusScheduled, at(60)),
		smsMessage("m4", "a", sms.Credits(1), sms.StatusQueued, base), // fits in what is left
	)
	if res[0].Err != nil || res[2].Err != nil || res[3].Err != nil {
		t.Fatalf("results %+v: want m1, m3, m4 accepted", res)
	}
	if !errors.Is(res[1].Err, sms.ErrInsufficientCredit) || res[1].Number != 0 {
		t.Errorf("m2: %+v, want ErrInsufficientCredit and no number", res[1])
	}
	if res[0].Balance != sms.Credits(1) || res[2].Balance != sms.Credits(6) || res[3].Balance != 0 {
		t.Errorf("balances after debits: %s %s %s, want 1.00 6.00 0.00", res[0].Balance, res[2].Balance, res[3].Balance)
	}
	nums := map[int64]bool{}
	for _, i := range []int{0, 2, 3} {
		if res[i].Number <= 0 || nums[res[i].Number] {
			t.Errorf("number %d of result %d is not positive and unique", res[i].Number, i)
		}
		nums[res[i].Number] = true
	}
	if c := smsCredit(t, s, "a"); c != 0 {
		t.Errorf("credit of a = %s, want 0.00", c)
	}
	if c := smsCredit(t, s, "b"); c != sms.Credits(6) {
		t.Errorf("credit of b = %s, want 6.00", c)
	}
	// A refused debit takes nothing: with 0 left, a message of 0.01 is
	// refused and the credit stays 0.
	res = smsAccept(t, s, smsMessage("m5", "a", 1, sms.StatusQueued, base))
	if !errors.Is(res[0].Err, sms.ErrInsufficientCredit) || smsCredit(t, s, "a") != 0 {
		t.Errorf("debit of 0.01 from 0.00: %+v, credit %s", res[0], smsCredit(t, s, "a"))
	}
	// The refused message was not stored: only three claimable messages
	// exist (m3 is due at +60).
	got, err := s.SMSClaimDue(context.Background(), &sms.ClaimParams{Now: at(3600), LeaseUntil: at(3700), Token: "t", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("claimed %d messages, want the 3 accepted ones", len(got))
	}
}

func testSMSAcceptMissingAccount(t *testing.T, s sms.Store) {
	smsAccount(t, s, "a", sms.Credits(5))
	_, err := s.SMSAccept(context.Background(), []*sms.Message{
		smsMessage("m1", "a", sms.Credits(1), sms.StatusQueued, base),
		smsMessage("m2", "ghost", sms.Credits(1), sms.StatusQueued, base),
	})
	wantErr(t, "accept for a missing account", err, messaging.ErrNotFound)
	if c := smsCredit(t, s, "a"); c != sms.Credits(5) {
		t.Errorf("credit of a = %s after a failed batch, want 5.00 (nothing applied)", c)
	}
	got, err := s.SMSClaimDue(context.Background(), &sms.ClaimParams{Now: at(10), LeaseUntil: at(70), Token: "t", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("a failed batch stored %d messages", len(got))
	}
}

func testSMSConcurrentDebits(t *testing.T, s sms.Store) {
	const n = 50
	smsAccount(t, s, "a", sms.Credits(25))
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, refused := 0, 0
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.SMSAccept(context.Background(), []*sms.Message{smsMessage(fmt.Sprintf("m%02d", i), "a", sms.Credits(1), sms.StatusQueued, base)})
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if res[0].Balance < 0 {
				errs <- fmt.Errorf("balance went negative: %s", res[0].Balance)
			}
			if res[0].Err == nil {
				accepted++
			} else if errors.Is(res[0].Err, sms.ErrInsufficientCredit) {
				refused++
			} else {
				errs <- res[0].Err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if accepted != 25 || refused != 25 {
		t.Errorf("accepted %d, refused %d; want 25 and 25", accepted, refused)
	}
	if c := smsCredit(t, s, "a"); c != 0 {
		t.Errorf("credit = %s, want 0.00", c)
	}
}

func testSMSMessageRoundTrip(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(5))
	smsAccount(t, s, "b", sms.Credits(5))
	m := smsMessage("m1", "a", 250, sms.StatusScheduled, at(90))
	m.Text, m.Encoding, m.Segments = "Habari 👋 €", sms.EncodingUCS2, 1
	res := smsAccept(t, s, m)
	got, err := s.SMSMessageGet(ctx, "a", res[0].Number)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Number = res[0].Number
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("SMSMessageGet (-want +got):\n%s", d)
	}
	_, err = s.SMSMessageGet(ctx, "b", res[0].Number)
	wantErr(t, "message of another account", err, messaging.ErrNotFound)
	_, err = s.SMSMessageGet(ctx, "a", res[0].Number+1000)
	wantErr(t, "unknown number", err, messaging.ErrNotFound)
}

func smsClaim(t *testing.T, s sms.Store, now time.Time, token string, limit int) []*sms.Message {
	t.Helper()
	got, err := s.SMSClaimDue(context.Background(), &sms.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Token: token, Limit: limit})
	if err != nil {
		t.Fatalf("SMSClaimDue: %v", err)
	}
	return got
}

func smsIDs(ms []*sms.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func testSMSClaimOnlyDue(t *testing.T, s sms.Store) {
	smsAccount(t, s, "a", sms.Credits(10))
	smsAccept(t, s,
		smsMessage("later", "a", 100, sms.StatusScheduled, at(60)),
		smsMessage("now1", "a", 100, sms.StatusQueued, at(0)),
		smsMessage("now2", "a", 100, sms.StatusQueued, at(0)),
		smsMessage("soon", "a", 100, sms.StatusScheduled, at(30)),
	)
	if got := smsClaim(t, s, at(0), "t1", 1); len(got) != 1 || got[0].ID != "now1" {
		t.Fatalf("first claim at +0 limit 1: %v, want [now1]", smsIDs(got))
	}
	got := smsClaim(t, s, at(0), "t2", 10)
	if d := cmp.Diff([]string{"now2"}, smsIDs(got)); d != "" {
		t.Fatalf("claim at +0 (-want +got):\n%s", d)
	}
	if m := got[0]; m.Status != sms.StatusSending || m.ClaimToken != "t2" || m.Attempts != 1 || !m.DueAt.Equal(at(60)) {
		t.Errorf("claimed message: status %s token %s attempts %d due %s; want sending, t2, 1, lease end %s", m.Status, m.ClaimToken, m.Attempts, m.DueAt, at(60))
	}
	if got := smsClaim(t, s, at(29), "t3", 10); len(got) != 0 {
		t.Errorf("claim at +29: %v, want nothing due", smsIDs(got))
	}
	if got := smsClaim(t, s, at(30), "t4", 10); len(got) != 1 || got[0].ID != "soon" {
		t.Errorf("claim at +30: %v, want [soon]", smsIDs(got))
	}
	// At +60 "later" is due and the leases of now1 and now2 (claimed at +0
	// for a minute) ran out: their claimer is presumed dead.
	got = smsClaim(t, s, at(60), "t5", 10)
	if d := cmp.Diff([]string{"now1", "now2", "later"}, smsSortedIDs(got, []string{"now1", "now2", "later"})); d != "" {
		t.Errorf("claim at +60 (-want +got):\n%s", d)
	}
	for _, m := range got {
		if m.ID == "now1" && m.Attempts != 2 {
			t.Errorf("reclaimed now1 has %d attempts, want 2", m.Attempts)
		}
	}
	if got := smsClaim(t, s, at(61), "t6", 10); len(got) != 0 {
		t.Errorf("claim at +61 while every lease holds: %v", smsIDs(got))
	}
}

// smsSortedIDs returns the ids of ms in the order of want (unknown ids last),
// since a claim's order is the store's.
func smsSortedIDs(ms []*sms.Message, want []string) []string {
	set := map[string]bool{}
	for _, m := range ms {
		set[m.ID] = true
	}
	out := []string{}
	for _, id := range want {
		if set[id] {
			out = append(out, id)
			delete(set, id)
		}
	}
	for id := range set {
		out = append(out, id)
	}
	return out
}

func testSMSConcurrentClaimers(t *testing.T, s sms.Store) {
	const n, workers = 60, 6
	smsAccount(t, s, "a", sms.Credits(n))
	var msgs []*sms.Message
	for i := range n {
		msgs = append(msgs, smsMessage(fmt.Sprintf("m%02d", i), "a", sms.Credits(1), sms.StatusQueued, at(i%5)))
	}
	smsAccept(t, s, msgs...)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.SMSClaimDue(context.Background(), &sms.ClaimParams{Now: at(10), LeaseUntil: at(3600), Token: fmt.Sprintf("w%d", w), Limit: 7})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, m := range got {
					seen[m.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d distinct messages claimed, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s claimed %d times", id, c)
		}
	}
}

func testSMSComplete(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(10))
	res := smsAccept(t, s,
		smsMessage("ok", "a", sms.Credits(1), sms.StatusQueued, at(0)),
		smsMessage("retry", "a", sms.Credits(2), sms.StatusQueued, at(0)),
		smsMessage("fail", "a", sms.Credits(3), sms.StatusQueued, at(0)),
		smsMessage("held", "a", sms.Credits(1), sms.StatusQueued, at(0)),
	)
	if c := smsCredit(t, s, "a"); c != sms.Credits(3) {
		t.Fatalf("credit after accept = %s, want 3.00", c)
	}
	claimed := smsClaim(t, s, at(1), "tok", 10)
	if len(claimed) != 4 {
		t.Fatalf("claimed %d, want 4", len(claimed))
	}
	held, err := s.SMSMessageGet(ctx, "a", res[3].Number)
	if err != nil {
		t.Fatal(err)
	}
	if held.Status != sms.StatusSending || held.ClaimToken != "tok" {
		t.Fatalf("claimed message: status %s token %q, want sending under tok", held.Status, held.ClaimToken)
	}
	errs, err := s.SMSComplete(ctx, []*sms.Completion{
		{Number: res[0].Number, Token: "tok", Status: sms.StatusSent, GatewayMessageID: "gw-1", NetworkID: "1", At: at(2)},
		{Number: res[1].Number, Token: "tok", Status: sms.StatusQueued, RetryAt: at(100), FailureReason: "timeout", At: at(2)},
		{Number: res[2].Number, Token: "tok", Status: sms.StatusFailed, FailureReason: "[1003] Invalid mobile number", At: at(2)},
		// A claim lost to another: "held" is still sending, under "tok".
		{Number: res[3].Number, Token: "other", Status: sms.StatusFailed, FailureReason: "lost", At: at(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if errs[i] != nil {
			t.Errorf("completion %d: %v", i, errs[i])
		}
	}
	wantErr(t, "completion with another claim's token", errs[3], driver.ErrStale)
	if got, err := s.SMSMessageGet(ctx, "a", res[3].Number); err != nil {
		t.Fatal(err)
	} else if d := cmp.Diff(held, got); d != "" {
		t.Errorf("message completed with another claim's token changed (-want +got):\n%s", d)
	}
	// The claim's own token still completes it.
	errs, err = s.SMSComplete(ctx, []*sms.Completion{{Number: res[3].Number, Token: "tok", Status: sms.StatusSent, GatewayMessageID: "gw-4", NetworkID: "1", At: at(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil {
		t.Errorf("completion under the claim's token after a stale one: %v", errs[0])
	}

	ok, err := s.SMSMessageGet(ctx, "a", res[0].Number)
	if err != nil {
		t.Fatal(err)
	}
	if ok.Status != sms.StatusSent || ok.GatewayMessageID != "gw-1" || ok.NetworkID != "1" || ok.SentAt == nil || !ok.SentAt.Equal(at(2)) || ok.ClaimToken != "" {
		t.Errorf("sent message: %+v", ok)
	}
	rt, _ := s.SMSMessageGet(ctx, "a", res[1].Number)
	if rt.Status != sms.StatusQueued || !rt.DueAt.Equal(at(100)) || rt.FailureReason != "timeout" {
		t.Errorf("retried message: status %s due %s reason %q", rt.Status, rt.DueAt, rt.FailureReason)
	}
	fl, _ := s.SMSMessageGet(ctx, "a", res[2].Number)
	if fl.Status != sms.StatusFailed || fl.FailureReason != "[1003] Invalid mobile number" {
		t.Errorf("failed message: status %s reason %q", fl.Status, fl.FailureReason)
	}
	// The failed message's 3.00 went back; the stale completion refunded
	// nothing.
	if c := smsCredit(t, s, "a"); c != sms.Credits(6) {
		t.Errorf("credit after a failure = %s, want 6.00", c)
	}
	// Completing again (a second answer for the same claim) is stale.
	errs, err = s.SMSComplete(ctx, []*sms.Completion{{Number: res[2].Number, Token: "tok", Status: sms.StatusFailed, At: at(3)}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "second completion", errs[0], driver.ErrStale)
	if c := smsCredit(t, s, "a"); c != sms.Credits(6) {
		t.Errorf("credit after a repeated failure = %s, want 6.00 (refunded once)", c)
	}
	// Only the retry is claimable again, and only when its time comes.
	if got := smsClaim(t, s, at(99), "t2", 10); len(got) != 0 {
		t.Errorf("claim before the retry time: %v", smsIDs(got))
	}
	if got := smsClaim(t, s, at(100), "t3", 10); len(got) != 1 || got[0].ID != "retry" || got[0].Attempts != 2 {
		t.Errorf("claim at the retry time: %v", smsIDs(got))
	}
}

func testSMSReports(t *testing.T, s sms.Store) {
	ctx := context.Background()
	saveReport := func(ctx context.Context, p *sms.ReportSaveParams) error {
		_, err := s.SMSReportSave(ctx, p)
		return err
	}
	smsAccount(t, s, "a", sms.Credits(5))
	smsAccount(t, s, "b", sms.Credits(5))
	res := smsAccept(t, s, smsMessage("m1", "a", 100, sms.StatusQueued, base))
	n := res[0].Number
	wantErr(t, "report for another account", saveReport(ctx, &sms.ReportSaveParams{PartnerID: "b", Number: n, Report: &sms.Report{Description: sms.DeliveredToTerminal}}), messaging.ErrNotFound)
	wantErr(t, "report for an unknown number", saveReport(ctx, &sms.ReportSaveParams{PartnerID: "a", Number: n + 1000, Report: &sms.Report{Description: sms.DeliveredToTerminal}}), messaging.ErrNotFound)

	interim := &sms.Report{Status: 2, Description: sms.DeliverySentToNetwork, NetworkID: "254"}
	if _, err := s.SMSReportSave(ctx, &sms.ReportSaveParams{PartnerID: "a", Number: n, Report: interim}); err != nil {
		t.Fatal(err)
	}
	got, err := s.SMSMessageGet(ctx, "a", n)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(interim, got.Report); d != "" {
		t.Errorf("interim report (-want +got):\n%s", d)
	}
	final := &sms.Report{Status: 32, Description: sms.DeliveredToTerminal, NetworkID: "1", Time: at(42)}
	if _, err := s.SMSReportSave(ctx, &sms.ReportSaveParams{PartnerID: "a", Number: n, Report: final}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.SMSMessageGet(ctx, "a", n)
	if d := cmp.Diff(final, got.Report); d != "" {
		t.Errorf("final report (-want +got):\n%s", d)
	}
	// A final report is never replaced, by an interim one or another
	// final one: the save changes nothing and succeeds.
	for _, later := range []*sms.Report{interim, {Status: 4, Description: sms.DeliveryImpossible, NetworkID: "9", Time: at(50)}} {
		if _, err := s.SMSReportSave(ctx, &sms.ReportSaveParams{PartnerID: "a", Number: n, Report: later}); err != nil {
			t.Errorf("saving %s over a final report: %v", later.Description, err)
		}
		got, _ = s.SMSMessageGet(ctx, "a", n)
		if d := cmp.Diff(final, got.Report); d != "" {
			t.Errorf("after saving %s over the final report (-want +got):\n%s", later.Description, d)
		}
	}
	wantErr(t, "report for another account over a final one", saveReport(ctx, &sms.ReportSaveParams{PartnerID: "b", Number: n, Report: interim}), messaging.ErrNotFound)
	if _, err := s.SMSMessageGet(ctx, "b", n); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("account b reads a's message: %v", err)
	}
}

// testSMSContextCanceled calls every method of sms.Store with a cancelled
// context: each returns context.Canceled, and none of the writes (claims
// and completions included) changes anything.
func testSMSContextCanceled(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(10))
	res := smsAccept(t, s, smsMessage("m1", "a", 100, sms.StatusQueued, at(0)), smsMessage("m2", "a", 100, sms.StatusQueued, at(0)))
	claimed := smsClaim(t, s, at(0), "t1", 1)
	if len(claimed) != 1 {
		t.Fatalf("claim: %v, want one message", smsIDs(claimed))
	}
	c := claimed[0]
	type state struct {
		Account  *sms.Account
		Key      []byte
		Messages []*sms.Message
		NewOne   bool
	}
	read := func() state {
		t.Helper()
		var st state
		var err error
		if st.Account, err = s.SMSAccountGet(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if st.Key, err = s.SMSAccountKey(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			m, err := s.SMSMessageGet(ctx, "a", r.Number)
			if err != nil {
				t.Fatal(err)
			}
			st.Messages = append(st.Messages, m)
		}
		_, err = s.SMSAccountGet(ctx, "b")
		if err != nil && !errors.Is(err, messaging.ErrNotFound) {
			t.Fatal(err)
		}
		st.NewOne = err == nil
		return st
	}
	before := read()
	// The claim is made when, had it changed anything, the live claim
	// below would find nothing: both messages are due, c's lease ended.
	later := at(100)
	tz := "Africa/Nairobi"
	checkCanceled(t, []canceledCall{
		{"SMSAccountCreate", func(ctx context.Context) error {
			return s.SMSAccountCreate(ctx, &sms.Account{PartnerID: "b", KeyHash: []byte("hash-b"), Senders: []string{"ACME"}, Credit: sms.Credits(1),
				TimeZone: "UTC", CostPerSegment: sms.Credits(1), CreatedAt: base, UpdatedAt: base})
		}},
		{"SMSAccountGet", func(ctx context.Context) error { _, err := s.SMSAccountGet(ctx, "a"); return err }},
		{"SMSAccountKey", func(ctx context.Context) error { _, err := s.SMSAccountKey(ctx, "a"); return err }},
		{"SMSMessageByGatewayID", func(ctx context.Context) error { _, err := s.SMSMessageByGatewayID(ctx, "gw-1"); return err }},
		{"SMSAccountUpdate", func(ctx context.Context) error {
			_, err := s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "a", AddSenders: []string{"OTHER"}, TimeZone: &tz, At: at(3)})
			return err
		}},
		{"SMSCreditAdd", func(ctx context.Context) error {
			_, _, err := s.SMSCreditAdd(ctx, &sms.CreditAddParams{PartnerID: "a", Amount: sms.Credits(5), Max: sms.MaxCredit, At: at(3)})
			return err
		}},
		{"SMSLedger", func(ctx context.Context) error {
			_, err := s.SMSLedger(ctx, &sms.LedgerParams{PartnerID: "a", Limit: 10})
			return err
		}},
		{"SMSAccept", func(ctx context.Context) error {
			_, err := s.SMSAccept(ctx, []*sms.Message{smsMessage("m3", "a", 100, sms.StatusQueued, at(0))})
			return err
		}},
		{"SMSAcceptIdempotent", func(ctx context.Context) error {
			_, _, err := s.SMSAcceptIdempotent(ctx, &sms.AcceptIdempotentParams{Record: smsIdem("a", "k", "h", at(3)),
				Messages: []*sms.Message{smsMessage("m4", "a", 100, sms.StatusQueued, at(0))}})
			return err
		}},
		{"SMSIdempotencyGet", func(ctx context.Context) error {
			_, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "k", Now: at(3)})
			return err
		}},
		{"SMSMessageGet", func(ctx context.Context) error { _, err := s.SMSMessageGet(ctx, "a", c.Number); return err }},
		{"SMSClaimDue", func(ctx context.Context) error {
			_, err := s.SMSClaimDue(ctx, &sms.ClaimParams{Now: later, LeaseUntil: later.Add(time.Minute), Token: "x", Limit: 10})
			return err
		}},
		{"SMSComplete", func(ctx context.Context) error {
			_, err := s.SMSComplete(ctx, []*sms.Completion{{Number: c.Number, Token: "t1", Status: sms.StatusSent, GatewayMessageID: "gw-1", At: at(3)}})
			return err
		}},
		{"SMSReportSave", func(ctx context.Context) error {
			_, err := s.SMSReportSave(ctx, &sms.ReportSaveParams{PartnerID: "a", Number: c.Number, Report: &sms.Report{Status: 32, Description: sms.DeliveredToTerminal}})
			return err
		}},
	})

	if d := cmp.Diff(before, read()); d != "" {
		t.Errorf("calls with a cancelled context changed the store (-before +after):\n%s", d)
	}
	if _, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "a", Key: "k", Now: at(3)}); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("idempotency record after a cancelled keyed accept: %v, want ErrNotFound", err)
	}
	got := smsClaim(t, s, later, "t2", 10)
	if d := cmp.Diff([]string{"m1", "m2"}, smsSortedIDs(got, []string{"m1", "m2"})); d != "" {
		t.Errorf("claim after cancelled claims, completions and accepts (-want +got):\n%s", d)
	}
}

// testSMSMessageByGatewayID: a sent message is found by the gateway's id,
// whatever its account; not before it is sent, not by an empty id; the
// newest when the gateway gave an id twice.
func testSMSMessageByGatewayID(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(5))
	smsAccount(t, s, "b", sms.Credits(5))
	res := smsAccept(t, s, smsMessage("m1", "a", 100, sms.StatusQueued, base), smsMessage("m2", "b", 100, sms.StatusQueued, base),
		smsMessage("m3", "a", 100, sms.StatusQueued, base), smsMessage("m4", "a", 100, sms.StatusQueued, base))
	if _, err := s.SMSMessageByGatewayID(ctx, ""); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("by an empty id before any send: %v, want ErrNotFound", err)
	}
	if got := smsClaim(t, s, at(1), "tok", 10); len(got) != 4 {
		t.Fatalf("claimed %d, want 4", len(got))
	}
	errs, err := s.SMSComplete(ctx, []*sms.Completion{
		{Number: res[0].Number, Token: "tok", Status: sms.StatusSent, GatewayMessageID: "gw-1", NetworkID: "1", At: at(2)},
		{Number: res[1].Number, Token: "tok", Status: sms.StatusSent, GatewayMessageID: "gw-2", NetworkID: "1", At: at(2)},
		{Number: res[2].Number, Token: "tok", Status: sms.StatusQueued, RetryAt: at(100), FailureReason: "timeout", At: at(2)},
		{Number: res[3].Number, Token: "tok", Status: sms.StatusSent, GatewayMessageID: "gw-dup", At: at(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range errs {
		if e != nil {
			t.Fatalf("completion %d: %v", i, e)
		}
	}
	for id, want := range map[string]string{"gw-1": "m1", "gw-2": "m2", "gw-dup": "m4"} {
		m, err := s.SMSMessageByGatewayID(ctx, id)
		if err != nil {
			t.Errorf("SMSMessageByGatewayID(%s): %v", id, err)
			continue
		}
		if m.ID != want || m.GatewayMessageID != id || m.Status != sms.StatusSent {
			t.Errorf("SMSMessageByGatewayID(%s) = %s (%s, %s), want %s", id, m.ID, m.GatewayMessageID, m.Status, want)
		}
	}
	for _, id := range []string{"", "gw-3", "GW-1", "gw-"} {
		if m, err := s.SMSMessageByGatewayID(ctx, id); !errors.Is(err, messaging.ErrNotFound) {
			t.Errorf("SMSMessageByGatewayID(%q) = %v, %v; want ErrNotFound", id, m, err)
		}
	}
	// The gateway gives an id it gave before: the newest message has it.
	res2 := smsAccept(t, s, smsMessage("m5", "b", 100, sms.StatusQueued, at(3)))
	if got := smsClaim(t, s, at(4), "tok2", 10); len(got) != 1 {
		t.Fatalf("claimed %d, want 1", len(got))
	}
	if _, err := s.SMSComplete(ctx, []*sms.Completion{{Number: res2[0].Number, Token: "tok2", Status: sms.StatusSent, GatewayMessageID: "gw-1", At: at(5)}}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.SMSMessageByGatewayID(ctx, "gw-1"); err != nil || m.ID != "m5" || m.PartnerID != "b" {
		t.Errorf("SMSMessageByGatewayID(gw-1) after the id came again = %v, %v; want m5 of b", m, err)
	}
}

// testSMSQueueStats checks the scheduler's queue figures: scheduled,
// queued and sending messages are pending, those due at Now are due (a
// claim's lease moves a message's DueAt to its end), and finished ones
// are not counted.
func testSMSQueueStats(t *testing.T, s sms.Store) {
	ctx := context.Background()
	stats := func(now time.Time) *sms.QueueStats {
		t.Helper()
		st, err := s.SMSQueueStats(ctx, &sms.QueueStatsParams{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	tp := func(sec int) *time.Time { v := at(sec); return &v }
	if d := cmp.Diff(&sms.QueueStats{}, stats(at(0))); d != "" {
		t.Errorf("empty store (-want +got):\n%s", d)
	}
	smsAccount(t, s, "a", sms.Credits(10))
	smsAccept(t, s,
		smsMessage("later", "a", 100, sms.StatusScheduled, at(60)),
		smsMessage("now1", "a", 100, sms.StatusQueued, at(2)),
		smsMessage("now2", "a", 100, sms.StatusQueued, at(5)),
	)
	for _, tc := range []struct {
		name string
		now  time.Time
		want *sms.QueueStats
	}{
		{"before any is due", at(0), &sms.QueueStats{Pending: 3}},
		{"at exactly the first", at(2), &sms.QueueStats{Pending: 3, Due: 1, OldestDueAt: tp(2)}},
		{"at 10", at(10), &sms.QueueStats{Pending: 3, Due: 2, OldestDueAt: tp(2)}},
		{"at 60", at(60), &sms.QueueStats{Pending: 3, Due: 3, OldestDueAt: tp(2)}},
	} {
		if d := cmp.Diff(tc.want, stats(tc.now)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	got := smsClaim(t, s, at(10), "t1", 1) // now1, leased until at(70)
	if len(got) != 1 {
		t.Fatalf("claim: %v", smsIDs(got))
	}
	if d := cmp.Diff(&sms.QueueStats{Pending: 3, Due: 1, OldestDueAt: tp(5)}, stats(at(10))); d != "" {
		t.Errorf("after a claim (-want +got):\n%s", d)
	}
	errs, err := s.SMSComplete(ctx, []*sms.Completion{{Number: got[0].Number, Token: "t1", Status: sms.StatusSent, GatewayMessageID: "gw-1", At: at(11)}})
	if err != nil || errs[0] != nil {
		t.Fatalf("complete: %v %v", errs, err)
	}
	if d := cmp.Diff(&sms.QueueStats{Pending: 2, Due: 1, OldestDueAt: tp(5)}, stats(at(10))); d != "" {
		t.Errorf("after a message was sent (-want +got):\n%s", d)
	}
}

// testSMSAccountCallback: an account has no callback endpoint until
// SMSAccountUpdate sets one; an update of other fields keeps it; "" removes
// it; Get and List read it.
func testSMSAccountCallback(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "p1", sms.Credits(1))
	get := func() string {
		t.Helper()
		a, err := s.SMSAccountGet(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		list, err := s.SMSAccountList(ctx, &sms.AccountListParams{Limit: 10})
		if err != nil || len(list) != 1 || list[0].CallbackEndpointID != a.CallbackEndpointID {
			t.Errorf("SMSAccountList = %v, %v; want the account with callback %q", list, err, a.CallbackEndpointID)
		}
		return a.CallbackEndpointID
	}
	if got := get(); got != "" {
		t.Errorf("new account: callback %q, want none", got)
	}
	we := "we_1"
	a, err := s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "p1", CallbackEndpointID: &we, At: base})
	if err != nil || a.CallbackEndpointID != "we_1" {
		t.Fatalf("SMSAccountUpdate = %+v, %v; want callback we_1", a, err)
	}
	tz := "Africa/Nairobi"
	if _, err := s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "p1", TimeZone: &tz, At: base}); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "we_1" {
		t.Errorf("after another update: callback %q, want we_1", got)
	}
	none := ""
	if _, err := s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "p1", CallbackEndpointID: &none, At: base}); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "" {
		t.Errorf("after removal: callback %q, want none", got)
	}
}

// testSMSReportPush: a report's push is queued with the report, in the
// outbox of the store's SMSOutbox, by the save that stores it (once: not
// by a save over a final report), for its endpoint only when that endpoint
// is enabled; an unknown message queues nothing. A store that is no
// sms.OutboxStore is never given a push.
func testSMSReportPush(t *testing.T, s sms.Store) {
	ctx := context.Background()
	obs, ok := s.(sms.OutboxStore)
	if !ok {
		t.Skipf("%T is no sms.OutboxStore", s)
	}
	ms := obs.SMSOutbox()
	mustWorkspace(t, ms, "cb")
	off := endpoint("cb", "we_off", 2)
	for _, e := range []*messaging.WebhookEndpoint{endpoint("cb", "we_a", 1), off} {
		if err := ms.WebhookEndpointCreate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	disabled := false
	if _, err := ms.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "cb", ID: "we_off", Enabled: &disabled, At: at(5)}); err != nil {
		t.Fatal(err)
	}
	smsAccount(t, s, "a", sms.Credits(5))
	res := smsAccept(t, s, smsMessage("m1", "a", 1, sms.StatusQueued, base), smsMessage("m2", "a", 1, sms.StatusQueued, base))
	n1, n2 := res[0].Number, res[1].Number
	push := func(evID, endpointID string) *driver.WebhookQueueParams {
		return &driver.WebhookQueueParams{EndpointID: endpointID, Event: &driver.EventRecord{ID: evID, WorkspaceID: "cb", MessageID: "m1",
			Type: sms.EventDeliveryReport, Payload: []byte(`{"id":"` + evID + `"}`), CreatedAt: at(10)}}
	}
	final := &sms.Report{Status: 32, Description: sms.DeliveredToTerminal, NetworkID: "1", Time: at(42)}
	other := &sms.Report{Status: 4, Description: sms.DeliveryImpossible, NetworkID: "1", Time: at(43)}
	for _, c := range []struct {
		name       string
		number     int64
		report     *sms.Report
		push       *driver.WebhookQueueParams
		wantPushed bool
		wantErr    error
		wantReport *sms.Report
	}{
		{"first final report", n1, final, push("evt_1", "we_a"), true, nil, final},
		{"final report over a final one", n1, other, push("evt_2", "we_a"), false, nil, final},
		{"disabled endpoint", n2, final, push("evt_3", "we_off"), false, nil, final},
		{"unknown message", n2 + 1000, final, push("evt_4", "we_a"), false, messaging.ErrNotFound, nil},
	} {
		pushed, err := s.SMSReportSave(ctx, &sms.ReportSaveParams{PartnerID: "a", Number: c.number, Report: c.report, Push: c.push})
		if pushed != c.wantPushed || !errors.Is(err, c.wantErr) {
			t.Errorf("%s: pushed %v, err %v; want %v, %v", c.name, pushed, err, c.wantPushed, c.wantErr)
		}
		if c.wantReport == nil {
			continue
		}
		got, err := s.SMSMessageGet(ctx, "a", c.number)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.wantReport, got.Report); d != "" {
			t.Errorf("%s: stored report (-want +got):\n%s", c.name, d)
		}
	}
	got := claimAll(t, ms, "h1", at(20))
	if d := cmp.Diff([]string{"we_a/evt_1"}, eventIDs(got)); d != "" {
		t.Fatalf("deliveries (-want +got):\n%s", d)
	}
	if d := got[0]; d.EventType != sms.EventDeliveryReport || d.MessageID != "m1" || string(d.Payload) != `{"id":"evt_1"}` {
		t.Errorf("delivery %+v", d)
	}
}
