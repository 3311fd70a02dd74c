package messaging

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/internal/workqueue"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// SMS fallback of template sends.
//
// A template send may name an SMS to send instead when WhatsApp cannot
// deliver the message (SendTemplateParams.Fallback): its text, an SMS
// account linked to the workspace (Service.LinkSMSAccount) and an
// approved sender id of it. The SMS goes out, through the SMS service
// (Options.SMSFallback), when the message fails as undeliverable (Meta's
// 131026: the number is not on WhatsApp) or is not delivered (nor read)
// within its wait: SMSFallbackParams.After seconds, or
// Options.SMSFallbackAfter (DefaultSMSFallbackAfter, 10 minutes). A
// message failed for another reason gets its SMS at the end of the wait.
//
// The fallback is stored with the message, in its transaction, and sent
// at most once whatever the number of instances and restarts: an
// instance claims it in the store (a lease) before it sends, the SMS
// carries an idempotency key derived from the message id (an instance
// that dies after the SMS service accepted it sends again under the same
// key, and the SMS service answers with the first SMS), and the outcome
// is recorded on the fallback, which is then settled for good. The
// message reads (Messages.Get, List) show it as Message.Fallback, with
// the SMS's status as the SMS service reports it. No webhook event of
// its own announces the SMS: the SMS account's delivery reports
// (sms.delivery_report) cover it.

// DefaultSMSFallbackAfter is how long a template send with an SMS
// fallback has to be delivered before its SMS goes out, unless the send
// or Options.SMSFallbackAfter says otherwise.
const DefaultSMSFallbackAfter = 10 * time.Minute

// DefaultSMSFallbackSweep is how often the sweeper looks for fallbacks
// whose wait ended (Options.SMSFallbackSweep).
const DefaultSMSFallbackSweep = 10 * time.Second

// fallbackLease is how long an instance holds a fallback it claimed:
// another instance takes it over after it (an SMS call that failed is
// tried again then).
const fallbackLease = time.Minute

// fallbackBatch is the most fallbacks one sweep claims.
const fallbackBatch = 100

// undeliverableCode is Meta's error code of a message to a number that
// is not a WhatsApp user: its SMS fallback goes out at once.
const undeliverableCode = "131026"

// SMSFallback sends the SMS fallbacks of template sends through an SMS
// service. Package sms implements it (sms.NewFallback); the server sets
// it as Options.SMSFallback.
type SMSFallback interface {
	// Check validates an SMS fallback at send time: the account exists,
	// the text is not blank and fits the SMS service's limit of parts,
	// the shortcode is an approved sender id of the account. A refusal is
	// an *SMSFallbackInvalid naming the member; any other error is the
	// SMS service's failure.
	Check(ctx context.Context, p *SMSFallbackParams) error
	// Send accepts the SMS of a fallback, charged and counted in
	// segments as any SMS of the account, under p.IdempotencyKey: a
	// repeat with the key returns the first SMS and sends nothing. A
	// refusal (insufficient credit, a sender no longer approved) is an
	// *SMSFallbackRefused; any other error is tried again later.
	Send(ctx context.Context, workspaceID string, p *SMSFallbackSend) (*SMSFallbackAccepted, error)
	// Status returns the status of an SMS Send accepted (by its provider
	// message id): SMSFallbackQueued, SMSFallbackSent,
	// SMSFallbackDelivered or SMSFallbackFailed, and for a failure its
	// reason.
	Status(ctx context.Context, partnerID, providerMessageID string) (status, reason string, err error)
}

// SMSFallbackSend is an SMS an SMSFallback sends.
type SMSFallbackSend struct {
	PartnerID string
	Shortcode string
	Text      string
	// To is the recipient in E.164 (+ and digits).
	To string
	// IdempotencyKey identifies the fallback (see FallbackIdempotencyKey).
	IdempotencyKey string
}

// SMSFallbackAccepted is an SMS an SMSFallback accepted.
type SMSFallbackAccepted struct {
	// MessageID is the SMS service's id; ProviderMessageID the id its
	// delivery reports take.
	MessageID         string
	ProviderMessageID string
	// Status is SMSFallbackQueued or a later status.
	Status string
}

// SMSFallbackInvalid is SMSFallback.Check's refusal: the member Field of
// fallback.sms (text, partner_id, shortcode) breaks Rule.
type SMSFallbackInvalid struct {
	Field string
	Rule  string
}

// Error implements error.
func (e *SMSFallbackInvalid) Error() string { return "fallback.sms." + e.Field + ": " + e.Rule }

