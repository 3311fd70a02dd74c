package httpapi_test

import (
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
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
