package sms_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
)

func TestNewRequiresStoreAndGateway(t *testing.T) {
	e := setup(t, nil)
	if _, err := sms.New(nil, e.gw, nil); err == nil {
		t.Error("New with a nil store succeeded")
	}
	if _, err := sms.New(memstore.New(), nil, nil); err == nil {
		t.Error("New with a nil gateway succeeded")
	}
}

func TestSendRefusals(t *testing.T) {
	t.Parallel()
	good := func() *sms.SendParams {
		return &sms.SendParams{APIKey: apikey, PartnerID: partner, Mobile: kenya, Message: "Hello", Shortcode: "ACME"}
	}
	tests := []struct {
		name  string
		edit  func(p *sms.SendParams)
		code  int
		field string
	}{
		{"no partnerID", func(p *sms.SendParams) { p.PartnerID = "" }, sms.CodeNoPartnerID, "partnerID"},
		{"no apikey", func(p *sms.SendParams) { p.APIKey = "" }, sms.CodeNoAPIKey, "apikey"},
		{"wrong apikey", func(p *sms.SendParams) { p.APIKey = apikey + "x" }, sms.CodeInvalidCredentials, ""},
		{"unknown partnerID", func(p *sms.SendParams) { p.PartnerID = "9999" }, sms.CodeInvalidCredentials, ""},
		{"malformed partnerID", func(p *sms.SendParams) { p.PartnerID = "../../etc" }, sms.CodeInvalidCredentials, ""},
		{"no mobile", func(p *sms.SendParams) { p.Mobile = "" }, sms.CodeInvalidMobile, "mobile"},
		{"mobile with plus", func(p *sms.SendParams) { p.Mobile = "+" + kenya }, sms.CodeInvalidMobile, "mobile"},
		{"mobile in national format", func(p *sms.SendParams) { p.Mobile = "0712345678" }, sms.CodeInvalidMobile, "mobile"},
		{"mobile with spaces", func(p *sms.SendParams) { p.Mobile = "254 712 345 678" }, sms.CodeInvalidMobile, "mobile"},
		{"mobile with letters", func(p *sms.SendParams) { p.Mobile = "2547123abc78" }, sms.CodeInvalidMobile, "mobile"},
		{"mobile too short", func(p *sms.SendParams) { p.Mobile = "25471" }, sms.CodeInvalidMobile, "mobile"},
		{"mobile too long", func(p *sms.SendParams) { p.Mobile = "2547123456789012" }, sms.CodeInvalidMobile, "mobile"},
		{"mobile not a real number", func(p *sms.SendParams) { p.Mobile = "10000000000" }, sms.CodeInvalidMobile, "mobile"},
		{"mobile of an unknown country code", func(p *sms.SendParams) { p.Mobile = "999123456789" }, sms.CodeInvalidMobile, "mobile"},
		{"no message", func(p *sms.SendParams) { p.Message = "" }, sms.CodeUnsupportedDataType, "message"},
		{"blank message", func(p *sms.SendParams) { p.Message = " \n\t " }, sms.CodeUnsupportedDataType, "message"},
		{"message with NUL", func(p *sms.SendParams) { p.Message = "a\x00b" }, sms.CodeUnsupportedDataType, "message"},
		{"message not UTF-8", func(p *sms.SendParams) { p.Message = "a\xffb" }, sms.CodeUnsupportedDataType, "message"},
		{"message of 11 parts", func(p *sms.SendParams) { p.Message = strings.Repeat("a", 1531) }, sms.CodeUnsupportedDataType, "message"},
		{"no shortcode", func(p *sms.SendParams) { p.Shortcode = "" }, sms.CodeInvalidSender, "shortcode"},
		{"unapproved shortcode", func(p *sms.SendParams) { p.Shortcode = "OTHER" }, sms.CodeInvalidSender, "shortcode"},
		{"shortcode differs in case", func(p *sms.SendParams) { p.Shortcode = "acme" }, sms.CodeInvalidSender, "shortcode"},
		{"unparseable timeToSend", func(p *sms.SendParams) { p.TimeToSend = "next week" }, sms.CodeUnsupportedDataType, "timeToSend"},
		{"timeToSend over a year ahead", func(p *sms.SendParams) { p.TimeToSend = "2027-06-01 10:00" }, sms.CodeUnsupportedDataType, "timeToSend"},
		{"costs more than the credit", func(p *sms.SendParams) { p.Message = strings.Repeat("я", 67*10) }, sms.CodeLowCredit, "message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, nil)
			// 5 credits: a 10-part message (10 credits) cannot be covered.
			if err := e.svc.SetCostPerSegment(e.ctx, partner, sms.Credits(1)); err != nil {
				t.Fatal(err)
			}
			lowered := setLowCredit(t, e, sms.Credits(5))
			p := good()
			tc.edit(p)
			_, err := e.svc.Send(e.ctx, p)
			wantCode(t, tc.name, err, tc.code, tc.field)
			if b := e.balance(t); b != lowered {
				t.Errorf("a refused send changed the balance from %s to %s", lowered, b)
			}
			if n := e.runDue(t); n != 0 {
				t.Errorf("a refused send stored a message: %d handed to the gateway", n)
			}
		})
	}
}

