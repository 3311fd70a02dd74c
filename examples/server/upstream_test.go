package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
	"github.com/ujumbe/messaging/sms/advantagateway/advantatest"
)

// The upstream tests run the server binary with -sms-gateway advanta
// against advantatest's mock upstream, served by this test process.

// upstreamRun is the server binary and a mock upstream, with the files the
// server is started with.
type upstreamRun struct {
	bin, dir, addr string
	up             *advantatest.Upstream
	upURL          string
	creds, secret  string
	bootstrap      string
}

func newUpstreamRun(t *testing.T, bin string, credit sms.Credit) *upstreamRun {
	t.Helper()
	r := &upstreamRun{bin: bin, dir: t.TempDir()}
	r.up = advantatest.New(&advantatest.Options{PartnerID: upstreamPartner, APIKey: upstreamKey, Credit: credit})
	srv := httptest.NewServer(r.up)
	t.Cleanup(srv.Close)
	r.upURL = srv.URL
	r.creds = filepath.Join(r.dir, "advanta.json")
	r.secret = filepath.Join(r.dir, "callback.secret")
	r.bootstrap = filepath.Join(r.dir, "bootstrap.json")
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(hook.Close)
	for p, body := range map[string]string{
		r.creds:     `{"partner_id": "` + upstreamPartner + `", "apikey": "` + upstreamKey + `"}`,
		r.secret:    upstreamSecret + "\n",
		r.bootstrap: crashBootstrap(hook.URL, 1000),
	} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = l.Addr().String()
	l.Close()
	return r
}

// start starts the server on the run's database with -sms-gateway advanta
// and extra flags.
func (r *upstreamRun) start(t *testing.T, extra ...string) *server {
	t.Helper()
	args := append([]string{"-db", filepath.Join(r.dir, "sms.db"), "-bootstrap", r.bootstrap, "-rate-limits", "off", "-lease", "2s", "-webhooks-loopback",
		"-sms-gateway", "advanta", "-advanta-base-url", r.upURL, "-advanta-credentials-file", r.creds,
		"-sms-callback-secret-file", r.secret, "-advanta-timezone", "Africa/Nairobi"}, extra...)
	return startServer(t, r.bin, r.addr, args...)
}

