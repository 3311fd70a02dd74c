package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
)

// postKeyed posts body to path with an Idempotency-Key header of each of
// keys (none: no header).
func (e *smsEnv) postKeyed(t *testing.T, path, body string, keys ...string) *smsResp {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add("Idempotency-Key", k)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	r := &smsResp{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if err := json.Unmarshal(rec.Body.Bytes(), &r.body); err != nil {
		t.Fatalf("POST %s: body %q is not a JSON object: %v", path, r.raw, err)
	}
	return r
}

func (e *smsEnv) credit(t *testing.T) string {
	t.Helper()
	return e.post(t, "/sms/v1/account/balance", smsBody("apikey", smsKey, "partnerID", smsPartner)).str("credit")
}

// wantReplay checks that again is first replayed: the same status and the
// same bytes, with Idempotent-Replayed: true, which first lacks.
func wantReplay(t *testing.T, what string, first, again *smsResp) {
	t.Helper()
	if v := first.header.Get("Idempotent-Replayed"); v != "" {
		t.Errorf("%s: first answer has Idempotent-Replayed %q", what, v)
	}
	if again.status != first.status || again.raw != first.raw {
		t.Errorf("%s: repeat answered %d %s, want the first answer %d %s", what, again.status, again.raw, first.status, first.raw)
	}
	if v := again.header.Get("Idempotent-Replayed"); v != "true" {
		t.Errorf("%s: repeat has Idempotent-Replayed %q, want true", what, v)
	}
}

func TestSMSIdempotencyKeyReplaysSend(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	body := sendBody("message", "Your order has shipped")
	first := e.postKeyed(t, "/sms/v1/messages", body, "order-42")
	if first.status != 200 || first.code() != 200 {
		t.Fatalf("send: %d %s", first.status, first.raw)
	}
	e.clk.Add(time.Minute)
	wantReplay(t, "send", first, e.postKeyed(t, "/sms/v1/messages", body, "order-42"))
	// The same request in another JSON form is the same request.
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	m["partnerID"] = 1234
	reordered, _ := json.MarshalIndent(m, "", "  ")
	wantReplay(t, "send re-encoded", first, e.postKeyed(t, "/sms/v1/messages", string(reordered), "order-42"))
	if c := e.credit(t); c != "99.00" {
		t.Errorf("credit %s after a send and two repeats, want 99.00", c)
	}
	// Another body with the key: refused, naming the header.
	r := e.postKeyed(t, "/sms/v1/messages", sendBody("message", "Your order was cancelled"), "order-42")
	if r.status != 409 || r.code() != sms.CodeIdempotencyConflict || !strings.Contains(r.str("response-description"), "Idempotency-Key") ||
		!strings.HasPrefix(r.str("response-description"), sms.CodeText(sms.CodeIdempotencyConflict)) || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("other body with the key: %d %s %v; want 409 4094 naming Idempotency-Key", r.status, r.raw, r.header)
	}
	// Another account may use the key; a wrong apikey gets no replay.
	const otherKey = "other_key_0123456789abcdef"
	if _, _, err := e.svc.CreateAccount(context.Background(), &sms.CreateAccountParams{PartnerID: "5678", APIKey: otherKey, Senders: []string{"ACME"}, Credit: sms.Credits(5)}); err != nil {
		t.Fatal(err)
	}
	theirs := e.postKeyed(t, "/sms/v1/messages", sendBody("message", "Your order has shipped", "partnerID", "5678", "apikey", otherKey), "order-42")
	if theirs.status != 200 || theirs.header.Get("Idempotent-Replayed") != "" || theirs.str("id") == first.str("id") {
		t.Errorf("5678 with 1234's key: %d %s %v; want a send of its own", theirs.status, theirs.raw, theirs.header)
	}
	wrong := e.postKeyed(t, "/sms/v1/messages", sendBody("message", "Your order has shipped", "apikey", otherKey), "order-42")
	if wrong.status != 401 || wrong.code() != sms.CodeInvalidCredentials || wrong.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("1234's key with a wrong apikey: %d %s", wrong.status, wrong.raw)
	}
	// Once the key is 24 hours old it is free again.
	e.clk.Add(sms.IdempotencyRetention)
	fresh := e.postKeyed(t, "/sms/v1/messages", body, "order-42")
	if fresh.status != 200 || fresh.header.Get("Idempotent-Replayed") != "" || fresh.str("id") == first.str("id") {
		t.Errorf("send with a key 24 h old: %d %s %v; want a new message", fresh.status, fresh.raw, fresh.header)
	}
}

func TestSMSIdempotencyKeyReplaysLowCredit(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	body := sendBody("message", strings.Repeat("я", 67*9)) // 9 parts
	if err := e.svc.SetCostPerSegment(context.Background(), smsPartner, sms.Credits(20)); err != nil {
		t.Fatal(err)
	}
	first := e.postKeyed(t, "/sms/v1/messages", body, "k")
	if first.status != 402 || first.code() != sms.CodeLowCredit {
		t.Fatalf("send of 180 credits on 100: %d %s", first.status, first.raw)
	}
	if _, err := e.svc.TopUp(context.Background(), smsPartner, sms.Credits(1000)); err != nil {
		t.Fatal(err)
	}
	wantReplay(t, "refusal for credit", first, e.postKeyed(t, "/sms/v1/messages", body, "k"))
	if c := e.credit(t); c != "1100.00" {
		t.Errorf("credit %s, want 1100.00", c)
	}
}

