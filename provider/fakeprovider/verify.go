package fakeprovider

import (
	"context"
	"crypto/subtle"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/record"
)

var (
	_ messaging.ConnectionVerifier = (*Provider)(nil)
	_ messaging.ChannelProvider    = (*Provider)(nil)
)

// Channels implements messaging.ChannelProvider: the simulator serves
// Meta's channels, with the specs of metaprovider (field names, id rules,
// text limits).
func (p *Provider) Channels() []messaging.ChannelSpec { return metaprovider.ChannelSpecs() }

// Token prefixes VerifyConnection answers specially.
const (
	// DenyTokenPrefix starts a token VerifyConnection refuses (Meta's 190).
	DenyTokenPrefix = "deny_"
	// UnreachableTokenPrefix starts a token VerifyConnection cannot
	// verify, as if the provider were down.
	UnreachableTokenPrefix = "unreachable_"
)

// SetAccountToken makes token the only access token that proves account
// (empty: any token proves it again), as Options.Accounts does.
func (p *Provider) SetAccountToken(account, token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if token == "" {
		delete(p.accounts, account)
		return
	}
	p.accounts[account] = token
}

// VerifyConnection implements messaging.ConnectionVerifier; see
// "Verifying connections" in the package comment.
func (p *Provider) VerifyConnection(ctx context.Context, s *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s == nil || s.AccountID == "" || s.AccessToken == "" {
		return nil, &messaging.VerificationError{Field: "access_token", Code: "190", Text: "An access token is required"}
	}
	switch {
	case hasPrefix(s.AccessToken, DenyTokenPrefix):
		return nil, &messaging.SendError{Code: "190", Text: "Invalid OAuth access token - Cannot parse access token", Credentials: true}
	case hasPrefix(s.AccessToken, UnreachableTokenPrefix):
		return nil, &messaging.SendError{Code: "unreachable", Text: "The channel provider could not be reached", Retryable: true}
	}
	p.mu.Lock()
	want, named := p.accounts[s.AccountID]
	p.mu.Unlock()
	if named && subtle.ConstantTimeCompare([]byte(want), []byte(s.AccessToken)) != 1 {
		return nil, &messaging.VerificationError{Field: accountField(s.Channel), Code: "100",
			Text: "Unsupported get request. Object with ID '" + s.AccountID + "' does not exist, cannot be loaded due to missing permissions, or does not support this operation (subcode 33)"}
	}
	if s.Channel != "" && s.Channel != messaging.ChannelWhatsApp {
		return &messaging.VerifiedAccount{}, nil
	}
	p.mu.Lock()
	h, set := p.health[s.AccountID]
	p.mu.Unlock()
	if !set {
		h = [2]string{DefaultQualityRating, DefaultMessagingTier}
	}
	return &messaging.VerifiedAccount{QualityRating: h[0], MessagingTier: h[1]}, nil
}

// The account health VerifyConnection reports of a WhatsApp number unless
// SetAccountHealth changed it.
const (
	DefaultQualityRating = record.QualityGreen
	DefaultMessagingTier = record.Tier1K
)

// SetAccountHealth sets the quality rating and messaging tier that
// VerifyConnection reports of the WhatsApp phone-number id account (empty
// values: none reported).
func (p *Provider) SetAccountHealth(account, quality, tier string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.health == nil {
		p.health = map[string][2]string{}
	}
	p.health[account] = [2]string{quality, tier}
}

// accountField names the account id of channel, as Meta's channel spec
// does.
func accountField(channel string) string {
	for _, spec := range metaprovider.ChannelSpecs() {
		if spec.Name == channel {
			return spec.Account.Name
		}
	}
	return "channel"
}

// hasPrefix reports whether the token tok begins with prefix, comparing in
// constant time as every comparison of a secret is.
func hasPrefix(tok, prefix string) bool {
	return len(tok) >= len(prefix) && subtle.ConstantTimeCompare([]byte(tok[:len(prefix)]), []byte(prefix)) == 1
}
