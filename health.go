package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// EventChannelQualityUpdated is announced to a workspace when the provider
// reports a change of one of its connections' account health: its quality
// rating or its messaging limit tier (for WhatsApp, Meta's
// phone_number_quality_update webhook). Its Data is a
// ChannelQualityEventData. A report that changes nothing is not announced.
const EventChannelQualityUpdated = "channel.quality_updated"

// ChannelQualityEventData is the payload of a channel.quality_updated
// event.
type ChannelQualityEventData struct {
	Channel   string `json:"channel"`
	AccountID string `json:"account_id"`
	// QualityRating and MessagingTier are the connection's values after
	// the report (empty: unknown); PreviousQualityRating and
	// PreviousMessagingTier the values before.
	QualityRating         string `json:"quality_rating"`
	MessagingTier         string `json:"messaging_tier"`
	PreviousQualityRating string `json:"previous_quality_rating"`
	PreviousMessagingTier string `json:"previous_messaging_tier"`
	// Event is the provider's event (Meta's FLAGGED, UNFLAGGED, UPGRADE,
	// DOWNGRADE, ONBOARDING, ...).
	Event string    `json:"event"`
	At    time.Time `json:"at"`
}

func (ChannelQualityEventData) eventData() {}

// MarshalJSON implements json.Marshaler: At is written with FormatTime.
func (d ChannelQualityEventData) MarshalJSON() ([]byte, error) {
	type fields ChannelQualityEventData
	return json.Marshal(struct {
		fields
		At jsonTime `json:"at"`
	}{fields(d), jsonTime(d.At)})
}

// ChannelQualityEvent is a channel provider's report of a change of an
// account's health (for WhatsApp, Meta's phone_number_quality_update
// webhook).
type ChannelQualityEvent struct {
	// Channel is the channel of the account (ChannelWhatsApp when empty).
	Channel string
	// AccountID is the account's id (the WhatsApp phone-number id) when
	// the provider says it. Else the connection is found by OwnerID (the
	// WhatsApp Business Account id) and DisplayPhoneNumber: the
	// connection of that owner whose display number is it, or the owner's
	// only connection.
	AccountID          string
	OwnerID            string
	DisplayPhoneNumber string
	// Event is the provider's event (FLAGGED, UNFLAGGED, UPGRADE,
	// DOWNGRADE, ONBOARDING, ...), announced as it is.
	Event string
	// QualityRating and MessagingTier are the new values, each when the
	// report carries one (empty: unchanged).
	QualityRating string
	MessagingTier string
}

// ApplyChannelQualityEvent applies a provider's report of an account's
// health to the connection that holds the account and returns the
// connection as stored (without its token). When the report changes the
// connection's quality rating or messaging tier, a
// channel.quality_updated event is announced (webhooks and Subscribe);
// a report that changes nothing (a repeat) changes and announces nothing.
// An account no verified connection holds is not_found (pending claims:
// service_unavailable, as WorkspaceForAccount).
func (s *Service) ApplyChannelQualityEvent(ctx context.Context, ev *ChannelQualityEvent) (*ChannelConnection, error) {
	if err := requireStorable(ev, "event", channelQualityEventTexts); err != nil {
		return nil, err
	}
	channel := ev.Channel
	if channel == "" {
		channel = ChannelWhatsApp
	}
	quality, tier := healthValue(ev.QualityRating), healthValue(ev.MessagingTier)
	if ev.QualityRating != "" && quality == "" {
		return nil, validationError("quality_rating", "must be an upper-case name such as GREEN (got %q)", ev.QualityRating)
	}
	if ev.MessagingTier != "" && tier == "" {
		return nil, validationError("messaging_tier", "must be an upper-case name such as TIER_1K (got %q)", ev.MessagingTier)
	}
	for attempt := 0; ; attempt++ {
		c, err := s.healthConnection(ctx, channel, ev)
		if err != nil {
			return nil, err
		}
		next := c.Clone()
		if quality != "" {
			next.QualityRating = quality
		}
		if tier != "" {
			next.MessagingTier = tier
		}
		if next.QualityRating == c.QualityRating && next.MessagingTier == c.MessagingTier {
			c.TokenSealed = nil
			return c, nil
		}
		now := s.now()
		ok, err := s.store.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: c.WorkspaceID, Channel: c.Channel,
			Generation: c.Generation, Health: &driver.ConnectionHealth{QualityRating: quality, MessagingTier: tier,
				FromQualityRating: c.QualityRating, FromMessagingTier: c.MessagingTier}, At: now})
		if err != nil {
			return nil, wrapStoreError(err, "connection", c.Channel)
		}
		if !ok {
			// Another report (or new credentials) changed it meanwhile:
			// read it again, so that each change is announced once.
			if attempt < 3 {
				continue
			}
			return nil, errorOn(CodeConflict, "event", "event: the connection changed while the report was applied; apply it again", nil)
		}
		s.log.InfoContext(ctx, "the provider reported a change of an account's health", "workspace", c.WorkspaceID, "channel", c.Channel,
			"quality_rating", next.QualityRating, "messaging_tier", next.MessagingTier, "event", ev.Event)
		s.announce(ctx, &Event{ID: record.NewID("evt"), Type: EventChannelQualityUpdated, CreatedAt: now, WorkspaceID: c.WorkspaceID,
			Data: ChannelQualityEventData{Channel: c.Channel, AccountID: c.AccountID, QualityRating: next.QualityRating,
				MessagingTier: next.MessagingTier, PreviousQualityRating: c.QualityRating, PreviousMessagingTier: c.MessagingTier,
				Event: strings.ToUpper(ev.Event), At: now}})
		out, err := s.raw.ConnectionGet(ctx, c.WorkspaceID, c.Channel)
		if err != nil {
			return nil, wrapStoreError(err, "connection", c.Channel)
		}
		out.TokenSealed = nil
		return out, nil
	}
}

