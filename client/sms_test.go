package client_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/sms"
)

// smsErr checks that err is the SMS API's answer code at HTTP status, and
// that errors.Is matches it with the library's code.
func smsErr(t *testing.T, err error, status, code int) {
	t.Helper()
	ce := apiError(t, err)
	if ce.StatusCode != status || ce.ResponseCode != code || !strings.HasPrefix(ce.ResponseDescription, sms.CodeText(code)) {
		t.Fatalf("%v: status %d code %d %q, want %d %d", err, ce.StatusCode, ce.ResponseCode, ce.ResponseDescription, status, code)
	}
	if !errors.Is(err, &client.Error{ResponseCode: code}) || errors.Is(err, &client.Error{ResponseCode: code + 1}) {
		t.Errorf("errors.Is with sms code %d does not tell it apart", code)
	}
}

// TestSMS calls every route of the SMS API: sends (replayed with the same
// key), a bulk send with each item's outcome, delivery reports and the
// balance, and the SMS error answers decoded.
func TestSMS(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	opts := e.options(nil)
	n := 0
	opts.NewIdempotencyKey = func() string { n++; return "key-" + strconv.Itoa(n) }
	c, err := client.NewSMS(e.srv.URL, smsPartner, smsKey, opts)
	if err != nil {
		t.Fatal(err)
	}

	sent, err := c.Send(ctx, &client.SMSSendParams{Mobile: "254712345678", Message: "Hello", Shortcode: "ACME"})
	if err != nil {
		t.Fatal(err)
	}
	if sent.Status != sms.SendStatusSent || sent.ID == "" || sent.ProviderMessageID == "" || sent.Replayed || sent.ResponseCode != 200 {
		t.Errorf("send: %+v", sent)
	}
	// The same request with the key the client gave the first: replayed.
	again, err := c.Send(ctx, &client.SMSSendParams{Mobile: "254712345678", Message: "Hello", Shortcode: "ACME", IdempotencyKey: "key-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.ID != sent.ID {
		t.Errorf("the same key again: %+v, want the first answer replayed (%s)", again, sent.ID)
	}

	bulkItems := []*client.SMSBulkItem{
		{ClientSMSID: "c1", Mobile: "254712345678", Message: "One", Shortcode: "ACME"},
		{ClientSMSID: "c2", Mobile: "12", Message: "Two", Shortcode: "ACME"},
		{ClientSMSID: "c3", Mobile: "254712345678", Message: "Three", Shortcode: "NOPE"},
	}
	bulk, err := c.Bulk(ctx, &client.SMSBulkParams{Items: bulkItems})
	if err != nil {
		t.Fatal(err)
	}
	// The same bulk request with the key the client gave it: replayed.
	bulkAgain, err := c.Bulk(ctx, &client.SMSBulkParams{Items: bulkItems, IdempotencyKey: "key-2"})
	if err != nil {
		t.Fatal(err)
	}
	if bulk.Replayed || !bulkAgain.Replayed {
		t.Errorf("bulk replayed %v, the same key again replayed %v; want false, true", bulk.Replayed, bulkAgain.Replayed)
	}
	var got [][3]any
	for _, r := range bulk.Responses {
		got = append(got, [3]any{r.ClientSMSID, r.ResponseCode, r.MessageID != 0})
	}
	want := [][3]any{{"c1", 200, true}, {"c2", client.SMSCodeInvalidMobile, false}, {"c3", client.SMSCodeInvalidSender, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bulk outcomes (-want +got):\n%s", diff)
	}
	if bulk.Responses[0].Err() != nil || !errors.Is(bulk.Responses[1].Err(), &client.Error{ResponseCode: client.SMSCodeInvalidMobile}) {
		t.Errorf("item errors: %v, %v", bulk.Responses[0].Err(), bulk.Responses[1].Err())
	}

	// 3 credits: two sent, a two-part message is more than is left.
	_, err = c.Send(ctx, &client.SMSSendParams{Mobile: "254712345678", Message: strings.Repeat("x", 200), Shortcode: "ACME"})
	smsErr(t, err, http.StatusPaymentRequired, client.SMSCodeLowCredit)
	_, err = c.Send(ctx, &client.SMSSendParams{Mobile: "0712", Message: "x", Shortcode: "ACME"})
	smsErr(t, err, http.StatusBadRequest, client.SMSCodeInvalidMobile)
	_, err = c.Send(ctx, &client.SMSSendParams{Mobile: "254712345678", Message: "x", Shortcode: "ACME", APIKey: "smsk_wrong_0123456789abcdefghij"})
	smsErr(t, err, http.StatusUnauthorized, client.SMSCodeInvalidCredentials)
	items := make([]*client.SMSBulkItem, client.SMSMaxBulk+1)
	for i := range items {
		items[i] = &client.SMSBulkItem{Mobile: "254712345678", Message: "x", Shortcode: "ACME"}
	}
	_, err = c.Bulk(ctx, &client.SMSBulkParams{Items: items})
	smsErr(t, err, http.StatusBadRequest, client.SMSCodeTooManyMessages)

	// No report before the hand-over: 1008 answered with HTTP 200 is
	// still an error.
	_, err = c.DeliveryReport(ctx, &client.SMSReportParams{MessageID: sent.ProviderMessageID})
	smsErr(t, err, http.StatusOK, client.SMSCodeNoDeliveryReport)
	if _, err := e.sms.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(11 * time.Second)
	rep, err := c.DeliveryReport(ctx, &client.SMSReportParams{MessageID: sent.ProviderMessageID})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Delivered() || rep.MessageID != sent.ProviderMessageID {
		t.Errorf("report: %+v, want delivered", rep)
	}
	_, err = c.DeliveryReport(ctx, &client.SMSReportParams{MessageID: "999999"})
	smsErr(t, err, http.StatusNotFound, client.SMSCodeNotFound)

	bal, err := c.Balance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if amt, err := bal.Amount(); err != nil || amt != client.Credits(1) || bal.PartnerID != smsPartner {
		t.Errorf("balance %+v: %v %v, want 1 credit", bal, amt, err)
	}
	wrong, err := client.NewSMS(e.srv.URL, smsPartner, "smsk_wrong_0123456789abcdefghij", opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.Balance(ctx)
	smsErr(t, err, http.StatusUnauthorized, client.SMSCodeInvalidCredentials)
}
