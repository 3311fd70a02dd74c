package httpapi_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

const callbackSecret = "cb-secret-7f3a9d0e5b1c4a28"

// callbackEnv is the SMS API with the delivery-report callback mounted,
// and one message handed over to the fake gateway (which reports nothing
// for an hour), known upstream as gwID.
type callbackEnv struct {
	h      http.Handler
	svc    *sms.SMS
	store  *memstore.Store
	log    *testlog.Buffer
	number int64
	gwID   string
}

func callbackSetup(t *testing.T, cb *httpapi.SMSCallback, wrap ...func(sms.Store) sms.Store) *callbackEnv {
	t.Helper()
	clk := &smsClock{t: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
	st := memstore.New()
	svc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var smsStore sms.Store = st
	for _, w := range wrap {
		smsStore = w(smsStore)
	}
	s, err := sms.New(smsStore, fakegateway.New(&fakegateway.Options{Clock: clk.Now, Delay: time.Hour}), &sms.Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := s.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: smsPartner, APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(100), TimeZone: "Africa/Nairobi"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Send(ctx, &sms.SendParams{PartnerID: smsPartner, APIKey: smsKey, Mobile: smsMobile, Message: "Hello", Shortcode: "ACME"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	if _, err := s.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := st.SMSMessageGet(ctx, smsPartner, res.Number)
	if err != nil || m.GatewayMessageID == "" {
		t.Fatalf("handed-over message %+v, %v", m, err)
	}
	nairobi, _ := time.LoadLocation("Africa/Nairobi")
	gw, err := advantagateway.New(&advantagateway.Options{BaseURL: "https://upstream.example", PartnerID: "p", APIKey: "k", Location: nairobi})
	if err != nil {
		t.Fatal(err)
	}
	if cb != nil && cb.Parse == nil {
		cb.Parse = gw.ParseDeliveryReport
	}
	buf := &testlog.Buffer{}
	h := httpapi.New(svc, &httpapi.Options{SMS: s, SMSCallback: cb, Clock: clk.Now,
		Logger: slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return &callbackEnv{h: h, svc: s, store: st, log: buf, number: res.Number, gwID: m.GatewayMessageID}
}

func (e *callbackEnv) push(t *testing.T, method, target string, header http.Header, body string) *smsResp {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	r := &smsResp{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if err := json.Unmarshal(rec.Body.Bytes(), &r.body); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", method, target, r.raw, err)
	}
	return r
}

func (e *callbackEnv) report(t *testing.T) *sms.Report {
	t.Helper()
	m, err := e.store.SMSMessageGet(context.Background(), smsPartner, e.number)
	if err != nil {
		t.Fatal(err)
	}
	return m.Report
}

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestSMSCallbackAppliesReports(t *testing.T) {
	t.Parallel()
	e := callbackSetup(t, &httpapi.SMSCallback{Secret: callbackSecret})
	withToken := httpapi.DefaultSMSCallbackPath + "?token=" + callbackSecret
	interim := `{"messageID":"` + e.gwID + `","deliveryStatus":2,"deliveryDescription":"SentToNetwork","timestamp":"2026-03-04 13:00:03"}`
	r := e.push(t, "POST", withToken, http.Header{"Content-Type": {"application/json"}}, interim)
	if r.status != 200 || r.code() != 200 || r.str("response-description") != "Success" {
		t.Fatalf("interim report: %d %s", r.status, r.raw)
	}
	if got := e.report(t); got == nil || got.Description != sms.DeliverySentToNetwork {
		t.Errorf("stored report %+v, want SentToNetwork", got)
	}
	// Signed with the HMAC, in getdlr's shape, no token; no Content-Type.
	final := `{"message-id":"` + e.gwID + `","delivery-status":32,"delivery-description":"DeliveredToTerminal","delivery-tat":"00:00:06","delivery-networkid":"1","delivery-time":"2026-03-04 13:00:07"}`
	r = e.push(t, "POST", httpapi.DefaultSMSCallbackPath, http.Header{"X-Signature": {sign(callbackSecret, final)}}, final)
	if r.status != 200 || r.code() != 200 {
		t.Fatalf("final report: %d %s", r.status, r.raw)
	}
	want := time.Date(2026, 3, 4, 10, 0, 7, 0, time.UTC)
	if got := e.report(t); got == nil || got.Description != sms.DeliveredToTerminal || got.Status != 32 || !got.Time.Equal(want) || got.NetworkID != "1" {
		t.Errorf("stored report %+v, want DeliveredToTerminal at %s on network 1", got, want)
	}
	// The delivery-report route answers with it.
	dr := e.push(t, "POST", "/sms/v1/messages/delivery-report", http.Header{"Content-Type": {"application/json"}},
		smsBody("apikey", smsKey, "partnerID", smsPartner, "messageID", e.number))
	if dr.code() != 200 || dr.str("delivery-description") != sms.DeliveredToTerminal || dr.str("delivery-tat") != "6s" {
		t.Errorf("delivery report after the push: %s", dr.raw)
	}
	// A later interim report is acknowledged and changes nothing.
	r = e.push(t, "POST", withToken, nil, interim)
	if r.status != 200 || r.code() != 200 {
		t.Errorf("interim after final: %d %s", r.status, r.raw)
	}
	if got := e.report(t); got.Description != sms.DeliveredToTerminal {
		t.Errorf("a final report moved back to %s", got.Description)
	}
	// An unknown id is acknowledged and logged, without the secret.
	r = e.push(t, "POST", withToken, nil, `{"messageID":"no-such-id","deliveryStatus":32}`)
	if r.status != 200 || r.code() != 200 {
		t.Errorf("unknown id: %d %s", r.status, r.raw)
	}
	logs := e.log.String()
	if !strings.Contains(logs, "no-such-id") || !strings.Contains(logs, "level=INFO") {
		t.Errorf("the unknown id is not logged at info:\n%s", logs)
	}
	if strings.Contains(logs, callbackSecret) {
		t.Errorf("the logs hold the callback secret:\n%s", logs)
	}
}

func TestSMSCallbackRefusals(t *testing.T) {
	t.Parallel()
	e := callbackSetup(t, &httpapi.SMSCallback{Secret: callbackSecret})
	good := `{"messageID":"` + e.gwID + `","deliveryStatus":32,"deliveryDescription":"DeliveredToTerminal"}`
	path := httpapi.DefaultSMSCallbackPath
	withToken := path + "?token=" + callbackSecret
	tests := []struct {
		label, method, target string
		header                http.Header
		body                  string
		status, code          int
	}{
		{"no secret", "POST", path, nil, good, 401, 1006},
		{"wrong token", "POST", path + "?token=" + callbackSecret + "x", nil, good, 401, 1006},
		{"token of the right length, wrong", "POST", path + "?token=" + strings.Repeat("x", len(callbackSecret)), nil, good, 401, 1006},
		{"token twice", "POST", withToken + "&token=" + callbackSecret, nil, good, 401, 1006},
		{"empty token", "POST", path + "?token=", nil, good, 401, 1006},
		{"signature of another body", "POST", path, http.Header{"X-Signature": {sign(callbackSecret, good+" ")}}, good, 401, 1006},
		{"signature with another key", "POST", path, http.Header{"X-Signature": {sign("other", good)}}, good, 401, 1006},
		{"signature without sha256=", "POST", path, http.Header{"X-Signature": {strings.TrimPrefix(sign(callbackSecret, good), "sha256=")}}, good, 401, 1006},
		{"truncated signature", "POST", path, http.Header{"X-Signature": {sign(callbackSecret, good)[:7+8]}}, good, 401, 1006},
		{"empty signature", "POST", path, http.Header{"X-Signature": {"sha256="}}, good, 401, 1006},
		{"signature not hex", "POST", path, http.Header{"X-Signature": {"sha256=zz"}}, good, 401, 1006},
		{"signature twice", "POST", path, http.Header{"X-Signature": {sign(callbackSecret, good), sign(callbackSecret, good)}}, good, 401, 1006},
		{"malformed JSON", "POST", withToken, nil, `{"messageID":`, 400, 1010},
		{"HTML", "POST", withToken, nil, `<html>report</html>`, 400, 1010},
		{"empty body", "POST", withToken, nil, ``, 400, 1010},
		{"unknown member", "POST", withToken, nil, `{"messageID":"` + e.gwID + `","deliveryStatus":32,"colour":"red"}`, 400, 1010},
		{"missing id", "POST", withToken, nil, `{"deliveryStatus":32,"deliveryDescription":"DeliveredToTerminal"}`, 400, 1010},
		{"bad timestamp", "POST", withToken, nil, `{"messageID":"` + e.gwID + `","deliveryStatus":32,"timestamp":"yesterday"}`, 400, 1010},
		{"GET", "GET", withToken, nil, ``, 405, 1010},
		{"too large", "POST", withToken, nil, `{"messageID":"` + strings.Repeat("9", 2<<20) + `"}`, 413, 1010},
	}
	for _, tc := range tests {
		r := e.push(t, tc.method, tc.target, tc.header, tc.body)
		if r.status != tc.status || r.code() != tc.code || len(r.body) != 2 || r.str("response-description") == "" {
			t.Errorf("%s: %d %s, want %d with a flat body of code %d", tc.label, r.status, r.raw, tc.status, tc.code)
		}
		if got := e.report(t); got != nil {
			t.Fatalf("%s: a report was applied: %+v", tc.label, got)
		}
	}
	if strings.Contains(e.log.String(), callbackSecret) {
		t.Errorf("the logs hold the callback secret:\n%s", e.log.String())
	}
}

func TestSMSCallbackNotMountedWithoutSecret(t *testing.T) {
	t.Parallel()
	for _, cb := range []*httpapi.SMSCallback{nil, {}, {Path: "/sms/v1/messages"}} {
		e := callbackSetup(t, cb)
		r := e.push(t, "POST", httpapi.DefaultSMSCallbackPath+"?token=", nil, `{"messageID":"`+e.gwID+`","deliveryStatus":32}`)
		if r.status != 404 || r.code() != 1010 {
			t.Errorf("callback %+v: %d %s, want the SMS API's 404", cb, r.status, r.raw)
		}
	}
	// A custom path; the default then is not a route.
	e := callbackSetup(t, &httpapi.SMSCallback{Secret: callbackSecret, Path: "/hooks/sms-dlr"})
	body := `{"messageID":"` + e.gwID + `","deliveryStatus":32}`
	if r := e.push(t, "POST", "/hooks/sms-dlr?token="+callbackSecret, nil, body); r.status != 200 || r.code() != 200 {
		t.Errorf("custom path: %d %s", r.status, r.raw)
	}
	if r := e.push(t, "POST", httpapi.DefaultSMSCallbackPath+"?token="+callbackSecret, nil, body); r.status != 404 {
		t.Errorf("default path with a custom one set: %d %s", r.status, r.raw)
	}
	// A path that is another route's is not mounted over it.
	e = callbackSetup(t, &httpapi.SMSCallback{Secret: callbackSecret, Path: "/sms/v1/messages"})
	if r := e.push(t, "POST", "/sms/v1/messages?token="+callbackSecret, http.Header{"Content-Type": {"application/json"}}, body); r.code() == 200 {
		t.Errorf("the callback took over /sms/v1/messages: %s", r.raw)
	}
}

// reportSaveFails is an SMS store whose report writes fail, with an
// error quoting internals.
type reportSaveFails struct {
	sms.Store
	unavailable bool
}

func (s reportSaveFails) SMSReportSave(ctx context.Context, p *sms.ReportSaveParams) (bool, error) {
	if s.unavailable {
		return false, fmt.Errorf("sqlite: /var/lib/secret.db: %w", messaging.ErrUnavailable)
	}
	return false, errors.New("UPDATE sms_messages SET dlr_status failed at /var/lib/secret.db")
}

// TestSMSCallbackStoreFailure: a store failure is 500 (503 when the store
// is away for a moment) with the flat 1005 body and no internal text, so
// the upstream sends the report again.
func TestSMSCallbackStoreFailure(t *testing.T) {
	t.Parallel()
	for _, unavailable := range []bool{false, true} {
		e := callbackSetup(t, &httpapi.SMSCallback{Secret: callbackSecret}, func(st sms.Store) sms.Store { return reportSaveFails{st, unavailable} })
		r := e.push(t, "POST", httpapi.DefaultSMSCallbackPath+"?token="+callbackSecret, nil, `{"messageID":"`+e.gwID+`","deliveryStatus":32}`)
		want := 500
		if unavailable {
			want = 503
		}
		if r.status != want || r.code() != 1005 || strings.Contains(r.raw, "secret.db") || len(r.body) != 2 {
			t.Errorf("unavailable %v: %d %s, want %d with a flat 1005 body and no internals", unavailable, r.status, r.raw, want)
		}
	}
}
