package httpapi_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
)

func TestStatusOfCodes(t *testing.T) {
	t.Parallel()
	statuses := map[messaging.Code]int{
		messaging.CodeUnauthorized: 401, messaging.CodeInvalidAPIKey: 401, messaging.CodeForbidden: 403,
		messaging.CodeNotFound: 404, messaging.CodeTemplateNotFound: 404, messaging.CodeConflict: 409,
		messaging.CodeValidation: 400, messaging.CodeChannelUnavailable: 422, messaging.CodeRateLimitExceeded: 429,
		messaging.CodeInternal: 500, messaging.Code("whatever"): 500,
		messaging.CodeServiceUnavailable: 503, httpapi.CodeMethodNotAllowed: 405, httpapi.CodePayloadTooLarge: 413,
	}
	for code, want := range statuses {
		if got := httpapi.StatusOf(code); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", code, got, want)
		}
	}
}

func TestSMSStatusOfErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", sms.NewError(sms.CodeSuccess, "", ""), 200},
		{"no delivery report yet", sms.NewError(sms.CodeNoDeliveryReport, "", ""), 200},
		{"invalid sender", sms.NewError(sms.CodeInvalidSender, "shortcode", "not approved"), 400},
		{"invalid mobile", sms.NewError(sms.CodeInvalidMobile, "mobile", "bad"), 400},
		{"unsupported data type", sms.NewError(sms.CodeUnsupportedDataType, "message", "bad"), 400},
		{"unsupported request", sms.NewError(sms.CodeUnsupportedRequest, "Idempotency-Key", "bad"), 400},
		{"too many messages", sms.NewError(sms.CodeTooManyMessages, "smslist", "bad"), 400},
		{"invalid credentials", &sms.Error{Code: sms.CodeInvalidCredentials}, 401},
		{"no partnerID", sms.NewError(sms.CodeNoPartnerID, "partnerID", ""), 401},
		{"no apikey", sms.NewError(sms.CodeNoAPIKey, "apikey", ""), 401},
		{"low credit", sms.NewError(sms.CodeLowCredit, "message", ""), 402},
		{"unknown message", sms.NewError(sms.CodeNotFound, "messageID", ""), 404},
		{"idempotency key reused", sms.NewError(sms.CodeIdempotencyConflict, "Idempotency-Key", ""), 409},
		{"rate limited", sms.NewError(sms.CodeRateLimited, "partnerID", ""), 429},
		{"an unknown error", errors.New("disk on fire"), 500},
		{"an unknown error as an *sms.Error", sms.AsError(errors.New("disk on fire")), 500},
		{"the store unavailable", sms.AsError(fmt.Errorf("dial: %w", messaging.ErrUnavailable)), 503},
		{"the store unavailable, wrapped", fmt.Errorf("send: %w", sms.AsError(fmt.Errorf("dial: %w", messaging.ErrUnavailable))), 503},
		{"an unknown code", &sms.Error{Code: 9999}, 400},
	}
	for _, tc := range tests {
		if got := httpapi.SMSStatus(tc.err); got != tc.want {
			t.Errorf("%s: SMSStatus(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}
