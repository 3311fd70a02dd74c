package advantagateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
)

func TestParseDeliveryReport(t *testing.T) {
	t.Parallel()
	nairobi, _ := time.LoadLocation("Africa/Nairobi")
	g, err := advantagateway.New(&advantagateway.Options{BaseURL: "https://upstream.example", PartnerID: partner, APIKey: key, Location: nairobi})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2020, 2, 16, 7, 15, 13, 0, time.UTC) // 10:15:13 in Nairobi
	tests := []struct {
		label string
		body  string
		id    string
		ref   string
		want  *sms.Report
		// errHas: the body is refused with an error containing it.
		errHas string
	}{
		{
			label: "camel case, numbers as numbers",
			body:  `{"messageID":8290842,"deliveryStatus":32,"deliveryDescription":"DeliveredToTerminal","deliveryTAT":"6s","deliveryNetworkID":1,"timestamp":"2020-02-16 10:15:13"}`,
			id:    "8290842", want: &sms.Report{Status: 32, Description: sms.DeliveredToTerminal, NetworkID: "1", Time: at},
		},
		{
			label: "with the clientsmsid, as a number",
			body:  `{"messageID":"8290843","clientsmsid":42,"deliveryStatus":2,"deliveryDescription":"SentToNetwork"}`,
			id:    "8290843", ref: "42", want: &sms.Report{Status: 2, Description: sms.DeliverySentToNetwork},
		},
		{
			label: "hyphens, as getdlr answers, numbers as strings",
			body:  `{"response-code":"200","response-description":"Success","message-id":"89999","delivery-status":"32","delivery-description":"DeliveredToTerminal","delivery-tat":"00:00:06","delivery-networkid":"1","delivery-time":"2020-02-16 10:15:13"}`,
			id:    "89999", want: &sms.Report{Status: 32, Description: sms.DeliveredToTerminal, NetworkID: "1", Time: at},
		},
		{
			label: "lower-case messageid, interim state, no time",
			body:  `{"messageid":"77","delivery-status":2,"delivery-description":"SentToNetwork"}`,
			id:    "77", want: &sms.Report{Status: 2, Description: sms.DeliverySentToNetwork},
		},
		{
			label: "a status without a description takes the status's",
			body:  `{"messageID":"78","deliveryStatus":3}`,
			id:    "78", want: &sms.Report{Status: 3, Description: sms.DeliveryAbsentSubscriber},
		},
		{
			label: "neither status nor description is Unknown",
			body:  ` {"messageID":" 79 "} `,
			id:    "79", want: &sms.Report{Description: sms.DeliveryUnknown},
		},
		{label: "malformed JSON", body: `{"messageID":"1",`, errHas: "truncated"},
		{label: "not JSON", body: `<html>hi</html>`, errHas: "malformed JSON"},
		{label: "empty body", body: ``, errHas: "empty"},
		{label: "an array", body: `[{"messageID":"1"}]`, errHas: "want a JSON object"},
		{label: "unknown member", body: `{"messageID":"1","deliveryStatus":32,"extra":true}`, errHas: `unknown member "extra"`},
		{label: "two objects", body: `{"messageID":"1"}{"messageID":"2"}`, errHas: "data after"},
		{label: "missing id", body: `{"deliveryStatus":32,"deliveryDescription":"DeliveredToTerminal"}`, errHas: "messageID is required"},
		{label: "empty id", body: `{"messageID":"","deliveryStatus":32}`, errHas: "messageID is required"},
		{label: "null id", body: `{"messageID":null}`, errHas: "messageID is required"},
		{label: "id as an object", body: `{"messageID":{"x":1}}`, errHas: "string or a number"},
		{label: "id in two spellings", body: `{"messageID":"1","message-id":"2"}`, errHas: "messageID is given twice"},
		{label: "status not a number", body: `{"messageID":"1","deliveryStatus":"delivered"}`, errHas: "deliveryStatus"},
		{label: "timestamp in another layout", body: `{"messageID":"1","timestamp":"16/02/2020 10:15"}`, errHas: "timestamp"},
		{label: "response-code other than 200", body: `{"response-code":1008,"message-id":"1"}`, errHas: "response-code"},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			t.Parallel()
			ur, err := g.ParseDeliveryReport([]byte(tc.body))
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("ParseDeliveryReport(%s) = %+v, %v; want an error with %q", tc.body, ur, err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDeliveryReport(%s): %v", tc.body, err)
			}
			if ur.GatewayMessageID != tc.id || ur.ClientRef != tc.ref {
				t.Errorf("id %q ref %q, want %q and %q", ur.GatewayMessageID, ur.ClientRef, tc.id, tc.ref)
			}
			if d := cmp.Diff(tc.want, ur.Report); d != "" {
				t.Errorf("report (-want +got):\n%s", d)
			}
		})
	}
}
