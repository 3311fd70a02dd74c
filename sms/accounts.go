package sms

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"slices"

	"github.com/ujumbe/messaging"
)

// Accounts: creating them, their sender ids, time zone and cost, and
// authenticating their requests.

// CreateAccountParams are the arguments of CreateAccount.
type CreateAccountParams struct {
	// PartnerID: 1 to 64 letters, digits, '_' or '-'.
	PartnerID string
	// APIKey: 20 to 128 visible ASCII characters; empty means generate one.
	APIKey string
	// Senders are approved sender ids (see ValidSender).
	Senders []string
	// Credit is the opening balance.
	Credit Credit
	// TimeZone is an IANA name; default "UTC".
	TimeZone string
	// CostPerSegment is what one SMS part costs, checked by
	// CheckCostPerSegment; 0 (the zero value) means Credits(1). A
	// surface that can tell an explicit 0 from an absent value refuses
	// the 0 with CheckCostPerSegment before calling CreateAccount.
	CostPerSegment Credit
}

// CreateAccount creates an account and returns it with its apikey in
// clear. The apikey is returned only here; the store keeps its SHA-256.
// Generated keys look like "smsk_" and 43 characters (256 random bits).
func (s *SMS) CreateAccount(ctx context.Context, p *CreateAccountParams) (*Account, string, error) {
	if p == nil {
		return nil, "", NewError(CodeUnsupportedDataType, "", "parameters are required")
	}
	if !partnerIDRe.MatchString(p.PartnerID) {
		return nil, "", NewError(CodeUnsupportedDataType, "partnerID", "must be 1 to 64 letters, digits, '_' or '-'")
	}
	key := p.APIKey
	if key == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, "", systemError(err)
		}
		key = "smsk_" + base64.RawURLEncoding.EncodeToString(b[:])
	} else if !messaging.WellFormedKey(key) {
		return nil, "", NewError(CodeUnsupportedDataType, "apikey", "must be 20 to 128 visible ASCII characters")
	}
	for _, sd := range p.Senders {
		if !ValidSender(sd) {
			return nil, "", NewError(CodeInvalidSender, "shortcodes", "%q is not a sender id: use 1 to 11 letters, digits, spaces, '.', '_', '&' or '-', or 1 to 15 digits", clip(sd))
		}
	}
	if p.Credit < 0 || p.Credit > MaxCredit {
		return nil, "", NewError(CodeUnsupportedDataType, "credit", "must be from 0 to %s", MaxCredit)
	}
	tz := p.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	if _, err := s.location(tz); err != nil {
		return nil, "", NewError(CodeUnsupportedDataType, "timezone", "must be an IANA time zone name such as Africa/Nairobi (got %q)", clip(tz))
	}
	cost := p.CostPerSegment
	if cost == 0 {
		cost = Credits(1)
	}
	if err := CheckCostPerSegment(cost); err != nil {
		return nil, "", err
	}
	senders := slices.Clone(p.Senders)
	slices.Sort(senders)
	senders = slices.Compact(senders)
	if senders == nil {
		senders = []string{}
	}
	now := s.now()
	sum := hashKey(key)
	a := &Account{
		PartnerID: p.PartnerID, KeyHash: sum[:], Senders: senders, Credit: p.Credit,
		TimeZone: tz, CostPerSegment: cost, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.store.SMSAccountCreate(ctx, a); err != nil {
		if errors.Is(err, messaging.ErrConflict) {
			e := NewError(CodeUnsupportedDataType, "partnerID", "an account %q exists already", p.PartnerID)
			e.Err = err
			return nil, "", e
		}
		return nil, "", systemError(err)
	}
	return a, key, nil
}

// GetAccount returns an account (with its key hash, never the key).
func (s *SMS) GetAccount(ctx context.Context, partnerID string) (*Account, error) {
	a, err := s.store.SMSAccountGet(ctx, partnerID)
	if err != nil {
		return nil, s.accountError(err, partnerID)
	}
	return a, nil
}

func (s *SMS) accountError(err error, partnerID string) error {
	if errors.Is(err, messaging.ErrNotFound) {
		return NewError(CodeNotFound, "partnerID", "no account %q", clip(partnerID))
	}
	return systemError(err)
}