// setLowCredit brings account 1234 down to c by sending scheduled messages
// of one credit, and returns c.
func setLowCredit(t *testing.T, e *env, c sms.Credit) sms.Credit {
	t.Helper()
	for e.balance(t) > c {
		e.send(t, &sms.SendParams{TimeToSend: "2026-12-01 10:00"})
	}
	return e.balance(t)
}

func TestWrongKeyAndUnknownPartnerAnswerAlike(t *testing.T) {
	e := setup(t, nil)
	_, errKey := e.svc.Send(e.ctx, &sms.SendParams{APIKey: "sms_wrong_wrong_wrong_wrong", PartnerID: partner, Mobile: kenya, Message: "x", Shortcode: "ACME"})
	_, errPartner := e.svc.Send(e.ctx, &sms.SendParams{APIKey: "sms_wrong_wrong_wrong_wrong", PartnerID: "5678", Mobile: kenya, Message: "x", Shortcode: "ACME"})
	if d := cmp.Diff(errKey.Error(), errPartner.Error()); d != "" || errKey.(*sms.Error).Description != "Invalid credentials" {
		t.Errorf("wrong key %q and unknown partner %q differ (-key +partner):\n%s", errKey, errPartner, d)
	}
	for _, err := range []error{errKey, errPartner} {
		if strings.Contains(err.Error(), "sms_wrong") || strings.Contains(err.Error(), "5678") {
			t.Errorf("error %q repeats the credentials", err)
		}
	}
}