// SMSFallbackRefused is SMSFallback.Send's refusal of an SMS: Reason
// tells why (insufficient credit, ...). Nothing was charged.
type SMSFallbackRefused struct {
	Reason string
}

// Error implements error.
func (e *SMSFallbackRefused) Error() string { return "the SMS was not sent: " + e.Reason }

// FallbackIdempotencyKey is the SMS idempotency key of the fallback of
// the message messageID.
func FallbackIdempotencyKey(messageID string) string { return "whatsapp-fallback:" + messageID }

// Statuses of a fallback (Message.Fallback.Status).
const (
	SMSFallbackPending   = record.SMSFallbackPending
	SMSFallbackSkipped   = record.SMSFallbackSkipped
	SMSFallbackNotSent   = record.SMSFallbackNotSent
	SMSFallbackQueued    = record.SMSFallbackQueued
	SMSFallbackSent      = record.SMSFallbackSent
	SMSFallbackDelivered = record.SMSFallbackDelivered
	SMSFallbackFailed    = record.SMSFallbackFailed
)

// Names of the SMS fallback records, from package record.
type (
	SMSFallbackRecord = record.SMSFallback
	FallbackParams    = record.FallbackParams
	SMSFallbackParams = record.SMSFallbackParams
)

// fallbackPath is the path of a member of fallback.sms.
func fallbackPath(member string) Path {
	p := record.FieldPath("fallback").Member("sms")
	if member != "" {
		p = p.Member(member)
	}
	return p
}

// checkFallback validates the members of the fallback of a template send
// and returns it as stored with the message (nil when there is none). The
// account is checked by checkFallbackAccount, as the send is accepted.
func (s *Service) checkFallback(fp *FallbackParams) (*record.SMSFallback, error) {
	if fp == nil {
		return nil, nil
	}
	p := fp.SMS
	if p == nil {
		return nil, validationErrorAt(fallbackPath(""), "is required when fallback is given")
	}
	if s.smsFallback == nil {
		return nil, validationErrorAt(fallbackPath(""), "this service sends no SMS fallbacks (no SMS service is configured)")
	}
	if strings.TrimSpace(p.Text) == "" {
		return nil, validationErrorAt(fallbackPath("text"), "is required and must not be blank")
	}
	if p.PartnerID == "" {
		return nil, validationErrorAt(fallbackPath("partner_id"), "is required: an SMS account linked to this workspace")
	}
	if p.Shortcode == "" {
		return nil, validationErrorAt(fallbackPath("shortcode"), "is required: an approved sender id of the SMS account")
	}
	if p.After < 0 || time.Duration(p.After)*time.Second > record.MaxSMSFallbackAfter {
		return nil, validationErrorAt(fallbackPath("after"), "must be 0 (the default, %d seconds) to %d seconds (got %d)",
			int(s.fallbackAfter/time.Second), int(record.MaxSMSFallbackAfter/time.Second), p.After)
	}
	after := time.Duration(p.After) * time.Second
	if after == 0 {
		after = s.fallbackAfter
	}
	return &record.SMSFallback{Text: p.Text, PartnerID: p.PartnerID, Shortcode: p.Shortcode, After: after, Status: record.SMSFallbackPending}, nil
}

// checkFallbackAccount checks the SMS fallback f of a template send of
// workspace ws (nil: none) against the SMS service, when the send is
// accepted (a repeat under its idempotency key is answered as the first
// whatever changed since): its account must be linked to ws, its text and
// shortcode pass the SMS service's rules.
func (s *Service) checkFallbackAccount(ctx context.Context, ws string, f *record.SMSFallback) error {
	if f == nil {
		return nil
	}
	linked, err := s.linkedSMSAccount(ctx, ws, f.PartnerID)
	if err != nil {
		return err
	}
	if !linked {
		return validationErrorAt(fallbackPath("partner_id"), "SMS account %q is not linked to this workspace", f.PartnerID)
	}
	if err := s.smsFallback.Check(ctx, &SMSFallbackParams{Text: f.Text, PartnerID: f.PartnerID, Shortcode: f.Shortcode}); err != nil {
		var inv *SMSFallbackInvalid
		if errors.As(err, &inv) {
			return validationErrorAt(fallbackPath(inv.Field), "%s", inv.Rule)
		}
		return &Error{Code: CodeInternal, Message: "internal error", Err: err}
	}
	return nil
}

// linkedSMSAccount reports whether the SMS account partnerID is linked
// to the workspace ws.
func (s *Service) linkedSMSAccount(ctx context.Context, ws, partnerID string) (bool, error) {
	list, err := s.store.WorkspaceSMSAccounts(ctx, ws)
	if err != nil {
		return false, wrapStoreError(err, "workspace", ws)
	}
	return slices.Contains(list, partnerID), nil
}

