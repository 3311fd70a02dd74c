package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// smsFixture is the dashboard fixture with the SMS pages: the Service and
// an sms.SMS on one memstore, the fake gateway (reports 10 s after the
// hand-over) and the accounts 1234 (100 credits, sender ACME) and 5678 (7
// credits). The viewer "acme" may see account 1234 only.
type smsFixture struct {
	*fixture
	sms *sms.SMS
}

const smsKey = "smsk_0123456789abcdef0123456789abcdef"

func setupSMS(t *testing.T) *smsFixture {
	t.Helper()
	var s *sms.SMS
	f := setupWith(t, fixtureOptions{smsAccounts: []string{"1234", "gone"}, sms: func(f *fixture, store *memstore.Store) *sms.SMS {
		var err error
		s, err = sms.New(store, fakegateway.New(&fakegateway.Options{Clock: f.clock.Now, Delay: 10 * time.Second}), &sms.Options{Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []*sms.CreateAccountParams{
			{PartnerID: "1234", APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(100), TimeZone: "Africa/Nairobi"},
			{PartnerID: "5678", Credit: sms.Credits(7)},
		} {
			if _, _, err := s.CreateAccount(context.Background(), a); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}})
	return &smsFixture{fixture: f, sms: s}
}

// send sends an SMS from account 1234 and returns its message id.
func (f *smsFixture) send(mobile, text string) string {
	f.t.Helper()
	res, err := f.sms.Send(f.ctx, &sms.SendParams{PartnerID: "1234", APIKey: smsKey, Mobile: mobile, Message: text, Shortcode: "ACME"})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.ProviderMessageID
}

// TestSMSAccounts: an operator sees every account with its balance and the
// total credit; another viewer sees only their accounts and their total.
func TestSMSAccounts(t *testing.T) {
	f := setupSMS(t)
	r := f.get("/sms")
	if r.status != http.StatusOK {
		t.Fatalf("/sms answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, `href="/dashboard/sms/1234"`, `href="/dashboard/sms/5678"`, "100.00", "7.00", `id="total-credit">107.00<`)

	f.as = "acme"
	r = f.get("/sms")
	r.wantContains(t, `href="/dashboard/sms/1234"`, `id="total-credit">100.00<`, "your 1 account")
	if strings.Contains(r.body, "5678") {
		t.Error("a viewer of account 1234 sees account 5678")
	}
	if r := f.get("/sms/5678"); r.status != http.StatusNotFound || strings.Contains(r.body, "7.00") {
		t.Errorf("another account's page answered %d to its non-viewer", r.status)
	}
	if r := f.get("/sms/gone"); r.status != http.StatusNotFound {
		t.Errorf("a missing account's page answered %d", r.status)
	}
}

// TestSMSAccountPage: an account's page shows its balance, its ledger and
// its recent messages with their delivery reports and times.
func TestSMSAccountPage(t *testing.T) {
	f := setupSMS(t)
	if _, err := f.sms.AddTopUp(f.ctx, &sms.TopUpParams{PartnerID: "1234", Amount: sms.Credits(5), Reference: "inv-42"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute) // 10:31:00
	delivered := f.send("254712345678", "your code is 1234")
	absent := f.send("254712340000", "nobody home") // the fake gateway's absent subscribers end in 0000
	f.clock.Advance(time.Second)
	if _, err := f.sms.RunDue(f.ctx); err != nil { // handed over at 10:31:01
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	for _, id := range []string{delivered, absent} { // the reports are fetched and stored
		if _, err := f.sms.DeliveryReport(f.ctx, &sms.ReportParams{APIKey: smsKey, PartnerID: "1234", MessageID: id}); err != nil {
			t.Fatal(err)
		}
	}
	queued := f.send("254733000111", "later")

	r := f.get("/sms/1234")
	if r.status != http.StatusOK {
		t.Fatalf("account page answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, `id="balance">102.00<`, "<code>ACME</code>", "Africa/Nairobi", "Approve a sender id")
	ledger := section(t, r.body, "ledger")
	for _, want := range []string{"top_up", "<code>inv-42</code>", "5.00", "105.00", "opening", "charge", "-1.00", "message <code>" + queued + "</code>"} {
		if !strings.Contains(ledger, want) {
			t.Errorf("the ledger lacks %q", want)
		}
	}
	rows := tableRows(section(t, r.body, "messages"))
	want := []string{
		queued + " | 254733000111 | later | queued | none yet",
		absent + " | 254712340000 | nobody home | sent sent 2026-11-24 10:31:01 UTC | AbsentSubscriber (3) 2026-11-24 10:31:11 UTC network 254",
		delivered + " | 254712345678 | your code is 1234 | sent sent 2026-11-24 10:31:01 UTC | DeliveredToTerminal (32) 2026-11-24 10:31:11 UTC network 254",
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("recent messages (-want +got):\n%s", d)
	}
}

var (
	tagRe   = regexp.MustCompile(`<[^>]+>`)
	spaceRe = regexp.MustCompile(`\s+`)
)

// section returns the HTML of the element with id in body, up to the
// next </section>.
func section(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no #%s in the page", id)
	}
	j := strings.Index(body[i:], "</section>")
	return body[i : i+j]
}

// tableRows returns the text of a table's body rows: the mobile, text,
// status and report cells of each, joined by " | ", after the id (the
// creation time, sender and cost cells are left out).
func tableRows(html string) []string {
	var out []string
	for _, tr := range strings.Split(html, "<tr>")[2:] {
		cells := strings.Split(tr, "</td>")
		var text []string
		for i, c := range cells {
			if i == 1 || i == 3 || i == 5 || i >= 8 {
				continue
			}
			text = append(text, strings.TrimSpace(spaceRe.ReplaceAllString(tagRe.ReplaceAllString(c, " "), " ")))
		}
		out = append(out, strings.Join(text, " | "))
	}
	return out
}

// TestSMSLedgerPaging: the ledger's pages list every entry once, newest
// first.
func TestSMSLedgerPaging(t *testing.T) {
	f := setupSMS(t)
	for i := range 24 {
		if _, err := f.sms.AddTopUp(f.ctx, &sms.TopUpParams{PartnerID: "1234", Amount: sms.Credits(1), Reference: "ref-" + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	refRe := regexp.MustCompile(`<code>(ref-[a-z])</code>`)
	var got []string
	path := "/sms/1234"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("the ledger's Next links do not end")
		}
		r := f.get(path)
		if r.status != http.StatusOK {
			t.Fatalf("%s answered %d", path, r.status)
		}
		for _, m := range refRe.FindAllStringSubmatch(section(t, r.body, "ledger"), -1) {
			got = append(got, m[1])
		}
		path = strings.TrimSuffix(nextLink(section(t, r.body, "ledger")), "#ledger")
	}
	var want []string
	for i := 23; i >= 0; i-- {
		want = append(want, "ref-"+string(rune('a'+i)))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ledger over the pages (-want +got):\n%s", d)
	}
	if r := f.get("/sms/1234?ledger=nope"); r.status != http.StatusBadRequest || !strings.Contains(r.body, "cursor: is not a cursor this API returned") {
		t.Errorf("a bad ledger cursor answered %d", r.status)
	}
}

// TestSMSAddSender: an operator approves a sender id; a bad one is shown
// next to the field with the library's message and changes nothing;
// another viewer may not.
func TestSMSAddSender(t *testing.T) {
	f := setupSMS(t)
	r := f.post("/sms/1234/senders", url.Values{"shortcode": {"FAR TOO LONG SENDER"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("a bad sender id answered %d; want 422", r.status)
	}
	r.wantContains(t, `id="sms-sender-err">Invalid sender id: shortcode: &#34;FAR TOO LONG SENDER&#34; is not a sender id`, `value="FAR TOO LONG SENDER"`)
	r = f.post("/sms/1234/senders", url.Values{"shortcode": {"NEWCO"}})
	if r.status != http.StatusSeeOther || r.location != "/dashboard/sms/1234" {
		t.Fatalf("approve answered %d to %q", r.status, r.location)
	}
	a, err := f.sms.GetAccount(f.ctx, "1234")
	if err != nil || !cmp.Equal(a.Senders, []string{"ACME", "NEWCO"}) {
		t.Errorf("senders = %v, %v; want [ACME NEWCO]", a.Senders, err)
	}
	if r := f.post("/sms/missing/senders", url.Values{"shortcode": {"NEWCO"}}); r.status != http.StatusNotFound {
		t.Errorf("a missing account answered %d", r.status)
	}

	f.as = "acme"
	if r := f.get("/sms/1234"); strings.Contains(r.body, "Approve a sender id") {
		t.Error("a viewer who is not an operator is offered to approve sender ids")
	}
	if r := f.post("/sms/1234/senders", url.Values{"shortcode": {"MINE"}}); r.status != http.StatusForbidden {
		t.Errorf("a non-operator approving a sender answered %d; want 403", r.status)
	}
	if a, _ := f.sms.GetAccount(f.ctx, "1234"); len(a.Senders) != 2 {
		t.Errorf("senders after the refused forms: %v", a.Senders)
	}
}

// TestSMSPagesNeedOptionsSMS: without Options.SMS there are no SMS pages.
func TestSMSPagesNeedOptionsSMS(t *testing.T) {
	f := setup(t)
	if r := f.get("/sms"); r.status != http.StatusNotFound {
		t.Errorf("/sms without Options.SMS answered %d; want 404", r.status)
	}
}

// TestOverviewSMSCredit: the overview shows the credit of the SMS accounts
// the viewer may see.
func TestOverviewSMSCredit(t *testing.T) {
	f := setupSMS(t)
	f.get("/w/acme/overview").wantContains(t, `id="overview-sms-credit">107.00<`, "Across 2 SMS accounts")
	f.as = "acme"
	f.get("/w/acme/overview").wantContains(t, `id="overview-sms-credit">100.00<`, "Across 1 SMS account you")
}
