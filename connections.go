package messaging

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Connection states.
const (
	// ConnectionConnected: the provider proved that the credentials
	// control the account (VerifiedAt), and they are in use.
	ConnectionConnected = "connected"
	// ConnectionPending ("pending_verification"): the credentials are
	// stored but the provider has not yet proved that they control the
	// account (it could not be reached when they were put). The
	// connection reserves nothing, receives nothing and sends nothing; the
	// service verifies it again until the provider answers.
	ConnectionPending = "pending_verification"
	// ConnectionError: the provider refused the credentials (for example
	// Meta's code 190, an invalid or expired token), or another
	// workspace proved control of the account (ReasonSuperseded);
	// StatusReason says why. A connection in error that was verified
	// before (VerifiedAt set) keeps its account: inbound events still
	// reach it, and sends are still handed to the provider, which refuses
	// them, until the credentials are replaced.
	ConnectionError = "error"
	// ConnectionDisconnected: the channel was disconnected; the record is
	// kept as history.
	ConnectionDisconnected = "disconnected"
)

// ChannelConnection is a workspace's connection to a channel at the
// provider, with what the provider needs to send for the workspace. The
// access token is stored sealed with the service's secret key and never
// returned in clear after it was given; TokenHint shows its last 4
// characters.
type ChannelConnection struct {
	WorkspaceID string
	Channel     string
	// AccountID is the WhatsApp phone-number id, the Facebook page id or
	// the Instagram account id: the account the provider sends from and
	// reports about.
	AccountID string
	// WABAID is the WhatsApp Business Account id (WhatsApp only): the
	// owner of the templates.
	WABAID string
	// DisplayPhoneNumber is the WhatsApp number as customers see it
	// (optional, informative).
	DisplayPhoneNumber string
	// TokenSealed is the access token, sealed.
	TokenSealed []byte
	// TokenHint is the last 4 characters of the access token.
	TokenHint string
	// Status is ConnectionConnected, ConnectionPending, ConnectionError
	// or ConnectionDisconnected; StatusReason explains an error or a
	// pending verification.
	Status       string
	StatusReason string
	// VerifiedAt is when the provider last proved that these credentials
	// (this Generation) control the account; nil until it has. Only a
	// connection that Holds its account reserves it and receives its
	// inbound events.
	VerifiedAt *time.Time
	// Generation counts the times credentials were put; a verdict on old
	// credentials does not mark new ones.
	Generation int64
	// TemplatesSyncedAt is when the account's templates were last
	// synchronised from the provider; TemplateSyncError is the error of
	// the last sync when it failed.
	TemplatesSyncedAt *time.Time
	TemplateSyncError string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// ReasonSuperseded is the StatusReason of a connection in error because
// another workspace proved control of its account.
const ReasonSuperseded = "another workspace proved control of this account with the provider"

// Holds reports whether the connection holds its account: it is not
// disconnected and the provider proved its credentials. At most one
// connection holds a channel's account id (and a WABA id).
func (c *ChannelConnection) Holds() bool {
	return c.Status != ConnectionDisconnected && c.VerifiedAt != nil
}

// LogValue logs the connection without its sealed token.
func (c *ChannelConnection) LogValue() slog.Value {
	return slog.GroupValue(slog.String("workspace", c.WorkspaceID), slog.String("channel", c.Channel),
		slog.String("account_id", c.AccountID), slog.String("waba_id", c.WABAID), slog.String("status", c.Status))
}

// ConnectParams are the arguments of Service.Connect: what the provider
// needs to send for a workspace on a channel.
type ConnectParams struct {
	WorkspaceID string `json:"-"`
	Channel     string `json:"channel"`
	// AccountID is the WhatsApp phone-number id ("phone_number_id"), the
	// Facebook page id ("page_id") or the Instagram account id
	// ("instagram_account_id"): digits.
	AccountID string `json:"account_id"`
	// WABAID is the WhatsApp Business Account id: digits, required on
	// WhatsApp, refused on the other channels.
	WABAID string `json:"waba_id,omitempty"`
	// DisplayPhoneNumber is the WhatsApp number in E.164 (optional).
	DisplayPhoneNumber string `json:"display_phone_number,omitempty"`
	// AccessToken is the provider's access token for the account.
	AccessToken string `json:"access_token"`
}

// MaxAccessToken is the longest access token accepted, in bytes.
const MaxAccessToken = 2048

// accountField names the account id of a channel as Meta calls it.
func accountField(channel string) string {
	switch channel {
	case ChannelWhatsApp:
		return "phone_number_id"
	case ChannelMessenger:
		return "page_id"
	}
	return "instagram_account_id"
}

func allDigits(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validateConnect checks p and returns the display number normalised.
func validateConnect(p *ConnectParams) (display string, err error) {
	if err := validateChannel(p.Channel); err != nil {
		return "", err
	}
	af := accountField(p.Channel)
	if !allDigits(p.AccountID, 32) {
		return "", validationError(af, "must be the account's numeric id (1 to 32 digits)")
	}
	switch {
	case p.Channel == ChannelWhatsApp && !allDigits(p.WABAID, 32):
		return "", validationError("waba_id", "must be the WhatsApp Business Account's numeric id (1 to 32 digits)")
	case p.Channel != ChannelWhatsApp && p.WABAID != "":
		return "", validationError("waba_id", "is only for whatsapp")
	case p.Channel != ChannelWhatsApp && p.DisplayPhoneNumber != "":
		return "", validationError("display_phone_number", "is only for whatsapp")
	}
	if p.DisplayPhoneNumber != "" {
		n, err := NormalizePhone(p.DisplayPhoneNumber)
		if err != nil {
			return "", validationError("display_phone_number", "must be in E.164 format")
		}
		display = n
	}
	if p.AccessToken == "" {
		return "", validationError("access_token", "is required")
	}
	if len(p.AccessToken) < 8 || len(p.AccessToken) > MaxAccessToken {
		return "", validationError("access_token", "must be 8 to %d characters", MaxAccessToken)
	}
	for i := 0; i < len(p.AccessToken); i++ {
		if c := p.AccessToken[i]; c <= 0x20 || c >= 0x7f {
			return "", validationError("access_token", "must be visible ASCII characters, without spaces")
		}
	}
	return display, nil
}

// tokenPurpose binds sealed access tokens to their use.
const tokenPurpose = "channel-access-token"

// Connect stores a workspace's credentials for a channel (sealed with
// Options.SecretKey) after asking the provider (a ConnectionVerifier)
// whether they control the account: for WhatsApp that the token reads
// the phone number among the WABA's, for Messenger and Instagram that it
// reads the page or account. The connection is then connected and holds
// the account (VerifiedAt); a provider's refusal is a validation error
// naming the credential at fault, and nothing is stored; a provider that
// cannot be reached leaves it ConnectionPending, verified again by the
// service's checks (Options.ConnectionChecks) until it answers, unless the
// workspace's current connection on the channel holds its account: that
// one is kept, and the answer is service_unavailable. Connecting
// again replaces the credentials and verifies them again. Another
// workspace's connected, verified connection of the same account (or
// WABA) is a conflict; another workspace's unverified claim, or one in
// error, never blocks a verified connection: it is superseded (error,
// ReasonSuperseded), audited and announced to its workspace. The
// returned connection's token only shows its last 4 characters
// (TokenHint). A provider that is not a ConnectionVerifier cannot connect
// with credentials (channel_unavailable).
func (s *Service) Connect(ctx context.Context, p *ConnectParams) (*ChannelConnection, error) {
	if p == nil {
		return nil, validationError("body", "is required")
	}
	if err := refuseUnstorable(p); err != nil {
		return nil, err
	}
	display, err := validateConnect(p)
	if err != nil {
		return nil, err
	}
	v, ok := s.provider.(ConnectionVerifier)
	if !ok {
		return nil, &Error{Code: CodeChannelUnavailable, Field: "channel",
			Message: "channel: the channel provider cannot verify credentials, so no connection with credentials can be made"}
	}
	sealed, err := s.sealFor(tokenPurpose, []byte(p.AccessToken))
	if err != nil {
		return nil, err
	}
	snd := &ChannelSender{WorkspaceID: p.WorkspaceID, Channel: p.Channel, AccountID: p.AccountID, WABAID: p.WABAID, AccessToken: p.AccessToken}
	acct, verr := s.verifyWith(ctx, v, snd)
	now := s.now()
	c := &ChannelConnection{
		WorkspaceID: p.WorkspaceID, Channel: p.Channel, AccountID: p.AccountID, WABAID: p.WABAID,
		DisplayPhoneNumber: display, TokenSealed: sealed, TokenHint: p.AccessToken[len(p.AccessToken)-4:],
		Status: ConnectionPending, CreatedAt: now, UpdatedAt: now,
	}
	var refused *VerificationError
	switch {
	case errors.As(verr, &refused):
		return nil, &Error{Code: CodeValidation, Field: refused.Field,
			Message: fmt.Sprintf("%s: the channel provider refused the credentials: %s", refused.Field, FailureReason(refused.Code, refused.Text)), Err: verr}
	case verr != nil:
		// A working connection is never replaced by credentials whose
		// verdict is unknown: it is kept, and the caller tries again.
		if cur, err := s.store.ConnectionGet(ctx, p.WorkspaceID, p.Channel); err == nil && cur.Holds() {
			return nil, &Error{Code: CodeServiceUnavailable,
				Message: "the channel provider could not be reached to verify the new credentials (" + providerReason(verr) + "); the current connection is kept: try again later", Err: verr}
		}
		c.StatusReason = "the channel provider could not be reached to verify the credentials (" + providerReason(verr) + "); they are verified again shortly"
	default:
		if acct != nil && acct.DisplayPhoneNumber != "" {
			if display != "" && display != acct.DisplayPhoneNumber {
				return nil, validationError("display_phone_number", "is %s, but the channel provider reports the number as %s", display, acct.DisplayPhoneNumber)
			}
			c.DisplayPhoneNumber = acct.DisplayPhoneNumber
		}
		c.Status, c.VerifiedAt = ConnectionConnected, &now
	}
	var before map[[2]string]string
	if c.Holds() {
		before = s.claimants(ctx, c)
	}
	superseded, err := s.store.ConnectionPut(ctx, c)
	if err != nil {
		if errors.Is(err, ErrConflict) {
			f := s.conflictField(ctx, c)
			return nil, &Error{Code: CodeConflict, Field: f, Message: fmt.Sprintf("%s: the account is connected to another workspace, which proved control of it; disconnect it there first", f), Err: err}
		}
		return nil, wrapStoreError(err, "workspace", p.WorkspaceID)
	}
	s.audit(ctx, p.WorkspaceID, AuditChannelConnected, p.Channel)
	s.supersede(ctx, superseded, before)
	// c is the connection as stored (ConnectionPut set its generation and
	// first CreatedAt); the token is not handed back.
	c.TokenSealed = nil
	return c, nil
}

// conflictField names the field of c that another workspace's verified
// connection holds: the account id, else the WABA id.
func (s *Service) conflictField(ctx context.Context, c *ChannelConnection) string {
	list, err := s.store.ConnectionList(ctx, &ConnectionListParams{Channel: c.Channel, AccountID: c.AccountID})
	if err == nil {
		for _, o := range list {
			if o.WorkspaceID != c.WorkspaceID && o.Status == ConnectionConnected && o.Holds() {
				return accountField(c.Channel)
			}
		}
	}
	if c.WABAID != "" {
		return "waba_id"
	}
	return accountField(c.Channel)
}

// Connection returns the connection of a workspace on a channel (without
// its token). not_found when the channel was never connected with
// credentials.
func (s *Service) Connection(ctx context.Context, workspaceID, channel string) (*ChannelConnection, error) {
	if err := validateChannel(channel); err != nil {
		return nil, err
	}
	c, err := s.store.ConnectionGet(ctx, workspaceID, channel)
	if err != nil {
		return nil, wrapStoreError(err, "connection", channel)
	}
	c.TokenSealed = nil
	return c, nil
}

// Connections returns the connections of a workspace, by channel, without
// their tokens.
func (s *Service) Connections(ctx context.Context, workspaceID string) ([]*ChannelConnection, error) {
	list, err := s.store.ConnectionList(ctx, &ConnectionListParams{WorkspaceID: workspaceID})
	if err != nil {
		return nil, wrapStoreError(err, "connection", "")
	}
	for _, c := range list {
		c.TokenSealed = nil
	}
	return list, nil
}

// ChannelSender returns the sender of a workspace on a channel, as the
// dispatcher hands it to Provider.Send: the workspace's live connection on
// channel with its token unsealed; nil when the channel is connected
// without credentials; ErrNotFound when it is not connected. A
// connection the provider has not verified is a *SendError with code CodeUnverified, retryable while it is
// ConnectionPending, permanent when it is in error (refused, or superseded
// by another workspace): nothing is sent with credentials that were not
// proven.
func (s *Service) ChannelSender(ctx context.Context, workspaceID, channel string) (*ChannelSender, error) {
	c, err := s.store.ConnectionGet(ctx, workspaceID, channel)
	if err == nil && c.Status != ConnectionDisconnected && c.VerifiedAt == nil {
		if c.Status == ConnectionPending {
			return nil, &SendError{Code: CodeUnverified, Retryable: true,
				Text: fmt.Sprintf("the %s connection's credentials are not verified with the provider yet", channel)}
		}
		// Refused, or superseded by another workspace: waiting cannot help.
		return nil, &SendError{Code: CodeUnverified, Text: fmt.Sprintf("the %s connection does not hold its account: %s", channel, c.StatusReason)}
	}
	if err == nil && c.Status != ConnectionDisconnected {
		tok, err := s.unsealFor(tokenPurpose, c.TokenSealed)
		if err != nil {
			return nil, fmt.Errorf("messaging: the access token of %s/%s cannot be unsealed (was Options.SecretKey changed?): %w", workspaceID, channel, err)
		}
		return &ChannelSender{WorkspaceID: workspaceID, Channel: channel, AccountID: c.AccountID, WABAID: c.WABAID,
			AccessToken: string(tok), Generation: c.Generation}, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	w, err := s.store.WorkspaceGet(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	if slices.Contains(w.Channels, channel) {
		return nil, nil
	}
	return nil, ErrNotFound
}

// senderError is the error of a ChannelSender lookup for channel: a
// connection the provider has not verified is channel_unavailable; a
// store error is wrapped as such.
func senderError(err error, channel string) error {
	var se *SendError
	if errors.As(err, &se) && se.Code == CodeUnverified {
		return &Error{Code: CodeChannelUnavailable, Field: "channel", Message: "channel: " + se.Text, Err: err}
	}
	return wrapStoreError(err, "connection", channel)
}

// setConnectionState records a verdict on the credentials snd was read
// with; credentials replaced since are left alone.
func (s *Service) setConnectionState(ctx context.Context, snd *ChannelSender, status, reason string) {
	_, err := s.store.ConnectionUpdate(ctx, &ConnectionUpdateParams{WorkspaceID: snd.WorkspaceID, Channel: snd.Channel,
		Generation: snd.Generation, Status: status, StatusReason: reason, At: s.now()})
	if err != nil {
		s.log.ErrorContext(ctx, "recording a connection's state failed", "workspace", snd.WorkspaceID, "channel", snd.Channel, "status", status, "err", err)
	} else if status == ConnectionError {
		s.log.WarnContext(ctx, "the provider refused a connection's credentials", "workspace", snd.WorkspaceID, "channel", snd.Channel, "reason", reason)
	}
}

// credentialsRefused marks the workspace's connection on channel as
// error, when the provider refused its credentials during a call that
// started at started (credentials put since then are left alone).
func (s *Service) credentialsRefused(ctx context.Context, workspaceID, channel string, se *SendError, started time.Time) {
	c, err := s.store.ConnectionGet(ctx, workspaceID, channel)
	if err != nil || c.Status == ConnectionDisconnected || c.UpdatedAt.After(started) {
		return
	}
	s.setConnectionState(ctx, &ChannelSender{WorkspaceID: workspaceID, Channel: channel, Generation: c.Generation}, ConnectionError, FailureReason(se.Code, se.Text))
}