// LinkSMSAccount lets the workspace send SMS fallbacks through the SMS
// account partnerID (an operator's decision: SMS accounts belong to no
// workspace). It reports whether the link is new; the change is audited
// (sms_account.linked). ErrNotFound-coded when the workspace does not
// exist, or (with an SMS service configured) the account does not.
func (s *Service) LinkSMSAccount(ctx context.Context, workspaceID, partnerID string) (bool, error) {
	return s.setSMSLink(ctx, workspaceID, partnerID, true)
}

// UnlinkSMSAccount removes the link LinkSMSAccount made; it reports
// whether there was one. Fallbacks accepted before and still pending are
// not sent (their status becomes not_sent). Audited
// (sms_account.unlinked).
func (s *Service) UnlinkSMSAccount(ctx context.Context, workspaceID, partnerID string) (bool, error) {
	return s.setSMSLink(ctx, workspaceID, partnerID, false)
}

// SMSAccounts returns the partner ids of the SMS accounts linked to the
// workspace, sorted.
func (s *Service) SMSAccounts(ctx context.Context, workspaceID string) ([]string, error) {
	if _, err := s.store.WorkspaceGet(ctx, workspaceID); err != nil {
		return nil, wrapStoreError(err, "workspace", workspaceID)
	}
	list, err := s.store.WorkspaceSMSAccounts(ctx, workspaceID)
	if err != nil {
		return nil, wrapStoreError(err, "workspace", workspaceID)
	}
	return list, nil
}

func (s *Service) setSMSLink(ctx context.Context, ws, partnerID string, linked bool) (bool, error) {
	if partnerID == "" || len(partnerID) > 64 {
		return false, validationError("partner_id", "must be 1 to 64 characters")
	}
	if err := new(texts).at(nil, "partner_id", partnerID).result(); err != nil {
		return false, err
	}
	if linked && s.smsFallback != nil {
		// An unknown account fails Check on its partner id.
		err := s.smsFallback.Check(ctx, &SMSFallbackParams{PartnerID: partnerID})
		var inv *SMSFallbackInvalid
		switch {
		case errors.As(err, &inv) && inv.Field == "partner_id":
			return false, notFound("SMS account", partnerID)
		case err != nil && inv == nil:
			return false, &Error{Code: CodeInternal, Message: "internal error", Err: err}
		}
	}
	changed, err := s.store.WorkspaceSMSAccountSet(ctx, &driver.WorkspaceSMSAccountParams{WorkspaceID: ws, PartnerID: partnerID, Linked: linked, At: s.now()})
	if err != nil {
		return false, wrapStoreError(err, "workspace", ws)
	}
	if changed {
		action := "sms_account.unlinked"
		if linked {
			action = "sms_account.linked"
		}
		s.audit(ctx, ws, action, partnerID)
	}
	return changed, nil
}

