package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/workqueue"
)

// ConnectionVerifier is an optional capability of a Provider that proves
// that a connection's credentials control its account: for WhatsApp, that
// the access token reads the phone number among the numbers of the given
// WhatsApp Business Account; for Messenger, that the token is the page's;
// for Instagram, that the token reads the account. Channels.Connect needs
// it: a provider that cannot verify cannot be connected with credentials.
type ConnectionVerifier interface {
	// VerifyConnection returns what the provider knows of the account
	// when s.AccessToken controls s.AccountID (and s.WABAID); a
	// *VerificationError (or a *SendError with Credentials set, read as
	// a refusal of the access token) when the provider answers that it
	// does not; any other error when it could not tell (unreachable, a
	// 5xx, a rate limit).
	VerifyConnection(ctx context.Context, s *ChannelSender) (*VerifiedAccount, error)
}

// VerifiedAccount is what a provider reports of an account it verified.
type VerifiedAccount struct {
	// DisplayPhoneNumber is the WhatsApp number in E.164 as the provider
	// knows it; empty when it does not say (or on other channels).
	DisplayPhoneNumber string
	// QualityRating is the account's quality rating (record.QualityGreen,
	// QualityYellow, QualityRed or QualityUnknown) and MessagingTier its
	// messaging limit tier (record.Tier250 ... TierUnlimited, as Meta
	// names them), when the provider reports them; empty otherwise. The
	// connection keeps them (ChannelConnection.QualityRating,
	// MessagingTier).
	QualityRating string
	MessagingTier string
}

// VerificationError is a provider's answer that credentials do not control
// an account.
type VerificationError struct {
	// Field names the credential at fault, as the management API names
	// it: "access_token" or a field of the channel's spec (for Meta's
	// channels "phone_number_id", "waba_id", "page_id" or
	// "instagram_account_id").
	Field string
	// Code and Text are the provider's error code and text (Code may be
	// empty when the provider answered without an error, for example a
	// WABA that does not list the number).
	Code string
	Text string
}

// Error implements the error interface.
func (e *VerificationError) Error() string {
	return fmt.Sprintf("messaging: the provider refused %s: %s", e.Field, FailureReason(e.Code, e.Text))
}

// EventChannelStatusUpdated is announced to a workspace when the provider's
// verdict changes the state of one of its channel connections: verified
// (connected), refused (error, with the provider's reason), or superseded
// by another workspace that proved control of the account. Its Data is a
// ChannelEventData.
const EventChannelStatusUpdated = "channel.status_updated"

// ChannelEventData is the payload of a channel.status_updated event.
type ChannelEventData struct {
	Channel   string `json:"channel"`
	AccountID string `json:"account_id"`
	// Status is the connection's new status, PreviousStatus the one
	// before; Reason says why it is in error or pending.
	Status         string    `json:"status"`
	PreviousStatus string    `json:"previous_status"`
	Reason         string    `json:"reason,omitempty"`
	At             time.Time `json:"at"`
}

func (ChannelEventData) eventData() {}

// MarshalJSON implements json.Marshaler: At is written with FormatTime.
func (d ChannelEventData) MarshalJSON() ([]byte, error) {
	type fields ChannelEventData
	return json.Marshal(struct {
		fields
		At jsonTime `json:"at"`
	}{fields(d), jsonTime(d.At)})
}

// ConnectionCheckOptions configure the service's verification of stored
// connections with the provider (when it is a ConnectionVerifier).
type ConnectionCheckOptions struct {
	// Every is how often Start's loop looks for connections to verify:
	// every pending connection at each pass, every verified one whose
	// last proof is older than Recheck, and one in error without a proof
	// (refused, superseded) when it has not changed for Recheck. Zero means DefaultConnectionCheckEvery;
	// negative turns the loop off (Channels.Verify still works
	// on demand).
	Every time.Duration
	// Recheck is the age of a proof after which a verified connection
	// is verified again, so that a revoked token shows as error. Zero
	// means DefaultConnectionRecheck.
	Recheck time.Duration
	// Timeout bounds one verification's call to the provider. Zero
	// means DefaultVerifyTimeout.
	Timeout time.Duration
}

// providerReason is the text of a provider error for a status reason.
func providerReason(err error) string {
	var se *SendError
	if errors.As(err, &se) {
		return FailureReason(se.Code, se.Text)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the provider did not answer in time"
	}
	return "the provider could not be reached"
}