// TestAuthenticationWorkHidesWhichPartnersExist counts the store's
// account reads: a wrong apikey for an existing partnerID and any apikey
// for an unknown one make the same single read of a key hash, and nothing
// else of the account (its senders) is read before the key matched.
func TestAuthenticationWorkHidesWhichPartnersExist(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	e.store.accountReads()
	const wrong = "sms_wrong_wrong_wrong_wrong"
	reads := func(partnerID, key string) []string {
		t.Helper()
		_, err := e.svc.Balance(e.ctx, partnerID, key)
		if partnerID != partner || key != apikey {
			wantCode(t, "balance with "+partnerID+"/"+key, err, sms.CodeInvalidCredentials, "")
		} else if err != nil {
			t.Fatalf("balance with the right key: %v", err)
		}
		return e.store.accountReads()
	}
	refused := []string{"SMSAccountKey"}
	if d := cmp.Diff(refused, reads(partner, wrong)); d != "" {
		t.Errorf("wrong apikey for an existing partnerID: account reads (-want +got):\n%s", d)
	}
	if d := cmp.Diff(refused, reads("5678", wrong)); d != "" {
		t.Errorf("unknown partnerID: account reads (-want +got):\n%s", d)
	}
	if d := cmp.Diff(refused, reads("5678", apikey)); d != "" {
		t.Errorf("unknown partnerID with another account's key: account reads (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"SMSAccountKey", "SMSAccountGet"}, reads(partner, apikey)); d != "" {
		t.Errorf("right apikey: account reads (-want +got):\n%s", d)
	}
}

// TestCheckCredentials: the answer of Authenticate's first step, with one
// read of the key hash and none of the rest of the account, whether the
// key matches or not.
func TestCheckCredentials(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	e.store.accountReads()
	cases := []struct {
		partnerID, key string
		code           int
		field          string
		reads          []string
	}{
		{partner, apikey, sms.CodeSuccess, "", []string{"SMSAccountKey"}},
		{partner, apikey + "x", sms.CodeInvalidCredentials, "", []string{"SMSAccountKey"}},
		{"5678", apikey, sms.CodeInvalidCredentials, "", []string{"SMSAccountKey"}},
		{"", apikey, sms.CodeNoPartnerID, "partnerID", nil},
		{partner, "", sms.CodeNoAPIKey, "apikey", nil},
	}
	for _, c := range cases {
		err := e.svc.CheckCredentials(e.ctx, c.partnerID, c.key)
		what := "CheckCredentials(" + c.partnerID + ", " + c.key + ")"
		if c.code == sms.CodeSuccess {
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		} else {
			wantCode(t, what, err, c.code, c.field)
		}
		if d := cmp.Diff(c.reads, e.store.accountReads()); d != "" {
			t.Errorf("%s: account reads (-want +got):\n%s", what, d)
		}
	}
}

func TestSendAcceptsAndDebits(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	res := e.send(t, &sms.SendParams{Message: "Hello"})
	if res.Status != "sent" || res.Mobile != kenya || res.Cost != sms.Credits(1) || res.Balance != sms.Credits(99) || res.NetworkID != "254" {
		t.Errorf("Send = %+v; want sent, 1 credit, 99 left, network 254", res)
	}
	if !strings.HasPrefix(res.ID, "sms_") || res.ProviderMessageID != strconv.FormatInt(res.Number, 10) || res.Number <= 0 {
		t.Errorf("ids: id %q providerMessageId %q number %d", res.ID, res.ProviderMessageID, res.Number)
	}
	// 161 GSM-7 characters are 2 parts; at 1.50 a part that is 3.00.
	if err := e.svc.SetCostPerSegment(e.ctx, partner, 150); err != nil {
		t.Fatal(err)
	}
	res = e.send(t, &sms.SendParams{Message: strings.Repeat("a", 161)})
	if res.Segments != 2 || res.Cost != 300 || res.Balance != 9600 {
		t.Errorf("2-part send: %d parts, cost %s, balance %s; want 2, 3.00, 96.00", res.Segments, res.Cost, res.Balance)
	}
	// A message that costs exactly the rest is accepted and leaves 0.
	if err := e.svc.SetCostPerSegment(e.ctx, partner, 9600); err != nil {
		t.Fatal(err)
	}
	res = e.send(t, &sms.SendParams{Message: "all of it"})
	if res.Balance != 0 || e.balance(t) != 0 {
		t.Errorf("send of the whole balance left %s", e.balance(t))
	}
	_, err := e.svc.Send(e.ctx, &sms.SendParams{APIKey: apikey, PartnerID: partner, Mobile: kenya, Message: "one more", Shortcode: "ACME"})
	wantCode(t, "send on an empty balance", err, sms.CodeLowCredit, "message")
}

func TestSendScheduled(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	res := e.send(t, &sms.SendParams{TimeToSend: "2026-03-04 13:02"}) // Nairobi: 10:02 UTC
	if res.Status != "scheduled" || !res.DueAt.Equal(base.Add(2*time.Minute)) || res.Balance != sms.Credits(99) {
		t.Errorf("scheduled send = %+v; want scheduled, due 10:02 UTC, credit taken", res)
	}
	past := e.send(t, &sms.SendParams{TimeToSend: "2026-03-04 12:00"})
	if past.Status != "sent" || !past.DueAt.Equal(base) {
		t.Errorf("send with a past timeToSend = %+v; want sent at once", past)
	}
	unix := e.send(t, &sms.SendParams{TimeToSend: strconv.FormatInt(base.Add(time.Hour).Unix(), 10)})
	if unix.Status != "scheduled" || !unix.DueAt.Equal(base.Add(time.Hour)) {
		t.Errorf("send with a Unix timeToSend = %+v", unix)
	}
}

func TestConcurrentSendsNeverOverdraw(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	setLowCredit(t, e, sms.Credits(25))
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.svc.Send(e.ctx, &sms.SendParams{APIKey: apikey, PartnerID: partner, Mobile: kenya, Message: "hi", Shortcode: "ACME"})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				codes[200]++
			} else {
				codes[sms.AsError(err).Code]++
			}
		}()
	}
	wg.Wait()
	if d := cmp.Diff(map[int]int{200: 25, sms.CodeLowCredit: 25}, codes); d != "" {
		t.Errorf("outcomes of 50 sends on 25 credits (-want +got):\n%s", d)
	}
	if b := e.balance(t); b != 0 {
		t.Errorf("balance %s, want 0.00", b)
	}
}

