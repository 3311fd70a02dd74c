package messaging

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// Channels connects, reads, verifies and disconnects the channels of one
// workspace: the management API's /v1/channels, the dashboard and the
// bootstrap file call it. Its channels are those the service serves
// (Service.Channels); any other is not_found, as the management API
// addresses channels as resources.
type Channels struct {
	svc *Service
	ws  string
}

// ChannelState is a workspace's state on one channel, as the management
// API shows it: the channel flag of the workspace merged with its
// connection record. It never holds the access token, only its hint.
type ChannelState struct {
	Channel string
	// Status is ConnectionConnected, ConnectionPending, ConnectionError or
	// ConnectionDisconnected. A channel connected without credentials (the
	// flag only, as providers without per-workspace senders need) is
	// connected with an empty AccountID.
	Status string
	// AccountID is the account the channel sends from (the WhatsApp
	// phone-number id, the page id or the Instagram account id); empty
	// without credentials and when disconnected.
	AccountID string
	// DisplayPhoneNumber is the WhatsApp number as customers see it,
	// when given.
	DisplayPhoneNumber string
	// TokenHint is the last 4 characters of the access token.
	TokenHint string
	// Error is why the provider refused the credentials (Status error),
	// or why they are not verified yet (Status pending_verification).
	Error string
	// ConnectedAt is when the workspace first connected the channel with
	// credentials (kept when they are replaced); nil without credentials
	// and when disconnected.
	ConnectedAt *time.Time
	// Connection is the connection record behind the state, without its
	// token (its owner id, template sync, generation, verification, ...);
	// nil when the channel was never connected with credentials. A
	// disconnected record is kept as history.
	Connection *ChannelConnection
}

// stateOf is the state of channel given whether its flag is on and its
// connection record (nil when none).
func stateOf(channel string, flag bool, c *ChannelConnection) *ChannelState {
	st := &ChannelState{Channel: channel, Status: record.ConnectionDisconnected, Connection: c}
	switch {
	case c != nil && c.Status != record.ConnectionDisconnected:
		at := c.CreatedAt
		st.Status, st.AccountID, st.DisplayPhoneNumber, st.TokenHint, st.ConnectedAt = c.Status, c.AccountID, c.DisplayPhoneNumber, c.TokenHint, &at
		if c.Status == record.ConnectionError || c.Status == record.ConnectionPending {
			st.Error = c.StatusReason
		}
	case flag:
		st.Status = record.ConnectionConnected
	}
	return st
}

// ChannelCredentials are what a channel needs to send for a workspace:
// the fields its ChannelSpec declares, by their names in the management
// API, and the access token. For Meta's channels (see metaprovider) they
// are phone_number_id, waba_id and (optionally) display_phone_number on
// whatsapp, page_id on messenger and instagram_account_id on instagram.
type ChannelCredentials struct {
	// Fields holds the channel's fields by name; an empty value counts as
	// absent. A field of another channel is refused, naming the field; a
	// field no channel has is refused as unknown.
	Fields map[string]string
	// AccessToken is the provider's access token for the account: 8 to
	// MaxAccessToken visible ASCII characters.
	AccessToken string
}

// tokenField is the name of the access token among the
// credentials.
const tokenField = "access_token"

// tokenPurpose binds sealed access tokens to their use.
const tokenPurpose = "channel-access-token"

// channelByPath returns the route of channel, or a not_found error when
// the service does not serve it.
func (s *Service) channelByPath(channel string) (*channelRoute, error) {
	r := s.channels.route(channel)
	if r == nil {
		return nil, &Error{Code: CodeNotFound, Message: fmt.Sprintf("channel %q not found; the channels are %s", channel, strings.Join(s.Channels(), ", "))}
	}
	return r, nil
}