// ApproveSender approves a sender id (shortcode) for an account. Approving
// an approved sender does nothing.
func (s *SMS) ApproveSender(ctx context.Context, partnerID, sender string) error {
	_, err := s.AddSender(ctx, partnerID, sender)
	return err
}

// AddSender is ApproveSender, returning the account after the change.
func (s *SMS) AddSender(ctx context.Context, partnerID, sender string) (*Account, error) {
	if !ValidSender(sender) {
		return nil, NewError(CodeInvalidSender, "shortcode", "%q is not a sender id: use 1 to 11 letters, digits, spaces, '.', '_', '&' or '-', or 1 to 15 digits", clip(sender))
	}
	a, err := s.store.SMSAccountUpdate(ctx, &AccountUpdate{PartnerID: partnerID, AddSenders: []string{sender}, At: s.now()})
	if err != nil {
		return nil, s.accountError(err, partnerID)
	}
	return a, nil
}

// SetTimeZone sets the IANA time zone in which an account's timeToSend
// values are read and its report times written.
func (s *SMS) SetTimeZone(ctx context.Context, partnerID, tz string) error {
	if _, err := s.location(tz); err != nil {
		return NewError(CodeUnsupportedDataType, "timezone", "must be an IANA time zone name such as Africa/Nairobi (got %q)", clip(tz))
	}
	_, err := s.store.SMSAccountUpdate(ctx, &AccountUpdate{PartnerID: partnerID, TimeZone: &tz, At: s.now()})
	if err != nil {
		return s.accountError(err, partnerID)
	}
	return nil
}

// Authenticate checks a partnerID and apikey and returns the account. A
// missing partnerID is CodeNoPartnerID, a missing apikey CodeNoAPIKey; an
// unknown partnerID and a wrong apikey give the same CodeInvalidCredentials
// answer after the same work: one read of the key hash (Store.SMSAccountKey)
// and a constant-time comparison of the key's SHA-256, against a random
// hash when the account does not exist. The rest of the account (its
// senders included) is read only once the key matched.
func (s *SMS) Authenticate(ctx context.Context, partnerID, apikey string) (*Account, error) {
	sum, err := s.checkKey(ctx, partnerID, apikey)
	if err != nil {
		return nil, err
	}
	a, err := s.store.SMSAccountGet(ctx, partnerID)
	if errors.Is(err, messaging.ErrNotFound) {
		return nil, errCredentials()
	}
	if err != nil {
		return nil, systemError(err)
	}
	if subtle.ConstantTimeCompare(sum[:], a.KeyHash) != 1 {
		return nil, errCredentials() // the key was replaced in between
	}
	return a, nil
}

// CheckCredentials returns nil when partnerID and apikey match an account,
// else the error Authenticate gives, after the same work as its first
// step (one read of the key hash, a constant-time comparison) and
// without reading the account. The REST layer uses it to charge a
// request to its account's rate limit before serving it.
func (s *SMS) CheckCredentials(ctx context.Context, partnerID, apikey string) error {
	_, err := s.checkKey(ctx, partnerID, apikey)
	return err
}

// checkKey is the first step of Authenticate: it checks the presence of
// partnerID and apikey, then the key against the account's key hash, and
// returns the key's SHA-256.
func (s *SMS) checkKey(ctx context.Context, partnerID, apikey string) ([32]byte, error) {
	var none [32]byte
	if partnerID == "" {
		return none, NewError(CodeNoPartnerID, "partnerID", "is required")
	}
	if apikey == "" {
		return none, NewError(CodeNoAPIKey, "apikey", "is required")
	}
	if err := unstorable("partnerID", partnerID, "apikey", apikey); err != nil {
		return none, err
	}
	sum := hashKey(apikey)
	want, found := s.dummyHash[:], false
	if partnerIDRe.MatchString(partnerID) {
		h, err := s.store.SMSAccountKey(ctx, partnerID)
		switch {
		case err == nil:
			want, found = h, true
		case !errors.Is(err, messaging.ErrNotFound):
			return none, systemError(err)
		}
	}
	if subtle.ConstantTimeCompare(sum[:], want) != 1 || !found {
		return none, errCredentials()
	}
	return sum, nil
}