func bulkItem(mobile, ref string) *sms.BulkItem {
	return &sms.BulkItem{PartnerID: partner, APIKey: apikey, PassType: "plain", ClientSMSID: ref, Mobile: mobile, Message: "Hi " + ref, Shortcode: "ACME"}
}

func TestSendBulkMixed(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	if _, _, err := e.svc.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: "other", APIKey: "other_key_0123456789abcdef", Senders: []string{"OTHER"}, Credit: sms.Credits(1)}); err != nil {
		t.Fatal(err)
	}
	items := []*sms.BulkItem{
		bulkItem(kenya, "1"),
		{PartnerID: partner, APIKey: "wrong-key-0123456789abcdef", ClientSMSID: "2", Mobile: kenya, Message: "x", Shortcode: "ACME"},
		{PartnerID: "nobody", APIKey: apikey, ClientSMSID: "3", Mobile: kenya, Message: "x", Shortcode: "ACME"},
		bulkItem("0712345678", "4"),
		{PartnerID: partner, APIKey: apikey, ClientSMSID: "5", Mobile: kenya, Message: "x", Shortcode: "NOPE"},
		{PartnerID: partner, APIKey: apikey, ClientSMSID: "6", Mobile: kenya, Message: "", Shortcode: "ACME"},
		{PartnerID: "", APIKey: apikey, ClientSMSID: "7", Mobile: kenya, Message: "x", Shortcode: "ACME"},
		{PartnerID: partner, APIKey: "", ClientSMSID: "8", Mobile: kenya, Message: "x", Shortcode: "ACME"},
		{PartnerID: partner, APIKey: apikey, PassType: "hashed", ClientSMSID: "9", Mobile: kenya, Message: "x", Shortcode: "ACME"},
		{PartnerID: partner, APIKey: apikey, ClientSMSID: "10", Mobile: kenya, Message: "later", Shortcode: "ACME", TimeToSend: "2026-03-05 09:00"},
		{PartnerID: "other", APIKey: "other_key_0123456789abcdef", ClientSMSID: "11", Mobile: "255712345678", Message: "ok", Shortcode: "OTHER"},
		{PartnerID: "other", APIKey: "other_key_0123456789abcdef", ClientSMSID: "12", Mobile: "255712345678", Message: "no credit left", Shortcode: "OTHER"},
		nil,
		{PartnerID: partner, APIKey: apikey, ClientSMSID: "14", Mobile: kenya, Message: "x", Shortcode: "ACME", TimeToSend: "soon"},
	}
	res, err := e.svc.SendBulk(e.ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Code             int
		Ref, Net, Status string
		HasID            bool
	}
	var got []row
	for _, r := range res {
		got = append(got, row{r.Code, r.ClientSMSID, r.NetworkID, r.Status, r.MessageID > 0 && r.ID != ""})
	}
	want := []row{
		{200, "1", "254", "sent", true},
		{sms.CodeInvalidCredentials, "2", "", "", false},
		{sms.CodeInvalidCredentials, "3", "", "", false},
		{sms.CodeInvalidMobile, "4", "", "", false},
		{sms.CodeInvalidSender, "5", "", "", false},
		{sms.CodeUnsupportedDataType, "6", "", "", false},
		{sms.CodeNoPartnerID, "7", "", "", false},
		{sms.CodeNoAPIKey, "8", "", "", false},
		{sms.CodeUnsupportedDataType, "9", "", "", false},
		{200, "10", "254", "scheduled", true},
		{200, "11", "255", "sent", true},
		{sms.CodeLowCredit, "12", "", "", false},
		{sms.CodeUnsupportedDataType, "", "", "", false},
		{sms.CodeUnsupportedDataType, "14", "", "", false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bulk results (-want +got):\n%s", d)
	}
	if res[0].Description != "Success" || res[0].Mobile != kenya || res[3].Mobile != "0712345678" {
		t.Errorf("echoes: %+v %+v", res[0], res[3])
	}
	if res[1].Description != res[2].Description {
		t.Errorf("wrong key %q and unknown partner %q answer differently", res[1].Description, res[2].Description)
	}
	if b := e.balance(t); b != sms.Credits(98) {
		t.Errorf("balance of 1234 = %s, want 98.00 (two accepted)", b)
	}
	if e.store.accepts.Load() != 1 {
		t.Errorf("the bulk took %d store transactions, want 1", e.store.accepts.Load())
	}
}