// healthConnection finds the connection that holds the account ev is
// about (see ChannelQualityEvent).
func (s *Service) healthConnection(ctx context.Context, channel string, ev *ChannelQualityEvent) (*ChannelConnection, error) {
	var ws string
	var err error
	if ev.AccountID != "" {
		ws, err = s.WorkspaceForAccount(ctx, channel, ev.AccountID)
	} else {
		ws, err = s.WorkspaceForOwner(ctx, channel, ev.OwnerID)
	}
	if err != nil {
		return nil, err
	}
	c, err := s.raw.ConnectionGet(ctx, ws, channel)
	if err != nil {
		return nil, wrapStoreError(err, "connection", channel)
	}
	if ev.AccountID == "" && ev.DisplayPhoneNumber != "" && c.DisplayPhoneNumber != "" {
		// Meta writes the number without "+" or with spaces.
		if n, nerr := NormalizePhone(displayDigits(ev.DisplayPhoneNumber)); nerr == nil && n != c.DisplayPhoneNumber {
			return nil, notFound("account", ev.DisplayPhoneNumber)
		}
	}
	return c, nil
}

// displayDigits writes a display number as "+" and its digits.
func displayDigits(s string) string {
	var b strings.Builder
	b.WriteByte('+')
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// healthValue is a provider's quality rating or messaging tier in upper
// case, or "" when it is not 1 to 32 letters, digits and underscores.
func healthValue(v string) string {
	v = strings.ToUpper(strings.TrimSpace(v))
	if v == "" || len(v) > 32 || strings.IndexFunc(v, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') }) >= 0 {
		return ""
	}
	return v
}

// announce queues ev for every enabled endpoint of its workspace that
// subscribes to its type, and publishes it to in-process subscribers.
func (s *Service) announce(ctx context.Context, ev *Event) {
	ctx = context.WithoutCancel(ctx)
	rec, err := ev.record()
	if err == nil {
		var eps []*WebhookEndpoint
		eps, err = s.store.WebhookEndpointList(ctx, ev.WorkspaceID)
		for _, e := range eps {
			if err != nil {
				break
			}
			if e.DisabledAt == nil && (len(e.Events) == 0 || slices.Contains(e.Events, ev.Type)) {
				_, err = s.store.WebhookQueueEvent(ctx, &driver.WebhookQueueParams{EndpointID: e.ID, Event: rec})
			}
		}
	}
	if err != nil {
		s.log.ErrorContext(ctx, "announcing an event failed", "workspace", ev.WorkspaceID, "type", ev.Type, "err", err)
	}
	s.wakeWebhooks()
	s.events.publish(ctx, ev)
}

// ChannelUpdate is a change of a channel connection's settings
// (Channels.Update): each non-nil field is set.
type ChannelUpdate struct {
	// Throughput is how many messages per second the service may send
	// through the connection: record.MinThroughput to
	// record.MaxThroughput.
	Throughput *int
}

// Update changes the settings of the workspace's connection on channel
// (its throughput) and returns the channel's state. A throughput outside
// record.MinThroughput..record.MaxThroughput, or an update that sets
// nothing, is a validation_error naming throughput; a channel never
// connected with credentials is not_found.
func (c *Channels) Update(ctx context.Context, channel string, u *ChannelUpdate) (*ChannelState, error) {
	if _, err := c.svc.channelByPath(channel); err != nil {
		return nil, err
	}
	if u == nil || u.Throughput == nil {
		return nil, validationError("throughput", "is required")
	}
	if n := *u.Throughput; n < record.MinThroughput || n > record.MaxThroughput {
		return nil, validationError("throughput", "must be an integer from %d to %d messages per second (got %d)", record.MinThroughput, record.MaxThroughput, n)
	}
	for attempt := 0; ; attempt++ {
		conn, err := c.svc.raw.ConnectionGet(ctx, c.ws, channel)
		if err != nil {
			return nil, wrapStoreError(err, "connection", channel)
		}
		ok, err := c.svc.store.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: c.ws, Channel: channel,
			Generation: conn.Generation, Throughput: *u.Throughput, At: c.svc.now()})
		if err != nil {
			return nil, wrapStoreError(err, "connection", channel)
		}
		if ok {
			break
		}
		if attempt >= 3 {
			return nil, errorOn(CodeConflict, "throughput", fmt.Sprintf("throughput: the %s connection changed meanwhile; try again", channel), errors.New("stale generation"))
		}
	}
	c.svc.audit(ctx, c.ws, record.AuditChannelUpdated, channel)
	return c.svc.channelState(ctx, c.ws, channel)
}