// List returns the state of every channel the service serves, in the
// order of Service.Channels: connected with credentials, connected by the
// flag alone, pending, in error, or disconnected.
func (c *Channels) List(ctx context.Context) ([]*ChannelState, error) {
	w, err := c.svc.GetWorkspace(ctx, c.ws)
	if err != nil {
		return nil, err
	}
	conns, err := c.svc.store.ConnectionList(ctx, &driver.ConnectionListParams{WorkspaceID: c.ws})
	if err != nil {
		return nil, wrapStoreError(err, "connection", "")
	}
	out := make([]*ChannelState, 0, len(c.svc.channels.routes))
	for _, ch := range c.svc.Channels() {
		var conn *ChannelConnection
		if i := slices.IndexFunc(conns, func(c *ChannelConnection) bool { return c.Channel == ch }); i >= 0 {
			conn = conns[i]
			conn.TokenSealed = nil
		}
		out = append(out, stateOf(ch, slices.Contains(w.Channels, ch), conn))
	}
	return out, nil
}

// Get returns the state of channel in the workspace.
func (c *Channels) Get(ctx context.Context, channel string) (*ChannelState, error) {
	if _, err := c.svc.channelByPath(channel); err != nil {
		return nil, err
	}
	return c.svc.channelState(ctx, c.ws, channel)
}

// channelState reads the state of channel in workspace ws.
func (s *Service) channelState(ctx context.Context, ws, channel string) (*ChannelState, error) {
	w, err := s.GetWorkspace(ctx, ws)
	if err != nil {
		return nil, err
	}
	conn, err := s.raw.ConnectionGet(ctx, ws, channel)
	switch {
	case errors.Is(err, ErrNotFound):
		conn = nil
	case err != nil:
		return nil, wrapStoreError(err, "connection", channel)
	default:
		conn.TokenSealed = nil
	}
	return stateOf(channel, slices.Contains(w.Channels, channel), conn), nil
}

// Connect connects channel in the workspace with creds, or replaces its
// credentials, and returns its state. With nil credentials it connects
// the channel without credentials (the flag alone: enough for a provider
// that needs none, such as a simulator); connecting a connected channel
// so changes nothing.
//
// Credentials are stored sealed with Options.SecretKey after the channel's
// provider (a ConnectionVerifier) was asked whether they control the
// account: for WhatsApp that the token reads the phone number among the
// WABA's, for Messenger and Instagram that it reads the page or account.
// The connection is then connected and holds the account (VerifiedAt); a
// provider's refusal is a validation error naming the credential at
// fault, and nothing is stored; a provider that cannot be reached leaves
// it ConnectionPending, verified again by the service's checks
// (Options.ConnectionChecks) until it answers, unless the workspace's
// current connection on the channel holds its account: that one is kept,
// and the answer is service_unavailable. Connecting again replaces the
// credentials and verifies them again. Another workspace's connected,
// verified connection of the same account (or owner id) is a conflict;
// another workspace's unverified claim, or one in error, never blocks a
// verified connection: it is superseded (error, ReasonSuperseded), audited
// and announced to its workspace. A provider that is not a
// ConnectionVerifier cannot connect with credentials
// (channel_unavailable).
//
// A field of another channel (page_id on whatsapp, ...) is a validation
// error naming it; so is a field that breaks its ChannelField's rule.
func (c *Channels) Connect(ctx context.Context, channel string, creds *ChannelCredentials) (*ChannelState, error) {
	r, err := c.svc.channelByPath(channel)
	if err != nil {
		return nil, err
	}
	if creds == nil {
		if err := c.svc.setChannel(ctx, c.ws, channel, true); err != nil {
			return nil, err
		}
		return c.svc.channelState(ctx, c.ws, channel)
	}
	p, err := c.svc.connectParams(c.ws, &r.spec, creds)
	if err != nil {
		return nil, err
	}
	conn, err := c.svc.connect(ctx, r, p)
	if err != nil {
		return nil, err
	}
	return stateOf(channel, true, conn), nil
}

