package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

func newSMS(t *testing.T, st *memstore.Store) *sms.SMS {
	t.Helper()
	s, err := sms.New(st, fakegateway.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const smsKey = "sms_0123456789abcdef0123456789abcdef"

func TestBootstrapSMSAccountsApplyIdempotently(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	s := newSMS(t, st)
	body := strings.Replace(goodBootstrap, `"sms_accounts": [`,
		`"sms_accounts": [{"partnerID": 77, "apikey": "sms_seventyseven_0123456789", "shortcodes": ["SEVEN", "77077"], "credit": "12.5", "cost_per_segment": 0.8},`, 1)
	f, err := loadBootstrap(writeFile(t, body))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyAll(ctx, svc, st, s, f, nil); err != nil {
		t.Fatalf("first apply: %v", err)
	}
	a, err := s.GetAccount(ctx, "1234")
	if err != nil {
		t.Fatal(err)
	}
	if a.Credit != sms.Credits(100) || a.TimeZone != "Africa/Nairobi" || a.CostPerSegment != sms.Credits(1) {
		t.Errorf("account 1234: %+v", a)
	}
	if d := cmp.Diff([]string{"ACME"}, a.Senders); d != "" {
		t.Errorf("senders of 1234 (-want +got):\n%s", d)
	}
	if _, err := s.Authenticate(ctx, "1234", smsKey); err != nil {
		t.Errorf("the bootstrap apikey does not authenticate: %v", err)
	}
	b, err := s.GetAccount(ctx, "77")
	if err != nil {
		t.Fatal(err)
	}
	if b.Credit != 1250 || b.CostPerSegment != 80 || b.TimeZone != "UTC" || len(b.Senders) != 2 {
		t.Errorf("account 77: %+v", b)
	}
	if _, err := svc.GetWorkspace(ctx, "acme"); err != nil {
		t.Errorf("the workspaces were not applied: %v", err)
	}

	// Spend some credit, then apply again: the opening credit is not
	// applied twice and the balance is left alone.
	if _, err := s.Send(ctx, &sms.SendParams{APIKey: smsKey, PartnerID: "1234", Mobile: "254712345678", Message: "hi", Shortcode: "ACME"}); err != nil {
		t.Fatal(err)
	}
	if err := applyAll(ctx, svc, st, s, f, nil); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	a, _ = s.GetAccount(ctx, "1234")
	if a.Credit != sms.Credits(99) {
		t.Errorf("credit after a send and a second apply: %s, want 99.00", a.Credit)
	}

	// Adding a shortcode and changing the time zone in the file applies to
	// the existing account.
	f.SMSAccounts[1].Shortcodes = append(f.SMSAccounts[1].Shortcodes, "BETA")
	f.SMSAccounts[1].TimeZone = "UTC"
	if err := applyAll(ctx, svc, st, s, f, nil); err != nil {
		t.Fatalf("third apply: %v", err)
	}
	a, _ = s.GetAccount(ctx, "1234")
	if d := cmp.Diff([]string{"ACME", "BETA"}, a.Senders); d != "" || a.TimeZone != "UTC" {
		t.Errorf("after the third apply: %+v", a)
	}
}

func TestBootstrapSMSAccountsRefusedAndNothingApplied(t *testing.T) {
	ctx := context.Background()
	acct := `{"partnerID": "1234", "apikey": "sms_0123456789abcdef0123456789abcdef", "shortcodes": ["ACME"], "credit": 100, "timezone": "Africa/Nairobi"}`
	for _, tc := range []struct {
		name, account, wantErr string
	}{
		{"no partnerID", `{"apikey": "sms_0123456789abcdef0123456789abcdef"}`, "sms_accounts[1].partnerID: is required"},
		{"bad partnerID", `{"partnerID": "a b", "apikey": "sms_0123456789abcdef0123456789abcdef"}`, "sms_accounts[1].partnerID: must be 1 to 64"},
		{"duplicate partnerID", acct, `sms_accounts[1].partnerID: account "1234" appears twice`},
		{"no apikey", `{"partnerID": "9"}`, "sms_accounts[1].apikey: is required"},
		{"short apikey", `{"partnerID": "9", "apikey": "short"}`, "sms_accounts[1].apikey: must be 20 to 128"},
		{"bad shortcode", `{"partnerID": "9", "apikey": "sms_0123456789abcdef0123456789abcdeX", "shortcodes": ["WAY TOO LONG A NAME"]}`, "sms_accounts[1].shortcodes:"},
		{"negative credit", `{"partnerID": "9", "apikey": "sms_0123456789abcdef0123456789abcdeX", "credit": -1}`, "sms_accounts[1].credit: must be a non-negative amount"},
		{"three decimals", `{"partnerID": "9", "apikey": "sms_0123456789abcdef0123456789abcdeX", "credit": 1.234}`, "sms_accounts[1].credit:"},
		{"zero cost", `{"partnerID": "9", "apikey": "sms_0123456789abcdef0123456789abcdeX", "cost_per_segment": 0}`, "sms_accounts[1].cost_per_segment: must be at least 0.01"},
		{"unknown zone", `{"partnerID": "9", "apikey": "sms_0123456789abcdef0123456789abcdeX", "timezone": "Mars/Base"}`, "sms_accounts[1].timezone: must be an IANA time zone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, st := newService(t)
			s := newSMS(t, st)
			body := strings.Replace(goodBootstrap, `"sms_accounts": [`, `"sms_accounts": [`+acct+`, `+tc.account+`, `, 1)
			body = strings.Replace(body, `, `+acct+`]`, `]`, 1) // drop the original element: acct is now first
			f, err := loadBootstrap(writeFile(t, body))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			err = applyAll(context.Background(), svc, st, s, f, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("apply error %v, want %q", err, tc.wantErr)
			}
			if _, err := s.GetAccount(ctx, "1234"); sms.AsError(err).Code != sms.CodeNotFound {
				t.Errorf("account 1234 exists after a refused file: %v", err)
			}
			if _, err := svc.GetWorkspace(ctx, "acme"); messaging.ErrorCode(err) != messaging.CodeNotFound {
				t.Errorf("workspace acme exists after a refused file: %v", err)
			}
		})
	}
}

func TestBootstrapSMSRefusesAnotherKeyForAnExistingAccount(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	s := newSMS(t, st)
	if _, _, err := s.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: "1234", APIKey: "sms_an_older_key_0123456789"}); err != nil {
		t.Fatal(err)
	}
	f, err := loadBootstrap(writeFile(t, goodBootstrap))
	if err != nil {
		t.Fatal(err)
	}
	err = applyAll(ctx, svc, st, s, f, nil)
	if err == nil || !strings.Contains(err.Error(), "sms_accounts[0].apikey: differs from the key of the existing account") {
		t.Fatalf("apply error %v", err)
	}
	if strings.Contains(err.Error(), smsKey) || strings.Contains(err.Error(), "older_key") {
		t.Errorf("the error repeats a key: %v", err)
	}
	if _, err := svc.GetWorkspace(ctx, "acme"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("workspace acme was applied although the file was refused: %v", err)
	}
}