func TestSMSIdempotencyKeyRefusedHeaders(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	tests := []struct {
		name string
		keys []string
	}{
		{"empty", []string{""}},
		{"too long", []string{strings.Repeat("k", 256)}},
		{"not ASCII", []string{"caf\u00e9"}},
		{"tab", []string{"a\tb"}},
		{"control character", []string{"a\x7fb"}},
		{"given twice", []string{"a", "a"}},
	}
	for _, path := range []string{"/sms/v1/messages", "/sms/v1/messages/bulk"} {
		body := sendBody()
		if strings.HasSuffix(path, "bulk") {
			body = fmt.Sprintf(`{"count":1,"smslist":[%s]}`, bulkItem("1"))
		}
		for _, tc := range tests {
			r := e.postKeyed(t, path, body, tc.keys...)
			if r.status != 400 || r.code() != sms.CodeUnsupportedDataType || !strings.Contains(r.str("response-description"), "Idempotency-Key") {
				t.Errorf("%s with %s key: %d %s; want 400 1009 naming Idempotency-Key", path, tc.name, r.status, r.raw)
			}
		}
	}
	for _, key := range []string{"k", strings.Repeat("~", 255), "order 42 / retry?"} {
		if r := e.postKeyed(t, "/sms/v1/messages", sendBody(), key); r.status != 200 {
			t.Errorf("send with key %q: %d %s", key, r.status, r.raw)
		}
	}
	if c := e.credit(t); c != "97.00" {
		t.Errorf("credit %s, want 97.00 (three accepted sends)", c)
	}
}

func TestSMSIdempotencyKeyReplaysBulk(t *testing.T) {
	t.Parallel()
	e := smsSetup(t)
	items := []string{
		bulkItem("101"),
		bulkItem(`"ref-102"`),
		`{"partnerID":"1234","apikey":"` + smsKey + `","clientsmsid":103,"mobile":"0712345678","message":"x","shortcode":"ACME"}`,
		`"not an object"`,
		`{"partnerID":"1234","apikey":"` + smsKey + `","clientsmsid":105,"mobile":254712345678.5,"message":"x","shortcode":"ACME"}`,
		`{"partnerID":"1234","apikey":"wrong_key_0123456789abc","clientsmsid":106,"mobile":"254712345678","message":"x","shortcode":"ACME"}`,
	}
	body := fmt.Sprintf(`{"count":%d,"smslist":[%s]}`, len(items), strings.Join(items, ","))
	first := e.postKeyed(t, "/sms/v1/messages/bulk", body, "batch-7")
	if first.status != 200 {
		t.Fatalf("bulk: %d %s", first.status, first.raw)
	}
	var out struct {
		Responses []struct {
			Code int `json:"response-code"`
		} `json:"responses"`
	}
	if err := json.Unmarshal([]byte(first.raw), &out); err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, r := range out.Responses {
		codes = append(codes, r.Code)
	}
	if fmt.Sprint(codes) != "[200 200 1003 1010 1009 1006]" {
		t.Fatalf("bulk codes %v: %s", codes, first.raw)
	}
	wantReplay(t, "bulk", first, e.postKeyed(t, "/sms/v1/messages/bulk", body, "batch-7"))
	if c := e.credit(t); c != "98.00" {
		t.Errorf("credit %s after a bulk of two and its repeat, want 98.00", c)
	}
	// An item changed, even an unreadable one: refused.
	changed := strings.Replace(body, "254712345678.5", "254712345678.25", 1)
	if r := e.postKeyed(t, "/sms/v1/messages/bulk", changed, "batch-7"); r.status != 409 || r.code() != sms.CodeIdempotencyConflict {
		t.Errorf("bulk with another unreadable item: %d %s; want 409 4094", r.status, r.raw)
	}
	// Items of two accounts under one key: refused whole.
	two := fmt.Sprintf(`{"count":2,"smslist":[%s,%s]}`, bulkItem("1"), strings.Replace(bulkItem("2"), `"partnerID":"1234"`, `"partnerID":"5678"`, 1))
	r := e.postKeyed(t, "/sms/v1/messages/bulk", two, "batch-8")
	if r.status != 400 || r.code() != sms.CodeUnsupportedRequest || !strings.Contains(r.str("response-description"), "Idempotency-Key") {
		t.Errorf("keyed bulk of two accounts: %d %s; want 400 1010 naming Idempotency-Key", r.status, r.raw)
	}
	if r := e.post(t, "/sms/v1/messages/bulk", two); r.status != 200 {
		t.Errorf("the same bulk without a key: %d %s", r.status, r.raw)
	}
	// A single send with the bulk's key: refused.
	if r := e.postKeyed(t, "/sms/v1/messages", sendBody(), "batch-7"); r.status != 409 || r.code() != sms.CodeIdempotencyConflict {
		t.Errorf("send with a bulk's key: %d %s; want 409 4094", r.status, r.raw)
	}
}