// Verify asks the provider now whether the workspace's connection on
// channel holds its account, records the verdict (as the service's
// periodic checks do) and returns the channel's state. A channel never
// connected with credentials is not_found; a provider that could not tell
// is service_unavailable and changes nothing.
func (c *Channels) Verify(ctx context.Context, channel string) (*ChannelState, error) {
	r, err := c.svc.channelByPath(channel)
	if err != nil {
		return nil, err
	}
	v, ok := r.provider.(ConnectionVerifier)
	if !ok {
		return nil, errorOn(CodeChannelUnavailable, "channel", "channel: the channel provider cannot verify credentials", nil)
	}
	conn, err := c.svc.raw.ConnectionGet(ctx, c.ws, channel)
	if err != nil {
		return nil, wrapStoreError(err, "connection", channel)
	}
	if conn.Status == record.ConnectionDisconnected {
		return nil, errorOn(CodeChannelUnavailable, "channel", fmt.Sprintf("channel: %s is disconnected; connect it with credentials", channel), nil)
	}
	if err := c.svc.verifyStored(ctx, v, conn); err != nil {
		var u *unknownVerdict
		if errors.As(err, &u) {
			return nil, &Error{Code: CodeServiceUnavailable, Message: "the channel provider could not verify the connection (" + providerReason(u.err) + "); try again later", Err: err}
		}
		return nil, wrapStoreError(err, "connection", channel)
	}
	return c.svc.channelState(ctx, c.ws, channel)
}

// Disconnect disconnects channel in the workspace and returns its state,
// disconnected: sends on it then fail with channel_unavailable, and its
// connection record is kept as history. Disconnecting a disconnected
// channel changes nothing.
func (c *Channels) Disconnect(ctx context.Context, channel string) (*ChannelState, error) {
	if _, err := c.svc.channelByPath(channel); err != nil {
		return nil, err
	}
	if err := c.svc.setChannel(ctx, c.ws, channel, false); err != nil {
		return nil, err
	}
	return stateOf(channel, false, nil), nil
}

// setChannel sets the flag of channel in workspace ws, and audits it.
func (s *Service) setChannel(ctx context.Context, ws, channel string, on bool) error {
	err := s.store.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: ws, Channel: channel, Connected: on, At: s.now()})
	if err != nil {
		return wrapStoreError(err, "workspace", ws)
	}
	action := record.AuditChannelConnected
	if !on {
		action = record.AuditChannelDisconnected
	}
	s.audit(ctx, ws, action, channel)
	return nil
}

// connectParams are credentials read by their channel's spec.
type connectParams struct {
	WorkspaceID, Channel                  string
	AccountID, WABAID, DisplayPhoneNumber string
	AccessToken                           string
	// display is DisplayPhoneNumber normalised.
	display string
}

// connectParams reads creds by spec, the spec of the channel connected
// in workspace ws, and checks them: fields no channel has, then fields of
// other channels' accounts, then the account id, the owner id, the
// display number and the token, each against its rule.
func (s *Service) connectParams(ws string, spec *ChannelSpec, creds *ChannelCredentials) (*connectParams, error) {
	if err := s.refuseForeign(spec, creds, roleAccount); err != nil {
		return nil, err
	}
	p := &connectParams{WorkspaceID: ws, Channel: spec.Name, AccessToken: creds.AccessToken, AccountID: creds.Fields[spec.Account.Name]}
	if spec.Owner.Name != "" {
		p.WABAID = creds.Fields[spec.Owner.Name]
	}
	if spec.Display.Name != "" {
		p.DisplayPhoneNumber = creds.Fields[spec.Display.Name]
	}
	if err := refuseUnstorable(creds, credentialTexts); err != nil {
		return nil, err
	}
	if err := checkField(spec.Account, p.AccountID); err != nil {
		return nil, err
	}
	if spec.Owner.Name != "" {
		if err := checkField(spec.Owner, p.WABAID); err != nil {
			return nil, err
		}
	}
	for _, role := range []int{roleOwner, roleDisplay} {
		if err := s.refuseForeign(spec, creds, role); err != nil {
			return nil, err
		}
	}
	if p.DisplayPhoneNumber != "" {
		n, err := NormalizePhone(p.DisplayPhoneNumber)
		if err != nil {
			return nil, validationError(spec.Display.Name, "must be in E.164 format")
		}
		p.display = n
	}
	if err := checkAccessToken(p.AccessToken); err != nil {
		return nil, err
	}
	return p, nil
}

// Roles of a credential field in its channel's spec.
const (
	roleAccount = iota
	roleOwner
	roleDisplay
)

// field returns spec's field of role.
func (spec *ChannelSpec) field(role int) ChannelField {
	switch role {
	case roleOwner:
		return spec.Owner
	case roleDisplay:
		return spec.Display
	}
	return spec.Account
}