// EventTemplateStatusUpdated is announced to a workspace when one of its
// templates changes review state, status reason or quality rating: the
// provider's review and later status and quality events
// (ApplyTemplateEvent), the provider's answer to a submission, a template
// sync that finds it changed, Templates.Submit (draft to pending) and
// Templates.SetStatus. It is announced once per change: a report that
// changes nothing is not. Its Data is a TemplateEventData.
const EventTemplateStatusUpdated = "template.status_updated"

// TemplateEventData is the payload of a template.status_updated event.
type TemplateEventData struct {
	TemplateID string `json:"template_id"`
	Name       string `json:"name"`
	Language   string `json:"language"`
	// Status is the template's review state after the change,
	// PreviousStatus the one before (they are equal when only the reason
	// or the quality changed).
	Status         string `json:"status"`
	PreviousStatus string `json:"previous_status"`
	// Reason is the provider's reason for a rejection, pause,
	// disablement or flag; empty when none.
	Reason string `json:"reason,omitempty"`
	// Quality is the provider's quality rating of the template (GREEN,
	// YELLOW, RED or UNKNOWN), PreviousQuality the one before; empty when
	// none was reported.
	Quality         string    `json:"quality,omitempty"`
	PreviousQuality string    `json:"previous_quality,omitempty"`
	At              time.Time `json:"at"`
}

func (TemplateEventData) eventData() {}

// MarshalJSON implements json.Marshaler: At is written with FormatTime.
func (d TemplateEventData) MarshalJSON() ([]byte, error) {
	type fields TemplateEventData
	return json.Marshal(struct {
		fields
		At jsonTime `json:"at"`
	}{fields(d), jsonTime(d.At)})
}

// announceTemplate announces a template.status_updated event when after
// differs from before in review state, reason or quality.
func (s *Service) announceTemplate(ctx context.Context, before, after *Template) {
	if before == nil || after == nil || (before.Status == after.Status && before.StatusReason == after.StatusReason && before.Quality == after.Quality) {
		return
	}
	now := s.now()
	s.announce(ctx, &Event{ID: record.NewID("evt"), Type: EventTemplateStatusUpdated, CreatedAt: now, WorkspaceID: after.WorkspaceID,
		Data: TemplateEventData{TemplateID: after.ID, Name: after.Name, Language: after.Language, Status: after.Status,
			PreviousStatus: before.Status, Reason: after.StatusReason, Quality: after.Quality, PreviousQuality: before.Quality, At: now}})
}
