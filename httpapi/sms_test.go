package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

const (
	smsPartner = "1234"
	smsKey     = "sms_0123456789abcdef0123456789abcdef"
	smsMobile  = "254712345678"
)

// smsClock is a settable clock.
type smsClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *smsClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *smsClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type smsEnv struct {
	h   http.Handler
	svc *sms.SMS
	clk *smsClock
	log *bytes.Buffer
	mu  *sync.Mutex
}

// smsSetup serves the SMS API on a memstore with the fake gateway
// (reports 10 s after the hand-over), the clock at 10:00 UTC (13:00 in
// Nairobi), and account 1234 (100 credits, sender ACME, Africa/Nairobi);
// opts change the handler's options.
func smsSetup(t testing.TB, opts ...func(*httpapi.Options)) *smsEnv {
	t.Helper()
	clk := &smsClock{t: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
	st := memstore.New()
	svc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sms.New(st, fakegateway.New(&fakegateway.Options{Clock: clk.Now, Delay: 10 * time.Second}), &sms.Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateAccount(context.Background(), &sms.CreateAccountParams{
		PartnerID: smsPartner, APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(100), TimeZone: "Africa/Nairobi",
	}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := &httpapi.Options{SMS: s, Logger: log, Clock: clk.Now}
	for _, f := range opts {
		f(o)
	}
	h := httpapi.New(svc, o)
	return &smsEnv{h: h, svc: s, clk: clk, log: &buf, mu: &mu}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// smsResp is a recorded answer.
type smsResp struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func (e *smsEnv) do(t *testing.T, method, path, contentType, body string) *smsResp {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	r := &smsResp{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if err := json.Unmarshal(rec.Body.Bytes(), &r.body); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, r.raw, err)
	}
	return r
}

func (e *smsEnv) post(t *testing.T, path, body string) *smsResp {
	t.Helper()
	return e.do(t, http.MethodPost, path, "application/json", body)
}

func (r *smsResp) code() int {
	n, _ := r.body["response-code"].(float64)
	return int(n)
}

func (r *smsResp) str(k string) string {
	s, _ := r.body[k].(string)
	return s
}

// smsBody builds a JSON body from alternating keys and values.
func smsBody(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func sendBody(kv ...any) string {
	base := []any{"apikey", smsKey, "partnerID", smsPartner, "mobile", smsMobile, "message", "Hello", "shortcode", "ACME"}
	return smsBody(append(base, kv...)...)
}

func TestSMSScenarios(t *testing.T) {
	t.Parallel()
	big := `{"apikey":"` + strings.Repeat("a", 1<<20) + `"}`
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		status      int
		code        int
		// desc must be contained in response-description.
		desc string
	}{
		{"send", "POST", "/sms/v1/messages", "", sendBody(), 200, 200, "Success"},
		{"send with partnerID as a number", "POST", "/sms/v1/messages", "", sendBody("partnerID", 1234), 200, 200, "Success"},
		{"send with mobile as a number", "POST", "/sms/v1/messages", "", sendBody("mobile", 254712345678), 200, 200, "Success"},
		{"send with pass_type plain", "POST", "/sms/v1/messages", "", sendBody("pass_type", "plain"), 200, 200, "Success"},
		{"send with member names in another case", "POST", "/sms/v1/messages", "",
			`{"APIKEY":"` + smsKey + `","partnerid":"1234","Mobile":"254712345678","message":"x","shortcode":"ACME"}`, 200, 200, "Success"},
		{"no partnerID", "POST", "/sms/v1/messages", "", sendBody("partnerID", ""), 401, 4091, "partnerID"},
		{"null partnerID", "POST", "/sms/v1/messages", "", sendBody("partnerID", nil), 401, 4091, "partnerID"},
		{"no apikey", "POST", "/sms/v1/messages", "", sendBody("apikey", ""), 401, 4092, "apikey"},
		{"wrong apikey", "POST", "/sms/v1/messages", "", sendBody("apikey", "sms_wrong_wrong_wrong_wrong"), 401, 1006, "Invalid credentials"},
		{"unknown partnerID", "POST", "/sms/v1/messages", "", sendBody("partnerID", "9999"), 401, 1006, "Invalid credentials"},
		{"bad mobile", "POST", "/sms/v1/messages", "", sendBody("mobile", "+254712345678"), 400, 1003, "mobile"},
		{"unreal mobile", "POST", "/sms/v1/messages", "", sendBody("mobile", "10000000000"), 400, 1003, "mobile"},
		{"unapproved shortcode", "POST", "/sms/v1/messages", "", sendBody("shortcode", "OTHER"), 400, 1001, "shortcode"},
		{"no message", "POST", "/sms/v1/messages", "", sendBody("message", ""), 400, 1009, "message"},
		{"10-part message", "POST", "/sms/v1/messages", "", sendBody("message", strings.Repeat("я", 670)), 200, 200, "Success"},
		{"bad timeToSend", "POST", "/sms/v1/messages", "", sendBody("timeToSend", "whenever"), 400, 1009, "timeToSend"},
		{"timeToSend as a float", "POST", "/sms/v1/messages", "", sendBody("timeToSend", 1.5), 400, 1009, "timeToSend"},
		{"partnerID as an object", "POST", "/sms/v1/messages", "", sendBody("partnerID", map[string]any{"a": 1}), 400, 1009, "partnerID: must be a string or an integer number"},
		{"partnerID as a float", "POST", "/sms/v1/messages", "", sendBody("partnerID", 12.5), 400, 1009, "partnerID"},
		{"partnerID negative", "POST", "/sms/v1/messages", "", sendBody("partnerID", -4), 400, 1009, "partnerID"},
		{"message as a number", "POST", "/sms/v1/messages", "", sendBody("message", 5), 400, 1009, "message: must be a string"},
		{"apikey as a boolean", "POST", "/sms/v1/messages", "", sendBody("apikey", true), 400, 1009, "apikey"},
		{"bad pass_type", "POST", "/sms/v1/messages", "", sendBody("pass_type", "hashed"), 400, 1009, "pass_type"},
		{"unknown member", "POST", "/sms/v1/messages", "", sendBody("priority", "high"), 400, 1010, "priority: unknown field"},
		{"malformed JSON", "POST", "/sms/v1/messages", "", `{"apikey": `, 400, 1010, "Unsupported request type"},
		{"array body", "POST", "/sms/v1/messages", "", `[1,2]`, 400, 1010, "JSON object"},
		{"empty body", "POST", "/sms/v1/messages", "", ``, 400, 1010, "body"},
		{"two objects", "POST", "/sms/v1/messages", "", sendBody() + sendBody(), 400, 1010, "one JSON object"},
		{"not UTF-8", "POST", "/sms/v1/messages", "", "{\"message\":\"\xff\"}", 400, 1010, "UTF-8"},
		{"form body", "POST", "/sms/v1/messages", "application/x-www-form-urlencoded", "apikey=x", 400, 1010, "Content-Type"},
		{"query string", "POST", "/sms/v1/messages?x=1", "", sendBody(), 400, 1010, "Unsupported request type"},
		{"too large", "POST", "/sms/v1/messages", "", big, 413, 1010, "bytes"},
		{"GET", "GET", "/sms/v1/messages", "", "", 405, 1010, "use POST"},
		{"unknown path", "POST", "/sms/v1/nope", "", sendBody(), 404, 1010, "no endpoint"},
		{"balance", "POST", "/sms/v1/account/balance", "", smsBody("apikey", smsKey, "partnerID", 1234), 200, 200, "Success"},
		{"balance wrong key", "POST", "/sms/v1/account/balance", "", smsBody("apikey", "x"+smsKey, "partnerID", smsPartner), 401, 1006, "Invalid credentials"},
		{"balance with a mobile", "POST", "/sms/v1/account/balance", "", smsBody("apikey", smsKey, "partnerID", smsPartner, "mobile", smsMobile), 400, 1010, "mobile: unknown field"},
		{"report unknown id", "POST", "/sms/v1/messages/delivery-report", "", smsBody("apikey", smsKey, "partnerID", smsPartner, "messageID", 999999), 404, 4093, "messageID"},
		{"report no id", "POST", "/sms/v1/messages/delivery-report", "", smsBody("apikey", smsKey, "partnerID", smsPartner), 400, 1009, "messageID"},
		{"report wrong key", "POST", "/sms/v1/messages/delivery-report", "", smsBody("apikey", "x", "partnerID", smsPartner, "messageID", 1), 401, 1006, "Invalid credentials"},
		{"bulk count mismatch", "POST", "/sms/v1/messages/bulk", "", `{"count":2,"smslist":[{}]}`, 400, 1012, "count"},
		{"bulk without count", "POST", "/sms/v1/messages/bulk", "", `{"smslist":[{}]}`, 400, 1012, "count"},
		{"bulk empty", "POST", "/sms/v1/messages/bulk", "", `{"count":0,"smslist":[]}`, 400, 1012, "smslist"},
		{"bulk without list", "POST", "/sms/v1/messages/bulk", "", `{"count":0}`, 400, 1012, "smslist"},
		{"bulk of 21", "POST", "/sms/v1/messages/bulk", "", `{"count":21,"smslist":[` + strings.TrimSuffix(strings.Repeat(`{},`, 21), ",") + `]}`, 400, 1012, "1 to 20"},
		{"bulk list not an array", "POST", "/sms/v1/messages/bulk", "", `{"count":1,"smslist":{}}`, 400, 1009, "smslist"},
		{"bulk count as a string", "POST", "/sms/v1/messages/bulk", "", `{"count":"1","smslist":[{}]}`, 400, 1009, "count"},
		{"bulk count as a float", "POST", "/sms/v1/messages/bulk", "", `{"count":1.5,"smslist":[{}]}`, 400, 1009, "count"},
		{"bulk unknown member", "POST", "/sms/v1/messages/bulk", "", `{"count":1,"smslist":[{}],"x":1}`, 400, 1010, "x: unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := smsSetup(t)
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			r := e.do(t, tc.method, tc.path, ct, tc.body)
			if r.status != tc.status || r.code() != tc.code || !strings.Contains(r.str("response-description"), tc.desc) {
				t.Errorf("%s %s: %d %s; want status %d, response-code %d, description containing %q", tc.method, tc.path, r.status, r.raw, tc.status, tc.code, tc.desc)
			}
			if r.header.Get("X-Correlation-ID") == "" {
				t.Error("no X-Correlation-ID")
			}
			if tc.code != 200 {
				keys := slices.Sorted(func(yield func(string) bool) {
					for k := range r.body {
						if !yield(k) {
							return
						}
					}
				})
				if d := cmp.Diff([]string{"response-code", "response-description"}, keys); d != "" {
					t.Errorf("error body is not flat (-want +got keys):\n%s", d)
				}
			}
			if tc.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow = %q, want POST", r.header.Get("Allow"))
			}
		})
	}
}

func TestSMSWrongKeyAndUnknownPartnerAreIndistinguishable(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	a := e.post(t, "/sms/v1/messages", sendBody("apikey", "sms_wrong_wrong_wrong_wrong"))
	b := e.post(t, "/sms/v1/messages", sendBody("apikey", "sms_wrong_wrong_wrong_wrong", "partnerID", "77777"))
	if a.status != b.status || a.raw != b.raw || a.status != 401 {
		t.Errorf("wrong key: %d %s; unknown partner: %d %s; want the same 401", a.status, a.raw, b.status, b.raw)
	}
}

func TestSMSSendAndBalance(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	r := e.post(t, "/sms/v1/messages", sendBody("message", strings.Repeat("a", 161))) // 2 parts
	if r.status != 200 || r.str("status") != "sent" || r.str("mobile") != smsMobile || !strings.HasPrefix(r.str("id"), "sms_") {
		t.Fatalf("send: %d %s", r.status, r.raw)
	}
	if _, err := strconv.ParseInt(r.str("providerMessageId"), 10, 64); err != nil {
		t.Errorf("providerMessageId %q is not a number: %v", r.str("providerMessageId"), err)
	}
	sched := e.post(t, "/sms/v1/messages", sendBody("timeToSend", "2026-03-04 13:02"))
	if sched.status != 200 || sched.str("status") != "scheduled" {
		t.Errorf("scheduled send: %d %s", sched.status, sched.raw)
	}
	unix := e.post(t, "/sms/v1/messages", sendBody("timeToSend", time.Date(2026, 3, 4, 11, 0, 0, 0, time.UTC).Unix()))
	if unix.status != 200 || unix.str("status") != "scheduled" {
		t.Errorf("send with a Unix timeToSend number: %d %s", unix.status, unix.raw)
	}
	b := e.post(t, "/sms/v1/account/balance", smsBody("apikey", smsKey, "partnerID", smsPartner))
	want := map[string]any{"response-code": 200.0, "response-description": "Success", "credit": "96.00", "partner-id": smsPartner}
	if d := cmp.Diff(want, b.body); d != "" {
		t.Errorf("balance after 4 credits (-want +got):\n%s", d)
	}
	low := e.post(t, "/sms/v1/messages", sendBody("message", strings.Repeat("я", 67*97)))
	if low.code() != 1009 {
		t.Errorf("97-part message: %s", low.raw)
	}
}

func TestSMSLowCredit(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	if err := e.svc.SetCostPerSegment(context.Background(), smsPartner, sms.Credits(30)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if r := e.post(t, "/sms/v1/messages", sendBody()); r.status != 200 {
			t.Fatalf("send: %s", r.raw)
		}
	}
	r := e.post(t, "/sms/v1/messages", sendBody())
	if r.status != 402 || r.code() != 1004 || !strings.HasPrefix(r.str("response-description"), "Low bulk credits") {
		t.Errorf("send on 10 credits at 30 a part: %d %s; want 402 1004", r.status, r.raw)
	}
	if b := e.post(t, "/sms/v1/account/balance", smsBody("apikey", smsKey, "partnerID", smsPartner)); b.str("credit") != "10.00" {
		t.Errorf("balance %s, want 10.00 (the refused send took nothing)", b.raw)
	}
}

func TestSMSBulkMixed(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	var items []string
	for i := range 20 {
		item := fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","pass_type":"plain","clientsmsid":%d,"mobile":"2547123456%02d","message":"Hi %d","shortcode":"ACME"}`,
			smsPartner, smsKey, 1000+i, i, i)
		switch i {
		case 1:
			item = fmt.Sprintf(`{"partnerID":"%s","apikey":"wrong-key-0123456789abcdef","clientsmsid":"ref-1","mobile":"254712345601","message":"x","shortcode":"ACME"}`, smsPartner)
		case 2:
			item = fmt.Sprintf(`{"partnerID":1234,"apikey":"%s","clientsmsid":"ref-2","mobile":"0712345602","message":"x","shortcode":"ACME"}`, smsKey)
		case 3:
			item = fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","clientsmsid":"ref-3","mobile":"254712345603","message":"x","shortcode":"NOPE"}`, smsPartner, smsKey)
		case 4:
			item = `7`
		case 5:
			item = fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","clientsmsid":"ref-5","mobile":"254712345605","message":"x","shortcode":"ACME","color":"red"}`, smsPartner, smsKey)
		case 6:
			item = fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","clientsmsid":{"a":1},"mobile":"254712345606","message":"x","shortcode":"ACME"}`, smsPartner, smsKey)
		case 7:
			item = fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","clientsmsid":"ref-7","mobile":{"n":1},"message":"x","shortcode":"ACME"}`, smsPartner, smsKey)
		case 8:
			item = fmt.Sprintf(`{"apikey":"%s","clientsmsid":"ref-8","mobile":"254712345608","message":"x","shortcode":"ACME"}`, smsKey)
		case 9:
			item = fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","clientsmsid":"ref-9","mobile":"254712345609","message":"later","shortcode":"ACME","timeToSend":"2026-03-05 08:00"}`, smsPartner, smsKey)
		case 10:
			item = fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","clientsmsid":"ref-10","mobile":"254712345610","message":"","shortcode":"ACME"}`, smsPartner, smsKey)
		}
		items = append(items, item)
	}
	r := e.post(t, "/sms/v1/messages/bulk", `{"count":20,"smslist":[`+strings.Join(items, ",")+`]}`)
	if r.status != 200 {
		t.Fatalf("bulk: %d %s", r.status, r.raw)
	}
	var out struct {
		Responses []map[string]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil || len(out.Responses) != 20 {
		t.Fatalf("bulk body %s: %v", r.raw, err)
	}
	wantCodes := map[int]string{1: "1006", 2: "1003", 3: "1001", 4: "1010", 5: "1010", 6: "1009", 7: "1009", 8: "4091", 10: "1009"}
	wantRef := map[int]string{1: `"ref-1"`, 2: `"ref-2"`, 3: `"ref-3"`, 4: ``, 5: `"ref-5"`, 6: ``, 7: `"ref-7"`, 8: `"ref-8"`, 9: `"ref-9"`, 10: `"ref-10"`}
	ok := 0
	seen := map[string]bool{}
	for i, got := range out.Responses {
		code := string(got["response-code"])
		ref := string(got["clientsmsid"])
		want, bad := wantCodes[i]
		if !bad {
			want = "200"
		}
		wr, has := wantRef[i]
		if !has {
			wr = strconv.Itoa(1000 + i) // numbers are echoed as numbers
		}
		if code != want || ref != wr {
			t.Errorf("item %d: %s; want response-code %s and clientsmsid %s", i, mustJSON(got), want, wr)
		}
		if want == "200" {
			ok++
			id := string(got["messageid"])
			if _, err := strconv.ParseInt(id, 10, 64); err != nil || seen[id] || string(got["networkid"]) != `"254"` || string(got["response-description"]) != `"Success"` {
				t.Errorf("accepted item %d: %s", i, mustJSON(got))
			}
			seen[id] = true
		} else if _, has := got["messageid"]; has {
			t.Errorf("refused item %d has a messageid: %s", i, mustJSON(got))
		}
	}
	if string(out.Responses[2]["mobile"]) != `"0712345602"` || string(out.Responses[7]["mobile"]) != `""` {
		t.Errorf("mobile echoes: %s, %s", out.Responses[2]["mobile"], out.Responses[7]["mobile"])
	}
	if ok != 11 {
		t.Errorf("%d items accepted, want 11", ok)
	}
	b := e.post(t, "/sms/v1/account/balance", smsBody("apikey", smsKey, "partnerID", smsPartner))
	if b.str("credit") != "89.00" {
		t.Errorf("balance after 11 accepted items: %s, want 89.00", b.raw)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSMSDeliveryReportFlow(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	r := e.post(t, "/sms/v1/messages", sendBody())
	id := r.str("providerMessageId")
	absent := e.post(t, "/sms/v1/messages", sendBody("mobile", "254712340000")).str("providerMessageId")
	dlr := func(id any) *smsResp {
		return e.post(t, "/sms/v1/messages/delivery-report", smsBody("apikey", smsKey, "partnerID", smsPartner, "messageID", id))
	}
	if d := dlr(id); d.status != 200 || d.code() != 1008 || d.str("response-description") != "No Delivery Report" {
		t.Errorf("report before sending: %d %s", d.status, d.raw)
	}
	e.clk.Add(time.Second)
	if _, err := e.svc.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := dlr(id); d.code() != 1008 {
		t.Errorf("report before the gateway has one: %s", d.raw)
	}
	e.clk.Add(10 * time.Second)
	n, _ := strconv.Atoi(id)
	d := dlr(n) // messageID as a number
	want := map[string]any{
		"response-code": 200.0, "response-description": "Success", "message-id": id,
		"delivery-status": 32.0, "delivery-description": "DeliveredToTerminal", "delivery-tat": "10s",
		"delivery-networkid": "254", "delivery-time": "2026-03-04 13:00:11",
	}
	if diff := cmp.Diff(want, d.body); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if a := dlr(absent); a.str("delivery-description") != "AbsentSubscriber" || a.code() != 200 {
		t.Errorf("report of a number ending 0000: %s", a.raw)
	}
}

func TestSMSRoutesAbsentWithoutSMS(t *testing.T) {
	t.Parallel()
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(svc, nil)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/sms/v1/messages", strings.NewReader(sendBody()))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != 404 || strings.Contains(rec.Body.String(), "response-code") {
		t.Errorf("without Options.SMS: %d %s; want the /v1 404", rec.Code, rec.Body.String())
	}
}

func TestSMSLogsNoSecrets(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	e.post(t, "/sms/v1/messages", sendBody("message", "secret text"))
	e.post(t, "/sms/v1/messages", sendBody("apikey", "sms_wrong_secret_key_000000"))
	e.post(t, "/sms/v1/messages/bulk", `{"count":1,"smslist":[`+sendBody()+`]}`)
	if _, err := e.svc.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	logs := e.log.String()
	e.mu.Unlock()
	if !strings.Contains(logs, "/sms/v1/messages") {
		t.Fatalf("no request log lines: %q", logs)
	}
	for _, secret := range []string{smsKey, "sms_wrong_secret_key_000000", "secret text"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain %q", secret)
		}
	}
}

// bulkEntries posts a bulk of items and returns its entries.
func (e *smsEnv) bulkEntries(t *testing.T, items ...string) []map[string]json.RawMessage {
	t.Helper()
	r := e.post(t, "/sms/v1/messages/bulk", fmt.Sprintf(`{"count":%d,"smslist":[%s]}`, len(items), strings.Join(items, ",")))
	if r.status != 200 {
		t.Fatalf("bulk: %d %s", r.status, r.raw)
	}
	var out struct {
		Responses []map[string]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil || len(out.Responses) != len(items) {
		t.Fatalf("bulk body %s: %v", r.raw, err)
	}
	return out.Responses
}

// bulkItem is an acceptable bulk item with the JSON clientsmsid ref.
func bulkItem(ref string) string {
	return fmt.Sprintf(`{"partnerID":"%s","apikey":"%s","clientsmsid":%s,"mobile":"%s","message":"x","shortcode":"ACME"}`, smsPartner, smsKey, ref, smsMobile)
}

// TestSMSBulkClientSMSIDCountsCharacters: the 128-character limit of
// clientsmsid counts the characters of the decoded string (not the bytes
// of its JSON, quotes and escapes included), or a number's digits.
func TestSMSBulkClientSMSIDCountsCharacters(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	tests := []struct {
		name, ref string
		code      string
	}{
		{"127 characters", `"` + strings.Repeat("a", 127) + `"`, "200"},
		{"128 characters", `"` + strings.Repeat("a", 128) + `"`, "200"},
		{"129 characters", `"` + strings.Repeat("a", 129) + `"`, "1009"},
		{"64 é", `"` + strings.Repeat("é", 64) + `"`, "200"},
		{"128 é", `"` + strings.Repeat("é", 128) + `"`, "200"},
		{"129 é", `"` + strings.Repeat("é", 129) + `"`, "1009"},
		{"128 escaped é", `"` + strings.Repeat(`\u00e9`, 128) + `"`, "200"},
		{"128 emoji", `"` + strings.Repeat("😀", 128) + `"`, "200"},
		{"128 digits", strings.Repeat("7", 128), "200"},
		{"129 digits", strings.Repeat("7", 129), "1009"},
	}
	var items []string
	for _, tc := range tests {
		items = append(items, bulkItem(tc.ref))
	}
	for i, got := range e.bulkEntries(t, items...) {
		tc := tests[i]
		if code := string(got["response-code"]); code != tc.code {
			t.Errorf("%s: %s; want response-code %s", tc.name, mustJSON(got), tc.code)
		}
		var want, echo any
		_ = json.Unmarshal([]byte(tc.ref), &want)
		_ = json.Unmarshal(got["clientsmsid"], &echo)
		if tc.code == "200" && !cmp.Equal(want, echo) {
			t.Errorf("%s: clientsmsid echoed as %s", tc.name, got["clientsmsid"])
		}
		if tc.code == "1009" && !strings.Contains(string(got["response-description"]), "clientsmsid: must be at most 128 characters") {
			t.Errorf("%s: description %s", tc.name, got["response-description"])
		}
	}
}

// TestSMSBulkItemNotAnObject: an item that is not a JSON object (null
// included) is refused alone with 1010 saying so, not read as an empty
// object.
func TestSMSBulkItemNotAnObject(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	items := []string{`null`, `7`, `"x"`, `[]`, `true`, ` null `, bulkItem(`"ok"`)}
	kinds := []string{"null", "number 7", "string", "array", "boolean", "null"}
	got := e.bulkEntries(t, items...)
	for i, kind := range kinds {
		want := fmt.Sprintf(`"Unsupported request type: smslist[%d]: must be a JSON object (got a JSON %s)"`, i, kind)
		if string(got[i]["response-code"]) != "1010" || string(got[i]["response-description"]) != want {
			t.Errorf("item %s: %s; want response-code 1010 and description %s", items[i], mustJSON(got[i]), want)
		}
	}
	if c := string(got[len(items)-1]["response-code"]); c != "200" {
		t.Errorf("the good item: %s", mustJSON(got[len(items)-1]))
	}
}