// refuseForeign refuses the first field of creds that is not spec's: for
// roleAccount a field no channel has, else the first account field of
// another channel (in the service's order); for the other roles, the
// first field of that role of another channel. The error names the field
// and the channels it is for (and, for an account field, the field spec
// takes instead).
func (s *Service) refuseForeign(spec *ChannelSpec, creds *ChannelCredentials, role int) error {
	if role == roleAccount {
		names := make([]string, 0, len(creds.Fields))
		for name := range creds.Fields {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if !s.knownField(name) {
				return validationError(name, "unknown field")
			}
		}
	}
	for _, r := range s.channels.routes {
		f := r.spec.field(role)
		if f.Name == "" || creds.Fields[f.Name] == "" || slices.ContainsFunc(spec.fields(), func(g ChannelField) bool { return g.Name == f.Name }) {
			continue
		}
		var owners []string
		for _, o := range s.channels.routes {
			if o.spec.field(role).Name == f.Name {
				owners = append(owners, o.spec.Name)
			}
		}
		if role == roleAccount {
			return validationError(f.Name, "is only for %s; %s takes %s", orList(owners), spec.Name, spec.Account.Name)
		}
		return validationError(f.Name, "is only for %s", orList(owners))
	}
	return nil
}

// knownField reports whether name is a credential field of a channel the
// service serves, or the access token.
func (s *Service) knownField(name string) bool {
	if name == tokenField {
		return true
	}
	for _, r := range s.channels.routes {
		if slices.ContainsFunc(r.spec.fields(), func(f ChannelField) bool { return f.Name == name }) {
			return true
		}
	}
	return false
}

// checkField checks v against f's rule (1 to 64 visible ASCII characters
// when f has none).
func checkField(f ChannelField, v string) error {
	check := f.Check
	if check == nil {
		check = visibleASCII
	}
	if err := check(v); err != nil {
		return validationError(f.Name, "%s", err.Error())
	}
	return nil
}

// visibleASCII is the rule of a ChannelField without its own.
func visibleASCII(v string) error {
	if v == "" || len(v) > 64 || strings.IndexFunc(v, func(r rune) bool { return r <= 0x20 || r >= 0x7f }) >= 0 {
		return errors.New("must be 1 to 64 visible ASCII characters")
	}
	return nil
}

// checkAccessToken checks an access token: 8 to MaxAccessToken visible
// ASCII characters.
func checkAccessToken(tok string) error {
	if tok == "" {
		return validationError(tokenField, "is required")
	}
	if len(tok) < 8 || len(tok) > record.MaxAccessToken {
		return validationError(tokenField, "must be 8 to %d characters", record.MaxAccessToken)
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= 0x20 || c >= 0x7f {
			return validationError(tokenField, "must be visible ASCII characters, without spaces")
		}
	}
	return nil
}

// connect verifies p with the channel's provider and stores the
// connection (see Channels.Connect), returning it as stored, without its
// token.
func (s *Service) connect(ctx context.Context, r *channelRoute, p *connectParams) (*ChannelConnection, error) {
	v, ok := r.provider.(ConnectionVerifier)
	if !ok {
		return nil, errorOn(CodeChannelUnavailable, "channel", "channel: the channel provider cannot verify credentials, so no connection with credentials can be made", nil)
	}
	sealed, err := s.sealFor(tokenPurpose, []byte(p.AccessToken))
	if err != nil {
		return nil, err
	}
	now := s.now()
	c := &ChannelConnection{
		WorkspaceID: p.WorkspaceID, Channel: p.Channel, AccountID: p.AccountID, WABAID: p.WABAID,
		DisplayPhoneNumber: p.display, TokenSealed: sealed, TokenHint: p.AccessToken[len(p.AccessToken)-4:],
		Status: record.ConnectionPending, Throughput: record.DefaultThroughput, CreatedAt: now, UpdatedAt: now,
	}
	// New credentials keep the connection's throughput, and its health
	// when they are for the same account (until the provider reports it).
	if cur, err := s.raw.ConnectionGet(ctx, p.WorkspaceID, p.Channel); err == nil {
		if cur.Throughput > 0 {
			c.Throughput = cur.Throughput
		}
		if cur.AccountID == c.AccountID {
			c.QualityRating, c.QualityChangedAt, c.MessagingTier, c.TierChangedAt = cur.QualityRating, cur.QualityChangedAt, cur.MessagingTier, cur.TierChangedAt
		}
	}
	if err := s.judge(ctx, v, &r.spec, p, c, now); err != nil {
		return nil, err
	}
	var before map[[2]string]string
	if c.Holds() {
		before = s.claimants(ctx, c)
	}
	superseded, err := s.store.ConnectionPut(ctx, c)
	if err != nil {
		if errors.Is(err, ErrConflict) {
			f := s.conflictField(ctx, &r.spec, c)
			return nil, errorOn(CodeConflict, f, fmt.Sprintf("%s: the account is connected to another workspace, which proved control of it; disconnect it there first", f), err)
		}
		return nil, wrapStoreError(err, "workspace", p.WorkspaceID)
	}
	s.audit(ctx, p.WorkspaceID, record.AuditChannelConnected, p.Channel)
	s.supersede(ctx, superseded, before)
	// c is the connection as stored (ConnectionPut set its generation and
	// first CreatedAt); the token is not handed back.
	c.TokenSealed = nil
	return c, nil
}