// verifyWith asks v to verify snd within the verification timeout. A
// refusal is returned as a *VerificationError (a SendError with
// Credentials set becomes one naming access_token); other errors are
// returned as they are (the provider could not tell).
func (s *Service) verifyWith(ctx context.Context, v ConnectionVerifier, snd *ChannelSender) (*VerifiedAccount, error) {
	ctx, cancel := context.WithTimeout(ctx, s.checkOpts.Timeout)
	defer cancel()
	acct, err := v.VerifyConnection(ctx, snd)
	var se *SendError
	if err != nil && errors.As(err, &se) && se.Credentials {
		return nil, &VerificationError{Field: "access_token", Code: se.Code, Text: se.Text}
	}
	if err == nil && acct != nil {
		out := &VerifiedAccount{QualityRating: healthValue(acct.QualityRating), MessagingTier: healthValue(acct.MessagingTier)}
		// A number the provider writes in another form is not refused:
		// it is only kept when it is E.164.
		if n, nerr := NormalizePhone(acct.DisplayPhoneNumber); acct.DisplayPhoneNumber != "" && nerr == nil {
			out.DisplayPhoneNumber = n
		}
		acct = out
	}
	return acct, err
}

// unknownVerdict is verifyStored's error when the provider could not tell.
type unknownVerdict struct{ err error }

func (u *unknownVerdict) Error() string { return "the provider could not tell: " + u.err.Error() }
func (u *unknownVerdict) Unwrap() error { return u.err }

// verifyStored verifies the stored connection c with the provider and
// records the verdict: a proof makes it connected (or, when another
// workspace holds the account, error); a refusal makes it error with the
// provider's reason. Each change of status is audited and announced. It
// returns an *unknownVerdict when the provider could not tell, and the
// error of the store or of the token's unsealing as it is.
func (s *Service) verifyStored(ctx context.Context, v ConnectionVerifier, c *ChannelConnection) error {
	tok, err := s.unsealFor(tokenPurpose, c.TokenSealed)
	if err != nil {
		return fmt.Errorf("messaging: the access token of %s/%s cannot be unsealed (was Options.SecretKey changed?): %w", c.WorkspaceID, c.Channel, err)
	}
	snd := &ChannelSender{WorkspaceID: c.WorkspaceID, Channel: c.Channel, AccountID: c.AccountID, WABAID: c.WABAID,
		AccessToken: string(tok), Generation: c.Generation}
	acct, verr := s.verifyWith(ctx, v, snd)
	var refused *VerificationError
	switch {
	case errors.As(verr, &refused):
		s.connectionVerdict(ctx, c, record.ConnectionError, FailureReason(refused.Code, refused.Text))
		return nil
	case verr != nil:
		return &unknownVerdict{verr}
	}
	p := &driver.ConnectionVerifiedParams{WorkspaceID: c.WorkspaceID, Channel: c.Channel, Generation: c.Generation, FromStatus: c.Status, At: s.now()}
	if acct != nil {
		p.DisplayPhoneNumber, p.QualityRating, p.MessagingTier = acct.DisplayPhoneNumber, acct.QualityRating, acct.MessagingTier
	}
	before := s.claimants(ctx, c)
	superseded, err := s.store.ConnectionVerified(ctx, p)
	switch {
	case errors.Is(err, ErrConflict):
		s.connectionVerdict(ctx, c, record.ConnectionError, "the account is connected to another workspace, which proved control of it")
		return nil
	case errors.Is(err, driver.ErrStale) || errors.Is(err, ErrNotFound):
		return nil // credentials replaced or disconnected meanwhile
	case err != nil:
		return err
	}
	s.supersede(ctx, superseded, before)
	if c.Status != record.ConnectionConnected {
		s.audit(ctx, c.WorkspaceID, record.AuditChannelVerified, c.Channel)
		s.announceChannel(ctx, c, c.Status, record.ConnectionConnected, "")
		// The account's templates are synchronised now rather than at the
		// next hourly pass.
		if _, ok := s.providerFor(ChannelWhatsApp).(TemplateLister); ok && c.Channel == ChannelWhatsApp && c.WABAID != "" {
			if _, err := s.SyncTemplates(ctx, c.WorkspaceID); err != nil {
				s.log.WarnContext(ctx, "template sync after a connection's verification failed", "workspace", c.WorkspaceID, "err", err)
			}
		}
	}
	return nil
}

// connectionVerdict records status and reason on c (its generation) and,
// when that changes its status or reason, audits and announces it.
func (s *Service) connectionVerdict(ctx context.Context, c *ChannelConnection, status, reason string) {
	if c.Status == status && c.StatusReason == reason {
		return
	}
	ok, err := s.store.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: c.WorkspaceID, Channel: c.Channel,
		Generation: c.Generation, Status: status, StatusReason: reason, FromStatus: c.Status, FromReason: c.StatusReason, At: s.now()})
	if err != nil {
		s.log.ErrorContext(ctx, "recording a connection's verification failed", "workspace", c.WorkspaceID, "channel", c.Channel, "err", err)
		return
	}
	if !ok {
		return
	}
	s.log.WarnContext(ctx, "the provider did not verify a connection", "workspace", c.WorkspaceID, "channel", c.Channel, "reason", reason)
	if c.Status != status {
		s.audit(ctx, c.WorkspaceID, record.AuditChannelRefused, c.Channel)
		s.announceChannel(ctx, c, c.Status, status, reason)
	}
}