func TestSendBulkAuthenticatesOnceAndStoresOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	var items []*sms.BulkItem
	for i := range sms.MaxBulk {
		items = append(items, bulkItem(kenya, strconv.Itoa(i)))
	}
	before := e.store.accountGets.Load()
	res, err := e.svc.SendBulk(e.ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i, r := range res {
		if r.Code != 200 || seen[r.MessageID] || r.ClientSMSID != strconv.Itoa(i) {
			t.Errorf("item %d: %+v", i, r)
		}
		seen[r.MessageID] = true
	}
	if n := e.store.accountGets.Load() - before; n != 1 {
		t.Errorf("20 items of one account read the account %d times, want 1", n)
	}
	if n := e.store.accepts.Load(); n != 1 {
		t.Errorf("20 items took %d store transactions, want 1", n)
	}
	if b := e.balance(t); b != sms.Credits(80) {
		t.Errorf("balance %s, want 80.00", b)
	}
}

func TestSendBulkLowCreditMidway(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	setLowCredit(t, e, sms.Credits(3))
	var items []*sms.BulkItem
	for i := range 5 {
		items = append(items, bulkItem(kenya, strconv.Itoa(i)))
	}
	res, err := e.svc.SendBulk(e.ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, r := range res {
		codes = append(codes, r.Code)
	}
	if d := cmp.Diff([]int{200, 200, 200, 1004, 1004}, codes); d != "" {
		t.Errorf("codes (-want +got):\n%s", d)
	}
	if b := e.balance(t); b != 0 {
		t.Errorf("balance %s, want 0.00", b)
	}
}

func TestSendBulkSize(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	_, err := e.svc.SendBulk(e.ctx, nil)
	wantCode(t, "empty bulk", err, sms.CodeTooManyMessages, "smslist")
	items := make([]*sms.BulkItem, sms.MaxBulk+1)
	for i := range items {
		items[i] = bulkItem(kenya, strconv.Itoa(i))
	}
	_, err = e.svc.SendBulk(e.ctx, items)
	wantCode(t, "21 items", err, sms.CodeTooManyMessages, "smslist")
	if b := e.balance(t); b != sms.Credits(100) {
		t.Errorf("a refused bulk changed the balance to %s", b)
	}
}

func report(t *testing.T, e *env, id string) (*sms.DeliveryReport, error) {
	t.Helper()
	return e.svc.DeliveryReport(e.ctx, &sms.ReportParams{APIKey: apikey, PartnerID: partner, MessageID: id})
}

func TestDeliveryReportLifecycle(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	res := e.send(t, &sms.SendParams{})
	id := res.ProviderMessageID
	_, err := report(t, e, id)
	wantCode(t, "report before the hand-over", err, sms.CodeNoDeliveryReport, "")

	e.clk.Add(time.Second)
	if n := e.runDue(t); n != 1 {
		t.Fatalf("RunDue handed over %d, want 1", n)
	}
	_, err = report(t, e, id)
	wantCode(t, "report before the gateway has one", err, sms.CodeNoDeliveryReport, "")

	e.clk.Add(10 * time.Second)
	r, err := report(t, e, id)
	if err != nil {
		t.Fatal(err)
	}
	nairobi, _ := time.LoadLocation("Africa/Nairobi")
	want := &sms.DeliveryReport{MessageID: id, Status: 32, Description: "DeliveredToTerminal", NetworkID: "254",
		TAT: 10 * time.Second, Time: base.Add(11 * time.Second).In(nairobi)}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	if !r.Delivered() || r.Time.Format("2006-01-02 15:04:05") != "2026-03-04 13:00:11" {
		t.Errorf("report time %s, want 13:00:11 Nairobi time", r.Time)
	}
	// The final report is stored: it no longer depends on the gateway.
	m, err := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if err != nil {
		t.Fatal(err)
	}
	if m.Report == nil || m.Report.Description != "DeliveredToTerminal" || m.GatewayMessageID == "" {
		t.Errorf("stored message %+v, want the final report and the gateway id kept with it", m)
	}
}

func TestDeliveryReportOutcomes(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	absent := e.send(t, &sms.SendParams{Mobile: "254712340000"})
	sched := e.send(t, &sms.SendParams{TimeToSend: "2026-03-04 18:00"})
	e.runDue(t)
	e.clk.Add(time.Minute)
	r, err := report(t, e, absent.ProviderMessageID)
	if err != nil || r.Description != "AbsentSubscriber" || r.Status != 3 || r.Delivered() {
		t.Errorf("number ending 0000: %+v, %v; want AbsentSubscriber", r, err)
	}
	r, err = report(t, e, sched.ProviderMessageID)
	if err != nil || r.Description != "Scheduled" || r.Status != 1 || r.TAT >= 0 || !r.Time.IsZero() || r.NetworkID != "254" {
		t.Errorf("scheduled: %+v, %v; want Scheduled with no time", r, err)
	}
	for _, tc := range []struct {
		name, id    string
		partner, ky string
		code        int
		field       string
	}{
		{"unknown id", "999999", partner, apikey, sms.CodeNotFound, "messageID"},
		{"non-numeric id", "abc", partner, apikey, sms.CodeNotFound, "messageID"},
		{"negative id", "-1", partner, apikey, sms.CodeNotFound, "messageID"},
		{"no id", "", partner, apikey, sms.CodeUnsupportedDataType, "messageID"},
		{"wrong key", absent.ProviderMessageID, partner, "x" + apikey, sms.CodeInvalidCredentials, ""},
		{"no partner", absent.ProviderMessageID, "", apikey, sms.CodeNoPartnerID, "partnerID"},
	} {
		_, err := e.svc.DeliveryReport(e.ctx, &sms.ReportParams{APIKey: tc.ky, PartnerID: tc.partner, MessageID: tc.id})
		wantCode(t, tc.name, err, tc.code, tc.field)
	}
	// Another account cannot read 1234's message: 4093, as for an unknown
	// id.
	if _, key, err := e.svc.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: "other", Credit: sms.Credits(1)}); err != nil {
		t.Fatal(err)
	} else {
		_, err := e.svc.DeliveryReport(e.ctx, &sms.ReportParams{APIKey: key, PartnerID: "other", MessageID: absent.ProviderMessageID})
		wantCode(t, "another account's message", err, sms.CodeNotFound, "messageID")
	}
}