// post sends body to the server and returns the answer's status and JSON
// object.
func post(t *testing.T, url string, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST %s: %d %q is not a JSON object", url, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

// sendSMS sends one SMS of the crash bootstrap's account and returns its
// provider message id.
func sendSMS(t *testing.T, base, mobile, text string) string {
	t.Helper()
	status, out := post(t, base+"/sms/v1/messages", fmt.Sprintf(`{"apikey":%q,"partnerID":%q,"mobile":%q,"message":%q,"shortcode":"CRASH"}`, crashSMSKey, crashPartner, mobile, text))
	if status != 200 || out["response-code"] != 200.0 {
		t.Fatalf("send %q: %d %v", text, status, out)
	}
	return fmt.Sprint(out["providerMessageId"])
}

// sendBulk sends texts in one bulk request, clientsmsid i+1 each.
func sendBulk(t *testing.T, base string, texts ...string) {
	t.Helper()
	var items []string
	for i, text := range texts {
		items = append(items, fmt.Sprintf(`{"apikey":%q,"partnerID":%q,"pass_type":"plain","clientsmsid":%d,"mobile":"2547%08d","message":%q,"shortcode":"CRASH"}`,
			crashSMSKey, crashPartner, i+1, 30000000+i, text))
	}
	status, out := post(t, base+"/sms/v1/messages/bulk", fmt.Sprintf(`{"count":%d,"smslist":[%s]}`, len(texts), strings.Join(items, ",")))
	if status != 200 {
		t.Fatalf("bulk: %d %v", status, out)
	}
	for _, r := range out["responses"].([]any) {
		if r.(map[string]any)["response-code"] != 200.0 {
			t.Fatalf("bulk item refused: %v", r)
		}
	}
}

// waitFor polls cond every 20 ms until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// accepted returns the messages the upstream accepted, by text.
func accepted(up *advantatest.Upstream) map[string][]advantatest.Message {
	out := map[string][]advantatest.Message{}
	for _, m := range up.Messages() {
		if m.Code == 200 {
			out[m.Text] = append(out[m.Text], m)
		}
	}
	return out
}

func TestAdvantaUpstream(t *testing.T) {
	t.Parallel()
	bin := buildServer(t, t.TempDir())
	t.Run("SendsAndPushedReports", func(t *testing.T) { testUpstreamSends(t, bin) })
	t.Run("LowCreditPausesAndResumes", func(t *testing.T) { testUpstreamLowCredit(t, bin) })
	t.Run("KillDuringHandOver", func(t *testing.T) { testUpstreamKill(t, bin) })
}

// testUpstreamSends: single and bulk sends reach the upstream with the
// service's upstream credentials (never the client's) and the sender ids;
// a report pushed to the callback is what the delivery-report route
// answers at once, without asking the upstream; refusals of the callback
// apply nothing.
func testUpstreamSends(t *testing.T, bin string) {
	r := newUpstreamRun(t, bin, sms.Credits(100))
	srv := r.start(t)
	id := sendSMS(t, srv.base, "254720000001", "single")
	sendBulk(t, srv.base, "bulk one", "bulk two", "bulk three")
	waitFor(t, "4 messages at the upstream", func() bool { return len(accepted(r.up)) == 4 })
	for text, ms := range accepted(r.up) {
		m := ms[0]
		if len(ms) != 1 || m.PartnerID != upstreamPartner || m.APIKey != upstreamKey || m.Shortcode != "CRASH" {
			t.Errorf("%q reached the upstream %d times as %+v; want once with the upstream's credentials and sender CRASH", text, len(ms), m)
		}
		if wantPath := advantagateway.PathSendBulk; strings.HasPrefix(text, "bulk") && (m.Path != wantPath || m.ClientSMSID == "") {
			t.Errorf("%q came through %s with clientsmsid %q", text, m.Path, m.ClientSMSID)
		}
	}
	gwID := accepted(r.up)["single"][0].MessageID
	report := func() (int, map[string]any) {
		return post(t, srv.base+"/sms/v1/messages/delivery-report", fmt.Sprintf(`{"apikey":%q,"partnerID":%q,"messageID":%q}`, crashSMSKey, crashPartner, id))
	}
	// Before any report, the route asks the upstream (1008: none yet).
	waitFor(t, "the message recorded as sent", func() bool {
		_, out := report()
		return out["response-code"] == 1008.0
	})
	asked := r.up.Requests(advantagateway.PathGetDLR)
	if asked == 0 {
		t.Fatal("the delivery-report route did not ask the upstream before a report was pushed")
	}
	callback := srv.base + "/sms/v1/callbacks/delivery"
	pushed := `{"messageID":"` + gwID + `","deliveryStatus":32,"deliveryDescription":"DeliveredToTerminal","deliveryTAT":"00:00:04","deliveryNetworkID":"1","timestamp":"` +
		time.Now().In(nairobi(t)).Format("2006-01-02 15:04:05") + `"}`
	for _, bad := range []struct{ url, body string }{
		{callback, pushed},
		{callback + "?token=wrong-secret-0123456789", pushed},
		{callback + "?token=" + upstreamSecret, `{"messageID":"` + gwID + `","deliveryStatus":32,"extra":1}`},
		{callback + "?token=" + upstreamSecret, `{"messageID":"` + gwID + `",`},
		{callback + "?token=" + upstreamSecret, `{"deliveryStatus":32}`},
	} {
		status, out := post(t, bad.url, bad.body)
		if status/100 != 4 || len(out) != 2 || out["response-code"] == 200.0 {
			t.Errorf("callback %s %s: %d %v; want a flat 4xx refusal", strings.ReplaceAll(bad.url, upstreamSecret, "<secret>"), bad.body, status, out)
		}
	}
	if _, out := report(); out["response-code"] != 1008.0 {
		t.Fatalf("a refused callback applied a report: %v", out)
	}
	if status, out := post(t, callback+"?token="+upstreamSecret, pushed); status != 200 || out["response-code"] != 200.0 {
		t.Fatalf("callback: %d %v", status, out)
	}
	asked = r.up.Requests(advantagateway.PathGetDLR)
	status, out := report()
	if status != 200 || out["response-code"] != 200.0 || out["delivery-description"] != "DeliveredToTerminal" || out["delivery-status"] != 32.0 || out["delivery-networkid"] != "1" {
		t.Errorf("delivery report after the push: %d %v", status, out)
	}
	if n := r.up.Requests(advantagateway.PathGetDLR); n != asked {
		t.Errorf("the delivery-report route asked the upstream %d more times after a final report was pushed", n-asked)
	}
	// A report of an id the upstream never gave is acknowledged.
	if status, out := post(t, callback+"?token="+upstreamSecret, `{"messageID":"424242","deliveryStatus":32}`); status != 200 || out["response-code"] != 200.0 {
		t.Errorf("callback of an unknown id: %d %v", status, out)
	}
	srv.stop(t)
	for _, s := range []string{upstreamKey, upstreamSecret} {
		if strings.Contains(srv.log.String(), s) {
			t.Errorf("the server's log holds %q:\n%s", s, srv.log)
		}
	}
	if !strings.Contains(srv.log.String(), "delivery_callback=/sms/v1/callbacks/delivery") {
		t.Errorf("the log does not name the callback route:\n%s", srv.log)
	}
}

func nairobi(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// smsRows reads status and attempts of the SMS by text.
func smsRows(t *testing.T, db string) map[string][2]string {
	t.Helper()
	ro, err := sql.Open("sqlite3", "file:"+db+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rows, err := ro.Query(`SELECT text, status, attempts FROM sms_messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]string{}
	for rows.Next() {
		var text, status string
		var attempts int
		if err := rows.Scan(&text, &status, &attempts); err != nil {
			t.Fatal(err)
		}
		out[text] = [2]string{status, fmt.Sprint(attempts)}
	}
	return out
}

// testUpstreamLowCredit: the upstream's 1004 makes the server read its
// balance and, below the floor, hold messages queued (attempts untouched)
// until a top-up at the upstream; then each goes once.
func testUpstreamLowCredit(t *testing.T, bin string) {
	r := newUpstreamRun(t, bin, sms.Credits(2))
	srv := r.start(t, "-upstream-credit-floor", "1", "-pause-below-floor", "-upstream-credit-check-every", "300ms")
	for i := range 3 {
		sendSMS(t, srv.base, fmt.Sprintf("2547200001%02d", i), fmt.Sprintf("low %d", i))
	}
	waitFor(t, "a 1004 and the pause", func() bool {
		return strings.Contains(srv.log.String(), "upstream credit below the floor")
	})
	if !strings.Contains(srv.log.String(), "hand_over_paused=true") {
		t.Errorf("the warning does not say hand-over is paused:\n%s", srv.log)
	}
	refused := len(r.up.Messages()) - len(accepted(r.up))
	held := []string{"held a", "held b"}
	for i, text := range held {
		sendSMS(t, srv.base, fmt.Sprintf("2547200002%02d", i), text)
	}
	// While paused nothing more reaches the upstream, the held messages
	// stay queued with no attempt.
	time.Sleep(time.Second)
	if n := len(r.up.Messages()) - len(accepted(r.up)); n != refused || len(accepted(r.up)) != 2 {
		t.Errorf("while paused the upstream got more: %d accepted, %d refused (was %d)", len(accepted(r.up)), n, refused)
	}
	rows := smsRows(t, filepath.Join(r.dir, "sms.db"))
	for _, text := range held {
		if rows[text] != [2]string{"queued", "0"} {
			t.Errorf("%q while paused: %v, want queued after 0 attempts", text, rows[text])
		}
	}
	r.up.TopUp(sms.Credits(10))
	waitFor(t, "every message accepted after the top-up", func() bool { return len(accepted(r.up)) == 5 })
	for text, ms := range accepted(r.up) {
		if len(ms) != 1 {
			t.Errorf("%q accepted %d times", text, len(ms))
		}
	}
	if refused > 1 {
		t.Errorf("%d refusals before the pause; want the one that triggered it", refused)
	}
	waitFor(t, "the credit back", func() bool { return strings.Contains(srv.log.String(), "upstream credit back at or above the floor") })
	srv.stop(t)
}

// testUpstreamKill: the server is SIGKILLed while the upstream holds its
// hand-over; the upstream then accepts the batch the server never heard
// back about. After a restart the upstream's reports, carrying the
// clientsmsid, confirm those hand-overs: each message reaches the upstream
// once and ends sent, charged once.
func testUpstreamKill(t *testing.T, bin string) {
	r := newUpstreamRun(t, bin, sms.Credits(100))
	srv := r.start(t)
	r.up.Hold()
	texts := []string{"kill 1", "kill 2", "kill 3", "kill 4", "kill 5"}
	sendBulk(t, srv.base, texts...)
	waitFor(t, "the hand-over at the upstream", func() bool { return r.up.Held() > 0 })
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()
	r.up.Release()
	waitFor(t, "the held batch accepted", func() bool { return len(accepted(r.up)) > 0 })
	before := len(r.up.Messages())
	srv = r.start(t)
	// The upstream pushes its reports of the held batch, with their
	// clientsmsid: they confirm the hand-overs whose answers the killed
	// process never got, so nothing is handed over again.
	for _, m := range r.up.Messages() {
		body := r.up.ReportBody(m.MessageID, &sms.Report{Status: 2, Description: sms.DeliverySentToNetwork})
		if status, out := post(t, srv.base+"/sms/v1/callbacks/delivery?token="+upstreamSecret, string(body)); status != 200 || out["response-code"] != 200.0 {
			t.Fatalf("callback %s: %d %v", body, status, out)
		}
	}
	after := "after the restart"
	sendSMS(t, srv.base, "254720000300", after)
	db := filepath.Join(r.dir, "sms.db")
	waitFor(t, "every message sent", func() bool {
		rows := smsRows(t, db)
		for _, text := range append(texts, after) {
			if rows[text][0] != "sent" {
				return false
			}
		}
		return true
	})
	for _, text := range append(texts, after) {
		if ms := accepted(r.up)[text]; len(ms) != 1 || ms[0].ClientSMSID == "" {
			t.Errorf("%q reached the upstream %d times: %+v; want once, with its clientsmsid", text, len(ms), ms)
		}
	}
	if before != len(texts) {
		t.Errorf("the upstream had %d messages before the restart, want the %d of the killed batch", before, len(texts))
	}
	if b := smsBalance(t, srv.base); b != fmt.Sprintf("%d.00", 1000-len(texts)-1) {
		t.Errorf("balance %s, want each message charged once", b)
	}
	srv.stop(t)
	if bytes.Contains([]byte(srv.log.String()), []byte(upstreamKey)) {
		t.Error("the server's log holds the upstream apikey")
	}
}