// judge asks v whether p's credentials control the account and records
// the verdict on c (a new connection, at now): connected and verified,
// or left pending with the reason when the provider could not tell. A
// refusal, a provider that could not tell while the current connection
// holds the account, and a display number that differs from the
// provider's are errors.
func (s *Service) judge(ctx context.Context, v ConnectionVerifier, spec *ChannelSpec, p *connectParams, c *ChannelConnection, now time.Time) error {
	snd := &ChannelSender{WorkspaceID: p.WorkspaceID, Channel: p.Channel, AccountID: p.AccountID, WABAID: p.WABAID, AccessToken: p.AccessToken}
	acct, verr := s.verifyWith(ctx, v, snd)
	var refused *VerificationError
	switch {
	case errors.As(verr, &refused):
		return errorOn(CodeValidation, refused.Field, fmt.Sprintf("%s: the channel provider refused the credentials: %s", refused.Field, FailureReason(refused.Code, refused.Text)), verr)
	case verr != nil:
		// A working connection is never replaced by credentials whose
		// verdict is unknown: it is kept, and the caller tries again.
		if cur, err := s.raw.ConnectionGet(ctx, p.WorkspaceID, p.Channel); err == nil && cur.Holds() {
			return &Error{Code: CodeServiceUnavailable,
				Message: "the channel provider could not be reached to verify the new credentials (" + providerReason(verr) + "); the current connection is kept: try again later", Err: verr}
		}
		c.StatusReason = "the channel provider could not be reached to verify the credentials (" + providerReason(verr) + "); they are verified again shortly"
		return nil
	}
	if acct != nil && acct.DisplayPhoneNumber != "" {
		if p.display != "" && p.display != acct.DisplayPhoneNumber {
			return validationError(spec.Display.Name, "is %s, but the channel provider reports the number as %s", p.display, acct.DisplayPhoneNumber)
		}
		c.DisplayPhoneNumber = acct.DisplayPhoneNumber
	}
	if acct != nil && acct.QualityRating != "" && acct.QualityRating != c.QualityRating {
		c.QualityRating, c.QualityChangedAt = acct.QualityRating, &now
	}
	if acct != nil && acct.MessagingTier != "" && acct.MessagingTier != c.MessagingTier {
		c.MessagingTier, c.TierChangedAt = acct.MessagingTier, &now
	}
	c.Status, c.VerifiedAt = record.ConnectionConnected, &now
	return nil
}

// conflictField names the field of c that another workspace's verified
// connection holds: the account id, else the owner id.
func (s *Service) conflictField(ctx context.Context, spec *ChannelSpec, c *ChannelConnection) string {
	list, err := s.store.ConnectionList(ctx, &driver.ConnectionListParams{Channel: c.Channel, AccountID: c.AccountID})
	if err == nil {
		for _, o := range list {
			if o.WorkspaceID != c.WorkspaceID && o.Status == record.ConnectionConnected && o.Holds() {
				return spec.Account.Name
			}
		}
	}
	if c.WABAID != "" && spec.Owner.Name != "" {
		return spec.Owner.Name
	}
	return spec.Account.Name
}