func TestBootstrapSMSAccountsStrictDecoding(t *testing.T) {
	for _, bad := range []string{
		`{"sms_accounts": [{"partnerID": "1", "apikey": "sms_0123456789abcdef0123456789", "colour": "red"}]}`,
		`{"sms_accounts": [{"partnerID": 1.5, "apikey": "sms_0123456789abcdef0123456789"}]}`,
		`{"sms_accounts": [{"partnerID": "1", "apikey": "sms_0123456789abcdef0123456789", "credit": "lots"}]}`,
	} {
		if _, err := loadBootstrap(writeFile(t, bad)); err == nil {
			t.Errorf("loadBootstrap(%s) succeeded", bad)
		}
	}
}

// TestBootstrapSMSExistingAccountTakesTheFile: for an existing account, a
// time zone or cost left out of the file goes back to its default (the file
// says what holds), and a file that leaves out an approved shortcode is
// refused whole, naming the path, since shortcodes are not withdrawn.
func TestBootstrapSMSExistingAccountTakesTheFile(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	s := newSMS(t, st)
	body := strings.Replace(goodBootstrap, `"credit": 100, "timezone": "Africa/Nairobi"}`, `"credit": 100, "timezone": "Africa/Nairobi", "cost_per_segment": 2}`, 1)
	f, err := loadBootstrap(writeFile(t, body))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyAll(ctx, svc, st, s, f, nil); err != nil {
		t.Fatal(err)
	}
	f, err = loadBootstrap(writeFile(t, goodBootstrap))
	if err != nil {
		t.Fatal(err)
	}
	f.SMSAccounts[0].TimeZone = ""
	if err := applyAll(ctx, svc, st, s, f, nil); err != nil {
		t.Fatal(err)
	}
	a, _ := s.GetAccount(ctx, "1234")
	if a.TimeZone != "UTC" || a.CostPerSegment != sms.Credits(1) {
		t.Errorf("after a file without timezone and cost: zone %q, cost %s; want UTC and 1.00", a.TimeZone, a.CostPerSegment)
	}

	f.SMSAccounts[0].Shortcodes = []string{"OTHER"}
	f.SMSAccounts[0].TimeZone = "Africa/Nairobi"
	err = applyAll(ctx, svc, st, s, f, nil)
	if want := `sms_accounts[0].shortcodes: misses "ACME"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	a, _ = s.GetAccount(ctx, "1234")
	if d := cmp.Diff([]string{"ACME"}, a.Senders); d != "" || a.TimeZone != "UTC" {
		t.Errorf("a refused file changed the account: %+v", a)
	}
}

// TestBootstrapSMSCallback: callback_url with callback_secret registers
// the account's callback, again on a later start changes nothing, a new
// URL replaces it; a URL without a secret, a bad URL or a bad secret
// refuses the file with its path, before anything is applied.
func TestBootstrapSMSCallback(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	s, err := sms.New(st, fakegateway.New(nil), &sms.Options{Callbacks: &sms.CallbackOptions{Service: svc, WorkspaceID: smsCallbackWorkspace}})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	file := func(extra string) *bootstrapFile {
		t.Helper()
		f, err := loadBootstrap(writeFile(t, `{"sms_accounts": [{"partnerID": "cb", "apikey": "sms_callback_0123456789abc"`+extra+`}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct{ extra, wantErr string }{
		{`, "callback_url": "https://hooks.example.com/sms"`, "sms_accounts[0].callback_secret: is required"},
		{`, "callback_url": "ftp://hooks.example.com/sms", "callback_secret": "` + secret + `"`, "sms_accounts[0].callback_url: "},
		{`, "callback_url": "https://hooks.example.com/sms", "callback_secret": "nope"`, "sms_accounts[0].callback_secret: "},
	} {
		err := applyAll(ctx, svc, st, s, file(c.extra), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
			t.Errorf("%s: err = %v; want %q...", c.extra, err, c.wantErr)
		}
		if _, err := s.GetAccount(ctx, "cb"); err == nil {
			t.Fatalf("%s: the refused file created the account", c.extra)
		}
	}
	endpoints := func() []string {
		t.Helper()
		list, err := svc.Workspace(smsCallbackWorkspace).Webhooks.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, e := range list {
			urls = append(urls, e.URL)
		}
		return urls
	}
	for _, u := range []string{"https://hooks.example.com/sms", "https://hooks.example.com/sms", "https://hooks.example.com/v2"} {
		if err := applyAll(ctx, svc, st, s, file(`, "callback_url": "`+u+`", "callback_secret": "`+secret+`"`), nil); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if d := cmp.Diff([]string{u}, endpoints()); d != "" {
			t.Errorf("after a file with %s: endpoints (-want +got):\n%s", u, d)
		}
	}
}
