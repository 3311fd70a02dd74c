package messaging

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

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
}

// stateOf is the state of channel given whether its flag is on and its
// connection record (nil when none).
func stateOf(channel string, flag bool, c *ChannelConnection) *ChannelState {
	st := &ChannelState{Channel: channel, Status: ConnectionDisconnected}
	switch {
	case c != nil && c.Status != ConnectionDisconnected:
		at := c.CreatedAt
		st.Status, st.AccountID, st.DisplayPhoneNumber, st.TokenHint, st.ConnectedAt = c.Status, c.AccountID, c.DisplayPhoneNumber, c.TokenHint, &at
		if c.Status == ConnectionError || c.Status == ConnectionPending {
			st.Error = c.StatusReason
		}
	case flag:
		st.Status = ConnectionConnected
	}
	return st
}

// ChannelStates returns the state of every channel (in the order of
// Channels) in a workspace: connected with credentials, connected by the
// flag alone, in error, or disconnected.
func (s *Service) ChannelStates(ctx context.Context, workspaceID string) ([]*ChannelState, error) {
	w, err := s.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	conns, err := s.Connections(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]*ChannelState, 0, len(Channels()))
	for _, ch := range Channels() {
		var c *ChannelConnection
		if i := slices.IndexFunc(conns, func(c *ChannelConnection) bool { return c.Channel == ch }); i >= 0 {
			c = conns[i]
		}
		out = append(out, stateOf(ch, slices.Contains(w.Channels, ch), c))
	}
	return out, nil
}

// ChannelCredentials are what a channel needs to send for a workspace,
// named as Meta names them: PhoneNumberID, WABAID and (optionally)
// DisplayPhoneNumber for whatsapp, PageID for messenger,
// InstagramAccountID for instagram, and the AccessToken of each. A field
// of another channel is refused.
type ChannelCredentials struct {
	PhoneNumberID      string
	WABAID             string
	DisplayPhoneNumber string
	PageID             string
	InstagramAccountID string
	AccessToken        string
}

// channelByPath returns a not_found error when channel is not a channel:
// the management API addresses channels as resources.
func channelByPath(channel string) error {
	if validateChannel(channel) != nil {
		return &Error{Code: CodeNotFound, Message: fmt.Sprintf("channel %q not found; the channels are %s", channel, strings.Join(Channels(), ", "))}
	}
	return nil
}

// PutChannel connects channel in a workspace with creds, or replaces its
// credentials (see Connect), and returns its state. An unknown channel is
// not_found; a field of another channel (page_id on whatsapp, ...) is a
// validation error naming it.
func (s *Service) PutChannel(ctx context.Context, workspaceID, channel string, creds *ChannelCredentials) (*ChannelState, error) {
	if err := channelByPath(channel); err != nil {
		return nil, err
	}
	if creds == nil {
		return nil, validationError("body", "is required")
	}
	p := &ConnectParams{WorkspaceID: workspaceID, Channel: channel, AccessToken: creds.AccessToken,
		WABAID: creds.WABAID, DisplayPhoneNumber: creds.DisplayPhoneNumber}
	others := []struct{ field, val, channel string }{
		{"phone_number_id", creds.PhoneNumberID, ChannelWhatsApp},
		{"page_id", creds.PageID, ChannelMessenger},
		{"instagram_account_id", creds.InstagramAccountID, ChannelInstagram},
	}
	for _, o := range others {
		switch {
		case o.channel == channel:
			p.AccountID = o.val
		case o.val != "":
			return nil, validationError(o.field, "is only for %s; %s takes %s", o.channel, channel, accountField(channel))
		}
	}
	c, err := s.Connect(ctx, p)
	if err != nil {
		return nil, err
	}
	return stateOf(channel, true, c), nil
}

// VerifyChannel asks the provider now whether the workspace's connection on
// channel holds its account, records the verdict (see VerifyConnection) and
// returns the channel's state. An unknown channel, or one never connected
// with credentials, is not_found.
func (s *Service) VerifyChannel(ctx context.Context, workspaceID, channel string) (*ChannelState, error) {
	if err := channelByPath(channel); err != nil {
		return nil, err
	}
	c, err := s.VerifyConnection(ctx, workspaceID, channel)
	if err != nil {
		return nil, err
	}
	w, err := s.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return stateOf(channel, slices.Contains(w.Channels, channel), c), nil
}

// RemoveChannel disconnects channel in a workspace (see
// DisconnectChannel; the connection record is kept as history) and
// returns its state, disconnected. Disconnecting a disconnected channel
// changes nothing. An unknown channel is not_found.
func (s *Service) RemoveChannel(ctx context.Context, workspaceID, channel string) (*ChannelState, error) {
	if err := channelByPath(channel); err != nil {
		return nil, err
	}
	if err := s.DisconnectChannel(ctx, workspaceID, channel); err != nil {
		return nil, err
	}
	return stateOf(channel, false, nil), nil
}