// claimants returns the status of every other workspace's connection that
// a claim of c's account (or WABA) may supersede, by workspace and
// channel, read before the claim so that its announcement says what
// each was. A failed read leaves the statuses unknown (empty).
func (s *Service) claimants(ctx context.Context, c *ChannelConnection) map[[2]string]string {
	out := map[[2]string]string{}
	ps := []*driver.ConnectionListParams{{Channel: c.Channel, AccountID: c.AccountID}}
	if c.WABAID != "" {
		ps = append(ps, &driver.ConnectionListParams{WABAID: c.WABAID})
	}
	for _, p := range ps {
		list, err := s.store.ConnectionList(ctx, p)
		if err != nil {
			continue
		}
		for _, o := range list {
			if o.WorkspaceID != c.WorkspaceID {
				out[[2]string{o.WorkspaceID, o.Channel}] = o.Status
			}
		}
	}
	return out
}

// supersede audits and announces, in its own workspace, each connection a
// verified connection of another workspace superseded; before holds their
// statuses before (claimants).
func (s *Service) supersede(ctx context.Context, superseded []*ChannelConnection, before map[[2]string]string) {
	for _, o := range superseded {
		s.log.WarnContext(ctx, "a connection was superseded by another workspace's verified one", "workspace", o.WorkspaceID, "channel", o.Channel, "account_id", o.AccountID)
		s.audit(WithActor(ctx, "provider"), o.WorkspaceID, record.AuditChannelSuperseded, o.Channel)
		s.announceChannel(ctx, o, before[[2]string{o.WorkspaceID, o.Channel}], record.ConnectionError, record.ReasonSuperseded)
	}
}

// announceChannel queues a channel.status_updated event (c's status went
// from prev to status, for reason) for every enabled endpoint of c's
// workspace that subscribes to it, and publishes it to in-process
// subscribers.
func (s *Service) announceChannel(ctx context.Context, c *ChannelConnection, prev, status, reason string) {
	s.announce(ctx, &Event{ID: record.NewID("evt"), Type: EventChannelStatusUpdated, CreatedAt: s.now(), WorkspaceID: c.WorkspaceID,
		Data: ChannelEventData{Channel: c.Channel, AccountID: c.AccountID, Status: status, PreviousStatus: prev, Reason: reason, At: s.now()}})
}

// checkConnections verifies, once, every stored connection that is due
// (the unverified ones and those whose proof is older than Recheck) with
// the provider of its channel, when that is a ConnectionVerifier. One
// instance at a time does it (a lease in the store).
func (s *Service) checkConnections(ctx context.Context) {
	now := s.now()
	// The lease covers one verification and is renewed before each, so
	// that a long pass is never run by two instances at once.
	take := func() bool {
		t := s.now()
		held, err := s.store.LeaseAcquire(ctx, &driver.LeaseParams{Name: "connection-check", Owner: s.owner, Now: t,
			Until: t.Add(max(s.checkOpts.Every, time.Minute) + s.checkOpts.Timeout)})
		return err == nil && held
	}
	if !take() {
		return
	}
	list, err := s.store.ConnectionList(ctx, &driver.ConnectionListParams{})
	if err != nil {
		s.log.ErrorContext(ctx, "connection checks: listing connections failed", "err", err)
		return
	}
	old := now.Add(-s.checkOpts.Recheck)
	for _, c := range list {
		if ctx.Err() != nil {
			return
		}
		v, ok := s.providerFor(c.Channel).(ConnectionVerifier)
		if !ok || !connectionDue(c, old) {
			continue
		}
		if !take() {
			return
		}
		if err := s.verifyStored(ctx, v, c); err != nil {
			s.log.WarnContext(ctx, "connection check failed", "workspace", c.WorkspaceID, "channel", c.Channel, "err", err)
		}
	}
}

// connectionDue reports whether the periodic checks verify c now, when
// proofs older than old are stale: a pending connection at every pass; a
// verified one when its proof is stale; one in error without a proof
// (refused, or superseded) when it has not changed since old, since only
// new credentials usually help it.
func connectionDue(c *ChannelConnection, old time.Time) bool {
	switch {
	case c.Status == record.ConnectionDisconnected:
		return false
	case c.Status == record.ConnectionPending:
		return true
	case c.VerifiedAt != nil:
		return !c.VerifiedAt.After(old)
	}
	return !c.UpdatedAt.After(old)
}

// runConnectionChecks checks connections at start and then every Every
// (when positive) until stop.
func (s *Service) runConnectionChecks(ctx context.Context, stop <-chan struct{}) {
	verifies := slices.ContainsFunc(s.channels.providers, func(p Provider) bool { _, ok := p.(ConnectionVerifier); return ok })
	if !verifies || s.checkOpts.Every < 0 {
		return
	}
	ctx, cancel := workqueue.UntilStopped(ctx, stop)
	defer cancel()
	for {
		s.checkConnections(ctx)
		if err := s.sleep(ctx, s.checkOpts.Every); err != nil {
			return
		}
	}
}
