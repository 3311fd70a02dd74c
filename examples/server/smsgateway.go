package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
	"github.com/ujumbe/messaging/sms/fakegateway"
)

// smsGatewayConfig is what the flags and environment say of the SMS
// upstream.
type smsGatewayConfig struct {
	// kind is "fake" or "advanta".
	kind string
	// baseURL, credentialsFile and timeZone configure the advanta gateway;
	// the credentials come from the file when it is set, else from the
	// environment (partnerID, apikey).
	baseURL         string
	credentialsFile string
	partnerID       string
	apikey          string
	timeZone        string
	// callbackSecretFile, else callbackSecret, is the secret of the
	// delivery-report callback; callbackPath its path.
	callbackSecretFile string
	callbackSecret     string
	callbackPath       string
	// creditFloor ("" for none), checkEvery and pause configure the
	// upstream credit guard.
	creditFloor string
	checkEvery  time.Duration
	pause       bool
}

// minCallbackSecret is the shortest callback secret the server takes.
const minCallbackSecret = 16

// smsGateway is the server's SMS upstream: the gateway, and the callback
// route when pushed reports are received.
type smsGateway struct {
	gw       sms.Gateway
	callback *httpapi.SMSCallback
	// label names the gateway in the start-up log, without credentials.
	label string
}

// openSMSGateway makes the SMS gateway c describes and sets the credit
// guard's options in o. It refuses, naming what is missing or wrong, an
// advanta gateway without a base URL or credentials, a credentials or
// secret file readable by others, and a callback secret shorter than 16
// characters.
func openSMSGateway(c *smsGatewayConfig, o *sms.Options, log *slog.Logger) (*smsGateway, error) {
	if c.creditFloor != "" {
		floor, err := sms.ParseCredit(c.creditFloor)
		if err != nil || floor <= 0 {
			return nil, fmt.Errorf("-upstream-credit-floor: %q is not a positive amount such as 500 or 99.50", c.creditFloor)
		}
		o.UpstreamCreditFloor, o.UpstreamCreditCheckEvery, o.PauseBelowFloor = floor, c.checkEvery, c.pause
	} else if c.pause {
		return nil, errors.New("-pause-below-floor needs -upstream-credit-floor")
	}
	switch c.kind {
	case "", "fake":
		if c.callbackSecretFile != "" || c.callbackSecret != "" {
			log.Warn("the SMS callback secret is ignored: the fake SMS gateway pushes no delivery reports")
		}
		// The fake gateway accepts every message and reports it
		// DeliveredToTerminal (numbers ending in 0000: AbsentSubscriber)
		// smsDeliveredAfter after the hand-over.
		return &smsGateway{gw: fakegateway.New(&fakegateway.Options{Delay: smsDeliveredAfter}), label: "fake"}, nil
	case "advanta":
	default:
		return nil, fmt.Errorf("-sms-gateway: %q is neither fake nor advanta", c.kind)
	}
	partnerID, apikey := c.partnerID, c.apikey
	if c.credentialsFile != "" {
		var err error
		if partnerID, apikey, err = readCredentials(c.credentialsFile); err != nil {
			return nil, err
		}
	}
	var missing []string
	if c.baseURL == "" {
		missing = append(missing, "the upstream's base URL (-advanta-base-url or MESSAGING_ADVANTA_BASE_URL)")
	}
	switch {
	case c.credentialsFile != "" && partnerID == "":
		missing = append(missing, fmt.Sprintf("the partner id (partner_id in %s)", c.credentialsFile))
	case partnerID == "":
		missing = append(missing, "the partner id (MESSAGING_ADVANTA_PARTNER_ID, or -advanta-credentials-file)")
	}
	switch {
	case c.credentialsFile != "" && apikey == "":
		missing = append(missing, fmt.Sprintf("the apikey (apikey in %s)", c.credentialsFile))
	case apikey == "":
		missing = append(missing, "the apikey (MESSAGING_ADVANTA_APIKEY, or -advanta-credentials-file)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("-sms-gateway advanta needs %s", strings.Join(missing, ", "))
	}
	tz := c.timeZone
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "Local" {
		return nil, fmt.Errorf("-advanta-timezone: %q is not an IANA time zone name such as Africa/Nairobi", tz)
	}
	gw, err := advantagateway.New(&advantagateway.Options{BaseURL: c.baseURL, PartnerID: partnerID, APIKey: apikey, Location: loc})
	if err != nil {
		return nil, err
	}
	out := &smsGateway{gw: gw, label: "advanta"}
	secret := c.callbackSecret
	if c.callbackSecretFile != "" {
		b, err := readPrivateFile(c.callbackSecretFile)
		if err != nil {
			return nil, err
		}
		secret = strings.TrimSpace(string(b))
	}
	if secret != "" {
		if len(secret) < minCallbackSecret {
			return nil, fmt.Errorf("the SMS callback secret must be at least %d characters (got %d)", minCallbackSecret, len(secret))
		}
		out.callback = &httpapi.SMSCallback{Path: c.callbackPath, Secret: secret, Parse: gw.ParseDeliveryReport}
	}
	return out, nil
}

// readCredentials reads the upstream's partner id and apikey from a JSON
// file {"partner_id": "...", "apikey": "..."} (the partner id may be a
// number), refusing a file readable by others and members it does not
// know.
func readCredentials(path string) (partnerID, apikey string, err error) {
	b, err := readPrivateFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("-advanta-credentials-file: %w", err)
		}
		return "", "", err
	}
	var f struct {
		PartnerID any    `json:"partner_id"`
		APIKey    string `json:"apikey"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		// The decoder's error may quote the file; it never holds more
		// than a member name and an offset for these shapes, but say
		// only where.
		return "", "", fmt.Errorf("%s: not a JSON object {\"partner_id\": ..., \"apikey\": ...}", path)
	}
	switch p := f.PartnerID.(type) {
	case string:
		partnerID = p
	case json.Number:
		partnerID = p.String()
	case nil:
	default:
		return "", "", fmt.Errorf("%s: partner_id must be a string or a number", path)
	}
	return strings.TrimSpace(partnerID), strings.TrimSpace(f.APIKey), nil
}
