package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
)

const (
	upstreamPartner = "9876"
	upstreamKey     = "upstream-apikey-5f1d0c7b9e2a4386"
	upstreamSecret  = "callback-secret-a81c2e9d4b7f"
)

// privateFile writes body to a new file of the given mode.
func privateFile(t *testing.T, name, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenSMSGatewayRefusals(t *testing.T) {
	t.Parallel()
	creds := privateFile(t, "creds.json", `{"partner_id": 9876, "apikey": "`+upstreamKey+`"}`, 0o600)
	tests := []struct {
		label string
		c     smsGatewayConfig
		// want are the parts of the error.
		want []string
	}{
		{"unknown gateway", smsGatewayConfig{kind: "twilio"}, []string{`"twilio" is neither fake nor advanta`}},
		{"advanta with nothing", smsGatewayConfig{kind: "advanta"},
			[]string{"base URL (-advanta-base-url or MESSAGING_ADVANTA_BASE_URL)", "partner id (MESSAGING_ADVANTA_PARTNER_ID", "apikey (MESSAGING_ADVANTA_APIKEY"}},
		{"advanta without the apikey", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", partnerID: upstreamPartner},
			[]string{"needs the apikey (MESSAGING_ADVANTA_APIKEY, or -advanta-credentials-file)"}},
		{"advanta without the partner id", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", apikey: upstreamKey},
			[]string{"needs the partner id (MESSAGING_ADVANTA_PARTNER_ID, or -advanta-credentials-file)"}},
		{"advanta without the base URL", smsGatewayConfig{kind: "advanta", credentialsFile: creds}, []string{"needs the upstream's base URL"}},
		{"credentials file readable by the group", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example",
			credentialsFile: privateFile(t, "group.json", `{"partner_id": "1", "apikey": "k"}`, 0o640)}, []string{"group.json", "mode is 0640", "chmod 600"}},
		{"credentials file readable by all", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example",
			credentialsFile: privateFile(t, "all.json", `{"partner_id": "1", "apikey": "k"}`, 0o604)}, []string{"all.json", "mode is 0604"}},
		{"credentials file without the apikey", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example",
			credentialsFile: privateFile(t, "nokey.json", `{"partner_id": "1"}`, 0o600)}, []string{"needs the apikey (apikey in ", "nokey.json"}},
		{"credentials file with an unknown member", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example",
			credentialsFile: privateFile(t, "extra.json", `{"partner_id": "1", "apikey": "`+upstreamKey+`", "password": "x"}`, 0o600)}, []string{"extra.json: not a JSON object"}},
		{"credentials file missing", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", credentialsFile: "/nonexistent/creds.json"},
			[]string{"-advanta-credentials-file", "/nonexistent/creds.json"}},
		{"a base URL that is not one", smsGatewayConfig{kind: "advanta", baseURL: "quicksms", credentialsFile: creds}, []string{"absolute http(s) URL"}},
		{"a bad time zone", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", credentialsFile: creds, timeZone: "Mars/Olympus"}, []string{"-advanta-timezone"}},
		{"a short callback secret", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", credentialsFile: creds, callbackSecret: "short"},
			[]string{"at least 16 characters (got 5)"}},
		{"a callback secret file readable by others", smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", credentialsFile: creds,
			callbackSecretFile: privateFile(t, "secret", upstreamSecret, 0o644)}, []string{"secret holds a secret but its mode is 0644"}},
		{"a floor that is not an amount", smsGatewayConfig{creditFloor: "lots"}, []string{"-upstream-credit-floor", `"lots"`}},
		{"a zero floor", smsGatewayConfig{creditFloor: "0"}, []string{"-upstream-credit-floor"}},
		{"a pause without a floor", smsGatewayConfig{pause: true}, []string{"-pause-below-floor needs -upstream-credit-floor"}},
	}
	for _, tc := range tests {
		_, err := openSMSGateway(&tc.c, &sms.Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil {
			t.Errorf("%s: started", tc.label)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.label, err, w)
			}
		}
		if strings.Contains(err.Error(), upstreamKey) {
			t.Errorf("%s: the error holds the apikey: %q", tc.label, err)
		}
	}
}

func TestOpenSMSGateway(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Fake, the default.
	o := &sms.Options{}
	g, err := openSMSGateway(&smsGatewayConfig{}, o, log)
	if err != nil || g.label != "fake" || g.callback != nil || o.UpstreamCreditFloor != 0 {
		t.Errorf("default: %+v, %v; options %+v", g, err, o)
	}
	// Advanta from the environment's values, no callback secret.
	g, err = openSMSGateway(&smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", partnerID: upstreamPartner, apikey: upstreamKey}, o, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.gw.(*advantagateway.Gateway); !ok || g.callback != nil {
		t.Errorf("advanta from env: %T, callback %+v", g.gw, g.callback)
	}
	// From the file (the file wins over the environment), with a secret
	// file, a floor and the pause.
	creds := privateFile(t, "creds.json", `{"partner_id": 9876, "apikey": "`+upstreamKey+`"}`, 0o400)
	secret := privateFile(t, "secret", upstreamSecret+"\n", 0o600)
	o = &sms.Options{}
	g, err = openSMSGateway(&smsGatewayConfig{kind: "advanta", baseURL: "https://up.example", credentialsFile: creds, partnerID: "other", apikey: "other",
		callbackSecretFile: secret, callbackPath: "/hooks/dlr", creditFloor: "250.50", checkEvery: time.Minute, pause: true, timeZone: "Africa/Nairobi"}, o, log)
	if err != nil {
		t.Fatal(err)
	}
	if g.callback == nil || g.callback.Secret != upstreamSecret || g.callback.Path != "/hooks/dlr" || g.callback.Parse == nil {
		t.Errorf("callback %+v", g.callback)
	}
	if o.UpstreamCreditFloor != sms.Credits(250)+50 || o.UpstreamCreditCheckEvery != time.Minute || !o.PauseBelowFloor {
		t.Errorf("credit guard options %+v", o)
	}
	// The parser reads times in the upstream's zone.
	ur, err := g.callback.Parse([]byte(`{"messageID":"1","deliveryStatus":32,"timestamp":"2026-03-04 13:00:00"}`))
	if err != nil || !ur.Report.Time.Equal(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("parsed %+v, %v; want 10:00 UTC", ur, err)
	}
}