// attachFallbacks sets the Fallback of the template sends among msgs of
// workspace ws that have one, the status of an SMS not final yet asked
// from the SMS service.
func (s *Service) attachFallbacks(ctx context.Context, ws string, msgs ...*Message) error {
	var ids []string
	for _, m := range msgs {
		if m != nil && m.Type == record.TypeTemplate && m.Direction == record.DirectionOutbound {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	fbs, err := s.store.MessageFallbacks(ctx, ws, ids)
	if err != nil {
		return wrapStoreError(err, "message", "")
	}
	for _, m := range msgs {
		f := fbs[m.ID]
		if f == nil {
			continue
		}
		if s.smsFallback != nil && f.SMSProviderMessageID != "" && (f.Status == SMSFallbackQueued || f.Status == SMSFallbackSent) {
			st, reason, err := s.smsFallback.Status(ctx, f.PartnerID, f.SMSProviderMessageID)
			if err != nil {
				s.log.WarnContext(ctx, "reading the status of an SMS fallback failed", "message_id", m.ID, "err", err)
			} else {
				f.Status, f.Reason = st, reason
			}
		}
		m.Fallback = f
	}
	return nil
}

// fallbackUndeliverable sends at once the SMS fallback of the message id
// of ws, which failed as undeliverable, if it has one still pending.
func (s *Service) fallbackUndeliverable(ctx context.Context, ws, id string) {
	ctx = context.WithoutCancel(ctx)
	now := s.now()
	claims, err := s.store.MessageFallbackClaim(ctx, &driver.MessageFallbackClaimParams{
		Now: now, Owner: s.owner, LeaseUntil: now.Add(fallbackLease), Limit: 1, WorkspaceID: ws, MessageID: id,
	})
	if err != nil {
		// The sweeper sends it at the end of its wait.
		s.log.ErrorContext(ctx, "claiming an SMS fallback failed", "message_id", id, "err", err)
		return
	}
	for _, c := range claims {
		s.sendFallback(ctx, c, true)
	}
}

// RunFallbacks claims the SMS fallbacks whose wait ended and settles
// each: skipped when its message was delivered (or read), else its SMS
// sent. It returns how many it settled. The sweeper started by Start
// runs it every Options.SMSFallbackSweep; tests call it.
func (s *Service) RunFallbacks(ctx context.Context) (int, error) {
	if s.smsFallback == nil {
		return 0, nil
	}
	n := 0
	for {
		now := s.now()
		claims, err := s.store.MessageFallbackClaim(ctx, &driver.MessageFallbackClaimParams{
			Now: now, Owner: s.owner, LeaseUntil: now.Add(fallbackLease), Limit: fallbackBatch,
		})
		if err != nil {
			return n, wrapStoreError(err, "message", "")
		}
		for _, c := range claims {
			if s.sendFallback(ctx, c, false) {
				n++
			}
		}
		if len(claims) < fallbackBatch {
			return n, nil
		}
	}
}

// runFallbackSweeper runs RunFallbacks every s.fallbackSweep until ctx
// is done or stop is closed.
func (s *Service) runFallbackSweeper(ctx context.Context, stop <-chan struct{}) {
	if s.smsFallback == nil || s.fallbackSweep < 0 {
		return
	}
	ctx, cancel := workqueue.UntilStopped(ctx, stop)
	defer cancel()
	for {
		if _, err := s.RunFallbacks(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "sweeping the SMS fallbacks failed", "err", err)
		}
		if err := s.sleep(ctx, s.fallbackSweep); err != nil {
			return
		}
	}
}

// sendFallback works on the fallback c claimed: unless undeliverable
// (the message failed as such), a message delivered or read skips it;
// else its SMS is sent and the outcome recorded. It reports whether it
// settled the fallback; when it did not (an error of the store or of the
// SMS service), the fallback is taken again once its lease ends.
func (s *Service) sendFallback(ctx context.Context, c *driver.MessageFallbackClaim, undeliverable bool) bool {
	f := c.Fallback
	settle := func(p driver.MessageFallbackSettleParams) bool {
		p.WorkspaceID, p.MessageID, p.Owner, p.At = c.WorkspaceID, c.MessageID, s.owner, s.now()
		ok, err := s.store.MessageFallbackSettle(ctx, &p)
		if err != nil {
			s.log.ErrorContext(ctx, "recording an SMS fallback failed", "message_id", c.MessageID, "err", err)
		}
		return ok
	}
	m, err := s.store.MessageGet(ctx, c.WorkspaceID, c.MessageID)
	if err != nil {
		s.log.ErrorContext(ctx, "reading the message of an SMS fallback failed", "message_id", c.MessageID, "err", err)
		return false
	}
	// Delivered or read: WhatsApp reached the person. Canceled: the
	// business withdrew the message, and its fallback with it.
	if !undeliverable && (m.Status == StatusDelivered || m.Status == StatusRead || m.Status == record.StatusCanceled) {
		return settle(driver.MessageFallbackSettleParams{Status: SMSFallbackSkipped})
	}
	linked, err := s.linkedSMSAccount(ctx, c.WorkspaceID, f.PartnerID)
	if err != nil {
		s.log.ErrorContext(ctx, "reading the SMS accounts of a workspace failed", "workspace", c.WorkspaceID, "err", err)
		return false
	}
	if !linked {
		return settle(driver.MessageFallbackSettleParams{Status: SMSFallbackNotSent,
			Reason: "the SMS account " + f.PartnerID + " is no longer linked to the workspace"})
	}
	sent, err := s.smsFallback.Send(ctx, c.WorkspaceID, &SMSFallbackSend{PartnerID: f.PartnerID, Shortcode: f.Shortcode, Text: f.Text,
		To: m.To, IdempotencyKey: FallbackIdempotencyKey(m.ID)})
	var refused *SMSFallbackRefused
	switch {
	case errors.As(err, &refused):
		return settle(driver.MessageFallbackSettleParams{Status: SMSFallbackNotSent, Reason: refused.Reason})
	case err != nil:
		s.log.ErrorContext(ctx, "sending an SMS fallback failed; it is tried again", "message_id", c.MessageID, "err", err)
		return false
	}
	return settle(driver.MessageFallbackSettleParams{Status: sent.Status, SMSMessageID: sent.MessageID, SMSProviderMessageID: sent.ProviderMessageID})
}