func TestBalance(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	b, err := e.svc.Balance(e.ctx, partner, apikey)
	if err != nil || b.Credit.String() != "100.00" || b.PartnerID != partner {
		t.Fatalf("Balance = %+v, %v", b, err)
	}
	e.send(t, &sms.SendParams{Message: strings.Repeat("я", 71)}) // 2 parts
	b, _ = e.svc.Balance(e.ctx, partner, apikey)
	if b.Credit.String() != "98.00" {
		t.Errorf("balance after a 2-part send = %s, want 98.00", b.Credit)
	}
	_, err = e.svc.Balance(e.ctx, partner, "nope-nope-nope-nope-nope")
	wantCode(t, "balance with a wrong key", err, sms.CodeInvalidCredentials, "")
	_, err = e.svc.Balance(e.ctx, "", apikey)
	wantCode(t, "balance without partner", err, sms.CodeNoPartnerID, "partnerID")
	_, err = e.svc.Balance(e.ctx, partner, "")
	wantCode(t, "balance without key", err, sms.CodeNoAPIKey, "apikey")
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	a, key, err := e.svc.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: "gen"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "smsk_") || len(key) != 48 || a.TimeZone != "UTC" || a.CostPerSegment != sms.Credits(1) || a.Credit != 0 {
		t.Errorf("generated account %+v key %q", a, key)
	}
	if strings.Contains(string(a.KeyHash), key) || len(a.KeyHash) != 32 {
		t.Errorf("key stored as %x, want its SHA-256", a.KeyHash)
	}
	if _, err := e.svc.Authenticate(e.ctx, "gen", key); err != nil {
		t.Errorf("Authenticate with the generated key: %v", err)
	}
	if _, err := e.svc.TopUp(e.ctx, "gen", 250); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.svc.TopUp(e.ctx, "gen", sms.Credits(1)); c != 350 {
		t.Errorf("after top-ups of 2.50 and 1.00: %s, want 3.50", c)
	}
	if err := e.svc.ApproveSender(e.ctx, "gen", "NEWCO"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.ApproveSender(e.ctx, "gen", "NEWCO"); err != nil {
		t.Errorf("approving twice: %v", err)
	}
	if err := e.svc.SetTimeZone(e.ctx, "gen", "America/New_York"); err != nil {
		t.Fatal(err)
	}
	a, _ = e.svc.GetAccount(e.ctx, "gen")
	if d := cmp.Diff([]string{"NEWCO"}, a.Senders); d != "" || a.TimeZone != "America/New_York" {
		t.Errorf("account after updates: %+v (senders -want +got %s)", a, d)
	}

	for _, tc := range []struct {
		name  string
		p     *sms.CreateAccountParams
		code  int
		field string
	}{
		{"duplicate", &sms.CreateAccountParams{PartnerID: partner}, sms.CodeUnsupportedDataType, "partnerID"},
		{"bad partnerID", &sms.CreateAccountParams{PartnerID: "a b"}, sms.CodeUnsupportedDataType, "partnerID"},
		{"short key", &sms.CreateAccountParams{PartnerID: "x1", APIKey: "short"}, sms.CodeUnsupportedDataType, "apikey"},
		{"bad sender", &sms.CreateAccountParams{PartnerID: "x2", Senders: []string{"WAY-TOO-LONG-SENDER"}}, sms.CodeInvalidSender, "shortcodes"},
		{"negative credit", &sms.CreateAccountParams{PartnerID: "x3", Credit: -1}, sms.CodeUnsupportedDataType, "credit"},
		{"unknown zone", &sms.CreateAccountParams{PartnerID: "x4", TimeZone: "Mars/Olympus"}, sms.CodeUnsupportedDataType, "timezone"},
		{"path as zone", &sms.CreateAccountParams{PartnerID: "x5", TimeZone: "../../../etc/passwd"}, sms.CodeUnsupportedDataType, "timezone"},
		{"negative cost", &sms.CreateAccountParams{PartnerID: "x6", CostPerSegment: -5}, sms.CodeUnsupportedDataType, "cost_per_segment"},
	} {
		_, _, err := e.svc.CreateAccount(e.ctx, tc.p)
		wantCode(t, tc.name, err, tc.code, tc.field)
	}
	// A cost per part is from 0.01: 0 is refused with the text that says
	// so, by the rule and by SetCostPerSegment; CreateAccount's zero value
	// is the default, 1.
	for _, c := range []sms.Credit{0, -1, sms.MaxCredit + 1} {
		err := sms.CheckCostPerSegment(c)
		wantCode(t, "cost "+c.String(), err, sms.CodeUnsupportedDataType, "cost_per_segment")
		if err != nil && !strings.Contains(err.Error(), "from 0.01") {
			t.Errorf("cost %s: %v does not say the rule", c, err)
		}
		wantCode(t, "SetCostPerSegment "+c.String(), e.svc.SetCostPerSegment(e.ctx, "gen", c), sms.CodeUnsupportedDataType, "cost_per_segment")
	}
	for _, c := range []sms.Credit{1, sms.MaxCredit} {
		if err := sms.CheckCostPerSegment(c); err != nil {
			t.Errorf("cost %s: %v", c, err)
		}
	}
	if _, err := e.svc.TopUp(e.ctx, "gen", 0); sms.AsError(err).Code != sms.CodeUnsupportedDataType {
		t.Errorf("top-up of 0: %v", err)
	}
	if _, err := e.svc.TopUp(e.ctx, "missing", 100); sms.AsError(err).Code != sms.CodeNotFound {
		t.Errorf("top-up of a missing account: %v", err)
	}
	if err := e.svc.ApproveSender(e.ctx, "gen", ""); sms.AsError(err).Code != sms.CodeInvalidSender {
		t.Errorf("approving an empty sender: %v", err)
	}
	if err := e.svc.ApproveSender(e.ctx, "missing", "OK"); sms.AsError(err).Code != sms.CodeNotFound {
		t.Errorf("approving for a missing account: %v", err)
	}
}

func TestValidSender(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"ACME": true, "A": true, "Acme Ltd": true, "ACME-KE": true, "12345678901": true, "123456789012345": true,
		"": false, " ACME": false, "ACME ": false, "ABCDEFGHIJKL": false, "1234567890123456": false, "AC/ME": false, "ACMÉ": false,
	} {
		if got := sms.ValidSender(s); got != want {
			t.Errorf("ValidSender(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestErrorsIs(t *testing.T) {
	err := error(sms.NewError(sms.CodeLowCredit, "message", "too long %d", 3))
	if !errors.Is(err, &sms.Error{Code: sms.CodeLowCredit}) || errors.Is(err, &sms.Error{Code: sms.CodeInvalidMobile}) {
		t.Error("errors.Is does not match on Code")
	}
	if d := err.(*sms.Error).Description; d != "Low bulk credits: message: too long 3" {
		t.Errorf("description %q", d)
	}
	sys := sms.AsError(fmt.Errorf("disk on fire"))
	if sys.Code != sms.CodeSystemError || strings.Contains(sys.Description, "fire") {
		t.Errorf("AsError of an unknown error = %+v, want 1005 without its text", sys)
	}
	if sms.AsError(nil) != nil {
		t.Error("AsError(nil) != nil")
	}
}
