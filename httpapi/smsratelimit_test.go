package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
)

// TestSMSRateLimitPerAccount: the SMS routes are limited per account and
// route. The N+1-th send of an account within the window is 429 with
// Retry-After and the flat 4095 body, and nothing is debited; another
// account, another route and the same account once a token is back are
// unaffected. Failing credentials spend the client address's
// unauthenticated bucket instead.
func TestSMSRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	e := smsSetup(t, func(o *httpapi.Options) {
		o.RateLimits = map[string]int{"POST /sms/v1/messages": 3, "POST /sms/v1/messages/bulk": 2, "unauthenticated": 2}
	})
	ctx := context.Background()
	const other, otherKey = "5678", "sms_other_0123456789abcdef0123456789"
	if _, _, err := e.svc.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: other, APIKey: otherKey, Senders: []string{"ACME"}, Credit: sms.Credits(100)}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if r := e.post(t, "/sms/v1/messages", sendBody()); r.status != 200 {
			t.Fatalf("send %d: %d %s", i+1, r.status, r.raw)
		}
	}
	before, err := e.svc.Balance(ctx, smsPartner, smsKey)
	if err != nil {
		t.Fatal(err)
	}
	r := e.post(t, "/sms/v1/messages", sendBody())
	if r.status != 429 || r.code() != sms.CodeRateLimited || r.header.Get("Retry-After") != "20" ||
		!strings.HasPrefix(r.str("response-description"), "Rate limit exceeded: partnerID: account \"1234\" made more than 3 requests a minute to POST /sms/v1/messages") {
		t.Fatalf("4th send: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.raw)
	}
	if len(r.body) != 2 || r.header.Get("X-RateLimit-Limit") != "3" || r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("4th send: body %v, X-RateLimit %q/%q", r.body, r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"))
	}
	if after, _ := e.svc.Balance(ctx, smsPartner, smsKey); after.Credit != before.Credit {
		t.Errorf("the refused send was debited: %s, then %s", before.Credit, after.Credit)
	}
	// Another account, and another route of the same account, go on.
	if r := e.post(t, "/sms/v1/messages", sendBody("partnerID", other, "apikey", otherKey)); r.status != 200 {
		t.Errorf("other account's send: %d %s", r.status, r.raw)
	}
	if r := e.post(t, "/sms/v1/account/balance", smsBody("apikey", smsKey, "partnerID", smsPartner)); r.status != 200 {
		t.Errorf("balance of the limited account: %d %s", r.status, r.raw)
	}
	// A token is back after 20 s (3 a minute).
	e.clk.Add(20 * time.Second)
	if r := e.post(t, "/sms/v1/messages", sendBody()); r.status != 200 {
		t.Errorf("send after Retry-After: %d %s", r.status, r.raw)
	}

	// Bulk: per account too, each account of the list spending a token.
	item := `{"partnerID":"1234","apikey":"` + smsKey + `","mobile":"254712345678","message":"Hi","shortcode":"ACME"}`
	bulk := `{"count":2,"smslist":[` + item + `,` + item + `]}`
	for i := range 2 {
		if r := e.post(t, "/sms/v1/messages/bulk", bulk); r.status != 200 {
			t.Fatalf("bulk %d: %d %s", i+1, r.status, r.raw)
		}
	}
	if r := e.post(t, "/sms/v1/messages/bulk", bulk); r.status != 429 || r.code() != sms.CodeRateLimited || r.header.Get("Retry-After") == "" {
		t.Errorf("3rd bulk: %d %s", r.status, r.raw)
	}

	// Failing credentials: the client address's bucket (2), not the account's.
	for i := range 2 {
		if r := e.post(t, "/sms/v1/account/balance", smsBody("apikey", "x"+smsKey, "partnerID", other)); r.status != 401 || r.code() != sms.CodeInvalidCredentials {
			t.Fatalf("wrong key %d: %d %s", i+1, r.status, r.raw)
		}
	}
	r = e.post(t, "/sms/v1/account/balance", smsBody("apikey", "x"+smsKey, "partnerID", other))
	if r.status != 429 || r.code() != sms.CodeRateLimited || r.header.Get("Retry-After") == "" {
		t.Errorf("3rd wrong key: %d %s", r.status, r.raw)
	}
	if r := e.post(t, "/sms/v1/account/balance", smsBody("apikey", otherKey, "partnerID", other)); r.status != 200 {
		t.Errorf("the right key after the address's refusals: %d %s", r.status, r.raw)
	}

	// A bulk of several failing keys spends one of the address's requests
	// per key: two guesses in one bulk spend the bucket of 2.
	e.clk.Add(time.Minute)
	guess := func(k string) string {
		return `{"partnerID":"1234","apikey":"` + k + `","mobile":"254712345678","message":"Hi","shortcode":"ACME"}`
	}
	if r := e.post(t, "/sms/v1/messages/bulk", `{"count":2,"smslist":[`+guess("x"+smsKey)+`,`+guess("y"+smsKey)+`]}`); r.status != 200 {
		t.Fatalf("bulk of two guesses: %d %s", r.status, r.raw)
	}
	r = e.post(t, "/sms/v1/account/balance", smsBody("apikey", "z"+smsKey, "partnerID", other))
	if r.status != 429 || r.code() != sms.CodeRateLimited {
		t.Errorf("a guess after a bulk of two guesses: %d %s; want 429", r.status, r.raw)
	}
}

// TestSMSRateLimitsDefaultAndOff: by default the balance route allows
// SMSRateLimits' 60 a minute per account; DisableRateLimits and a limit
// of 0 turn the limit off.
func TestSMSRateLimitsDefaultAndOff(t *testing.T) {
	t.Parallel()
	n := httpapi.SMSRateLimits()["POST /sms/v1/account/balance"]
	if n != 60 {
		t.Fatalf("default balance limit %d, want 60", n)
	}
	e := smsSetup(t)
	for i := range n + 1 {
		r := e.post(t, "/sms/v1/account/balance", smsBody("apikey", smsKey, "partnerID", smsPartner))
		if want := map[bool]int{true: 429, false: 200}[i == n]; r.status != want {
			t.Fatalf("balance %d: %d, want %d; %s", i+1, r.status, want, r.raw)
		}
	}
	for _, f := range []func(*httpapi.Options){
		func(o *httpapi.Options) { o.DisableRateLimits = true },
		func(o *httpapi.Options) { o.RateLimits = map[string]int{"POST /sms/v1/account/balance": 0} },
	} {
		e := smsSetup(t, f)
		for i := range httpapi.SMSRateLimits()["POST /sms/v1/account/balance"] + 1 {
			if r := e.post(t, "/sms/v1/account/balance", smsBody("apikey", smsKey, "partnerID", smsPartner)); r.status != 200 {
				t.Fatalf("balance %d: %d %s", i+1, r.status, r.raw)
			}
		}
	}
}
