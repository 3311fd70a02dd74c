package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// bootstrapSMSAccount is one element of the bootstrap file's sms_accounts.
// partnerID may be a string or an integer; credit and cost_per_segment are
// amounts of credits with at most two decimals (numbers or strings).
type bootstrapSMSAccount struct {
	PartnerID      partnerIDValue `json:"partnerID"`
	APIKey         string         `json:"apikey"`
	Shortcodes     []string       `json:"shortcodes"`
	Credit         json.Number    `json:"credit"`
	TimeZone       string         `json:"timezone"`
	CostPerSegment json.Number    `json:"cost_per_segment"`
	// CallbackURL, when given, receives the account's final delivery
	// reports (sms.delivery_report events) signed with CallbackSecret,
	// which is then required (a generated secret would be shown to no
	// one).
	CallbackURL    string `json:"callback_url,omitempty"`
	CallbackSecret string `json:"callback_secret,omitempty"`
}

// partnerIDValue is a JSON string or integer number.
type partnerIDValue string

// UnmarshalJSON implements json.Unmarshaler.
func (p *partnerIDValue) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*p = partnerIDValue(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil && !strings.ContainsAny(n.String(), ".eE-+") {
		*p = partnerIDValue(n.String())
		return nil
	}
	return errors.New("partnerID must be a string or an integer")
}

// applyAll applies a bootstrap file to the messaging service and the SMS
// service: the sms_accounts are first checked (on an empty in-memory SMS
// service and against the live accounts), then the workspaces are applied
// (see applyBootstrap; st is the store svc runs on), then the
// sms_accounts. A file with any error is refused before anything is
// applied.
func applyAll(ctx context.Context, svc *messaging.Service, st driver.Store, smsSvc *sms.SMS, f *bootstrapFile, log *slog.Logger) error {
	// Its changes are audited as the bootstrap's.
	ctx = messaging.WithActor(ctx, "bootstrap")
	if err := checkSMSBootstrap(ctx, svc, smsSvc, f); err != nil {
		return err
	}
	if err := applyBootstrap(ctx, svc, st, f, log); err != nil {
		return err
	}
	return applySMSBootstrap(ctx, smsSvc, f.SMSAccounts)
}

// checkSMSBootstrap validates the sms_accounts of f without changing
// anything: it applies them to an empty in-memory SMS service, then checks
// that every account that exists already has the apikey the file gives.
func checkSMSBootstrap(ctx context.Context, svc *messaging.Service, live *sms.SMS, f *bootstrapFile) error {
	// The callbacks are checked against a dry messaging service with the
	// live one's address policy.
	loopback, private := svc.WebhookAddressPolicy()
	if err := dryApplySMS(ctx, f, loopback, private); err != nil {
		return err
	}
	for i, a := range f.SMSAccounts {
		if err := checkExistingKey(ctx, live, a); err != nil {
			return fmt.Errorf("sms_accounts[%d].apikey: %w", i, err)
		}
		cur, err := live.GetAccount(ctx, string(a.PartnerID))
		if err != nil {
			if sms.AsError(err).Code == sms.CodeNotFound {
				continue
			}
			return err
		}
		for _, sc := range cur.Senders {
			if !slices.Contains(a.Shortcodes, sc) {
				return fmt.Errorf("sms_accounts[%d].shortcodes: misses %q, approved for the existing account %q; the bootstrap file does not withdraw shortcodes, so list it", i, sc, cur.PartnerID)
			}
		}
	}
	return nil
}

// checkExistingKey returns an error when the account exists with another
// apikey: keys are not changed by the bootstrap file.
func checkExistingKey(ctx context.Context, s *sms.SMS, a bootstrapSMSAccount) error {
	id := string(a.PartnerID)
	if _, err := s.GetAccount(ctx, id); err != nil {
		if sms.AsError(err).Code == sms.CodeNotFound {
			return nil
		}
		return err
	}
	if _, err := s.Authenticate(ctx, id, a.APIKey); err != nil {
		if sms.AsError(err).Code == sms.CodeSystemError {
			return err
		}
		return fmt.Errorf("differs from the key of the existing account %q; the bootstrap file does not change keys", id)
	}
	return nil
}

// dryApplySMS applies f's sms_accounts to an empty in-memory SMS service
// whose callbacks go to a dry messaging service with the given webhook
// address policy. It needs no store.
func dryApplySMS(ctx context.Context, f *bootstrapFile, loopback, private bool) error {
	st := memstore.New()
	dryMsg, err := messaging.New(st, fakeprovider.New(), &messaging.Options{SecretKey: make([]byte, 32),
		Webhooks: messaging.WebhookOptions{AllowLoopback: loopback, AllowPrivate: private}})
	if err != nil {
		return err
	}
	dry, err := sms.New(st, fakegateway.New(nil), &sms.Options{Callbacks: &sms.CallbackOptions{Service: dryMsg, WorkspaceID: smsCallbackWorkspace}})
	if err != nil {
		return err
	}
	return applySMSBootstrap(ctx, dry, f.SMSAccounts)
}

// validateBootstrap checks f as applyAll would before it reads any
// record: every element is applied to empty in-memory services. The
// server runs it before creating any file.
func validateBootstrap(ctx context.Context, f *bootstrapFile, loopback, private bool) error {
	// Only memory is touched: the check runs to its end even when ctx is
	// cancelled.
	ctx = messaging.WithActor(context.WithoutCancel(ctx), "bootstrap")
	if err := dryApplySMS(ctx, f, loopback, private); err != nil {
		return err
	}
	return dryApply(ctx, f, loopback, private)
}

