package messaging

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

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
	if err == nil && c.Status != record.ConnectionDisconnected && c.VerifiedAt == nil {
		if c.Status == record.ConnectionPending {
			return nil, &SendError{Code: record.CodeUnverified, Retryable: true,
				Text: fmt.Sprintf("the %s connection's credentials are not verified with the provider yet", channel)}
		}
		// Refused, or superseded by another workspace: waiting cannot help.
		return nil, &SendError{Code: record.CodeUnverified, Text: fmt.Sprintf("the %s connection does not hold its account: %s", channel, c.StatusReason)}
	}
	if err == nil && c.Status != record.ConnectionDisconnected {
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

// connectedSender returns the workspace's sender on channel for a call to
// the provider about what ("the media of message m cannot be fetched"): a
// channel that is not connected is channel_unavailable naming what, an
// unverified connection channel_unavailable with its reason.
func (s *Service) connectedSender(ctx context.Context, ws, channel, what string) (*ChannelSender, error) {
	snd, err := s.ChannelSender(ctx, ws, channel)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, errorOn(CodeChannelUnavailable, "channel", fmt.Sprintf("%s: channel %s is not connected", what, channel), nil)
	case err != nil:
		return nil, senderError(err, channel)
	}
	return snd, nil
}

// senderError is the error of a ChannelSender lookup for channel: a
// connection the provider has not verified is channel_unavailable; a
// store error is wrapped as such.
func senderError(err error, channel string) error {
	var se *SendError
	if errors.As(err, &se) && se.Code == record.CodeUnverified {
		return errorOn(CodeChannelUnavailable, "channel", "channel: "+se.Text, err)
	}
	return wrapStoreError(err, "connection", channel)
}

// setConnectionState records a verdict on the credentials snd was read
// with; credentials replaced since are left alone.
func (s *Service) setConnectionState(ctx context.Context, snd *ChannelSender, status, reason string) {
	_, err := s.store.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: snd.WorkspaceID, Channel: snd.Channel,
		Generation: snd.Generation, Status: status, StatusReason: reason, At: s.now()})
	if err != nil {
		s.log.ErrorContext(ctx, "recording a connection's state failed", "workspace", snd.WorkspaceID, "channel", snd.Channel, "status", status, "err", err)
	} else if status == record.ConnectionError {
		s.log.WarnContext(ctx, "the provider refused a connection's credentials", "workspace", snd.WorkspaceID, "channel", snd.Channel, "reason", reason)
	}
}

// credentialsRefused marks the workspace's connection on channel as
// error, when the provider refused its credentials during a call that
// started at started (credentials put since then are left alone).
func (s *Service) credentialsRefused(ctx context.Context, workspaceID, channel string, se *SendError, started time.Time) {
	c, err := s.raw.ConnectionGet(ctx, workspaceID, channel)
	if err != nil || c.Status == record.ConnectionDisconnected || c.UpdatedAt.After(started) {
		return
	}
	s.setConnectionState(ctx, &ChannelSender{WorkspaceID: workspaceID, Channel: channel, Generation: c.Generation}, record.ConnectionError, FailureReason(se.Code, se.Text))
}