// applySMSBootstrap creates the accounts that do not exist, with their
// opening credit, and for every existing account approves its shortcodes
// and sets its time zone and cost per segment, a field left out taking its
// default (UTC, 1 credit). Applying it twice changes nothing: credit is
// only the opening balance of a new account.
func applySMSBootstrap(ctx context.Context, s *sms.SMS, accounts []bootstrapSMSAccount) error {
	seen := map[string]bool{}
	for i, a := range accounts {
		p := fmt.Sprintf("sms_accounts[%d]", i)
		id := string(a.PartnerID)
		if id == "" {
			return fmt.Errorf("%s.partnerID: is required", p)
		}
		if seen[id] {
			return fmt.Errorf("%s.partnerID: account %q appears twice", p, id)
		}
		seen[id] = true
		if a.APIKey == "" {
			return fmt.Errorf("%s.apikey: is required", p)
		}
		credit, err := amount(a.Credit)
		if err != nil {
			return fmt.Errorf("%s.credit: %w", p, err)
		}
		cost, err := amount(a.CostPerSegment)
		if err != nil {
			return fmt.Errorf("%s.cost_per_segment: %w", p, err)
		}
		if a.CostPerSegment != "" && cost == 0 {
			return fmt.Errorf("%s.cost_per_segment: must be at least 0.01", p)
		}
		_, err = s.GetAccount(ctx, id)
		switch {
		case err != nil && sms.AsError(err).Code == sms.CodeNotFound:
			if _, _, err := s.CreateAccount(ctx, &sms.CreateAccountParams{
				PartnerID: id, APIKey: a.APIKey, Senders: a.Shortcodes, Credit: credit, TimeZone: a.TimeZone, CostPerSegment: cost,
			}); err != nil {
				return smsPathError(p, err)
			}
			if err := applySMSCallback(ctx, s, p, a); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		for j, sc := range a.Shortcodes {
			if err := s.ApproveSender(ctx, id, sc); err != nil {
				return smsPathError(fmt.Sprintf("%s.shortcodes[%d]", p, j), err)
			}
		}
		tz := a.TimeZone
		if tz == "" {
			tz = "UTC"
		}
		if err := s.SetTimeZone(ctx, id, tz); err != nil {
			return smsPathError(p, err)
		}
		if cost == 0 {
			cost = sms.Credits(1)
		}
		if err := s.SetCostPerSegment(ctx, id, cost); err != nil {
			return smsPathError(p, err)
		}
		if err := applySMSCallback(ctx, s, p, a); err != nil {
			return err
		}
	}
	return nil
}

// applySMSCallback registers the account's callback_url with its
// callback_secret, unless the account has that URL already (a secret
// cannot be compared: it is stored sealed; change the URL, or use the
// operator API, to change it).
func applySMSCallback(ctx context.Context, s *sms.SMS, p string, a bootstrapSMSAccount) error {
	if a.CallbackURL == "" {
		if a.CallbackSecret != "" {
			return fmt.Errorf("%s.callback_secret: is given without callback_url", p)
		}
		return nil
	}
	if a.CallbackSecret == "" {
		return fmt.Errorf("%s.callback_secret: is required with callback_url (a generated secret would be shown to no one)", p)
	}
	cur, err := s.GetCallback(ctx, string(a.PartnerID))
	if err != nil {
		return fmt.Errorf("%s.callback_url: %w", p, err)
	}
	if cur != nil && cur.URL == a.CallbackURL {
		return nil
	}
	if _, _, err := s.SetCallback(ctx, string(a.PartnerID), a.CallbackURL, a.CallbackSecret); err != nil {
		var me *messaging.Error
		if errors.As(err, &me) && me.Field != "" {
			return fmt.Errorf("%s.callback_%s", p, me.Message) // me.Message starts with "url: " or "secret: "
		}
		return fmt.Errorf("%s.callback_url: %w", p, err)
	}
	return nil
}

// amount parses an optional amount of credits.
func amount(n json.Number) (sms.Credit, error) {
	if n == "" {
		return 0, nil
	}
	return sms.ParseCredit(n.String())
}

// smsPathError prefixes an *sms.Error with the JSON path of the element at
// fault: "sms_accounts[0].timezone: must be ...".
func smsPathError(path string, err error) error {
	e := sms.AsError(err)
	if e.Code == sms.CodeSystemError {
		return err
	}
	rule := e.Description
	if e.Field != "" {
		if _, r, ok := strings.Cut(rule, ": "+e.Field+": "); ok {
			field := e.Field
			if field == "shortcode" {
				return fmt.Errorf("%s: %s", path, r)
			}
			return fmt.Errorf("%s.%s: %s", path, field, r)
		}
	}
	return fmt.Errorf("%s: %s", path, rule)
}

// smsDeliveredAfter is when the fake SMS gateway of the server reports a
// message delivered, after its hand-over.
const smsDeliveredAfter = 5 * time.Second

// smsCallbackWorkspace is the workspace holding the webhook endpoints of
// the SMS accounts' callbacks (see sms.CallbackOptions).
const smsCallbackWorkspace = "sms-callbacks"
