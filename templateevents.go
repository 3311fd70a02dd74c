package messaging

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// templateGone is the state of a provider status that means the template
// is gone at the provider.
const templateGone = "\x00gone"

// TemplateEventState maps a provider's template status or event (Meta's
// name, any case) to the review state it puts the template in:
//
//	APPROVED, REINSTATED, UNARCHIVED  approved
//	PENDING, IN_APPEAL                pending
//	REJECTED                          rejected
//	PAUSED, ARCHIVED                  paused (not sendable; can come back)
//	DISABLED, LIMIT_EXCEEDED          disabled
//	FLAGGED                           "" (the state does not change: the
//	                                  template stays sendable; the reason
//	                                  records the flag)
//	PENDING_DELETION, DELETED         gone (ok is true, state "": the
//	                                  template is removed)
//
// ok is false for a status it does not know.
func TemplateEventState(status string) (state string, ok bool) {
	switch strings.ToUpper(status) {
	case record.ProviderTemplateApproved, record.ProviderTemplateReinstated, record.ProviderTemplateUnarchived:
		return record.TemplateApproved, true
	case record.ProviderTemplatePending, record.ProviderTemplateInAppeal:
		return record.TemplatePending, true
	case record.ProviderTemplateRejected:
		return record.TemplateRejected, true
	case record.ProviderTemplatePaused, record.ProviderTemplateArchived:
		return record.TemplatePaused, true
	case record.ProviderTemplateDisabled, record.ProviderTemplateLimitExceeded:
		return record.TemplateDisabled, true
	case record.ProviderTemplateFlagged, record.ProviderTemplateQuality:
		return "", true
	case record.ProviderTemplatePendingDeletion, record.ProviderTemplateDeleted:
		return templateGone, true
	}
	return "", false
}

// TemplateEvent is a channel provider's report about a template: a review
// result, a later status change or a quality change.
type TemplateEvent struct {
	// WorkspaceID is the template's workspace. When empty, OwnerID finds
	// it: the workspace whose whatsapp connection holds that owner id
	// (ChannelSpec.Owner: WhatsApp's WABA id; see WorkspaceForOwner).
	WorkspaceID string
	OwnerID     string
	// ProviderTemplateID is the provider's id of the template; when the
	// workspace has no template with it, Name and Language find it.
	ProviderTemplateID string
	Name               string
	Language           string
	// Event is the provider's event (see TemplateEventState), or
	// ProviderTemplateQuality for a quality change.
	Event string
	// Reason is the provider's reason for a rejection, pause, disablement
	// or flag ("NONE" counts as none).
	Reason string
	// Quality is the new quality rating (GREEN, YELLOW, RED, UNKNOWN),
	// when the event carries one.
	Quality string
}

// ApplyTemplateEvent applies a provider's template event to the template
// it is about and returns the template as stored (nil when the event
// removed it). The provider's word is final: an event moves a submitted
// template to the event's state whatever its current state (the rules of
// SetStatus guard changes made by hand); events about a draft, which the
// provider cannot know, are refused. An unknown event is a
// validation_error naming "event"; an unknown account or template is
// not_found. Applying an event twice is harmless.
func (s *Service) ApplyTemplateEvent(ctx context.Context, ev *TemplateEvent) (*Template, error) {
	if err := requireStorable(ev, "event", templateEventTexts); err != nil {
		return nil, err
	}
	state, ok := TemplateEventState(ev.Event)
	if !ok {
		return nil, validationError("event", "unknown template event %q", ev.Event)
	}
	ws := ev.WorkspaceID
	if ws == "" {
		var err error
		if ws, err = s.WorkspaceForOwner(ctx, ChannelWhatsApp, ev.OwnerID); err != nil {
			return nil, err
		}
	}
	t, err := s.findProviderTemplate(ctx, ws, ev.ProviderTemplateID, ev.Name, ev.Language)
	if err != nil {
		return nil, err
	}
	if t.Status == record.TemplateDraft {
		return nil, errorOn(CodeConflict, "status", "status: a draft template has not been submitted; the provider cannot review it", nil)
	}
	if state == templateGone {
		if err := s.store.TemplateDelete(ctx, ws, t.ID); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, wrapStoreError(err, "template", t.ID)
		}
		return nil, nil
	}
	next := *t
	reason := ev.Reason
	if strings.EqualFold(reason, "NONE") {
		reason = ""
	}
	switch {
	case strings.EqualFold(ev.Event, record.ProviderTemplateQuality):
	case state == "": // FLAGGED
		next.StatusReason = strings.TrimSpace("flagged " + reason)
	default:
		next.Status, next.StatusReason = state, reason
		if strings.EqualFold(ev.Event, record.ProviderTemplateArchived) && reason == "" {
			next.StatusReason = "archived"
		}
	}
	if ev.Quality != "" {
		next.Quality = strings.ToUpper(ev.Quality)
	}
	if next.ProviderTemplateID == "" {
		next.ProviderTemplateID = ev.ProviderTemplateID
	}
	if next.Status == t.Status && next.StatusReason == t.StatusReason && next.Quality == t.Quality && next.ProviderTemplateID == t.ProviderTemplateID {
		t.SendExample = SendExample(t)
		return t, nil
	}
	next.UpdatedAt = s.now()
	if err := s.store.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &next, From: []string{t.Status}}); err != nil {
		if errors.Is(err, driver.ErrStale) {
			return nil, errorOn(CodeConflict, "status", "status: the template changed while the event was applied; apply it again", err)
		}
		return nil, wrapStoreError(err, "template", t.ID)
	}
	s.announceTemplate(ctx, t, &next)
	next.SendExample = SendExample(&next)
	return &next, nil
}

// findProviderTemplate finds a template of the workspace by the provider's
// id, else by name and language.
func (s *Service) findProviderTemplate(ctx context.Context, ws, providerID, name, lang string) (*Template, error) {
	if providerID != "" {
		list, err := s.store.TemplateList(ctx, &driver.TemplateListParams{WorkspaceID: ws})
		if err != nil {
			return nil, wrapStoreError(err, "template", "")
		}
		for _, t := range list {
			// The provider's id is its key (Meta never reuses one, nor
			// renames a template); the name is a fallback.
			if t.ProviderTemplateID == providerID {
				return t, nil
			}
		}
	}
	if name == "" || lang == "" {
		return nil, notFound("template", providerID)
	}
	t, err := s.store.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: ws, Name: name, Language: lang})
	if err != nil {
		return nil, wrapStoreError(err, "template", fmt.Sprintf("%s/%s", name, lang))
	}
	return t, nil
}

// WorkspaceForAccount returns the workspace whose connection on channel
// holds account as its account id (ChannelConnection.Holds: not
// disconnected, and verified by the provider) (phone-number id, page
// id, Instagram account id). not_found when there is none: an event for
// an unknown account is never applied to another workspace.
// service_unavailable when the only claims of the account are pending
// verification, so that a receiver asks the provider to deliver the event
// again rather than drop it.
func (s *Service) WorkspaceForAccount(ctx context.Context, channel, account string) (string, error) {
	return s.workspaceFor(ctx, &driver.ConnectionListParams{Channel: channel, AccountID: account}, account)
}

// WorkspaceForOwner returns the workspace whose connection on channel
// holds owner as the id of its account's owner (ChannelSpec.Owner, for
// example WhatsApp's WABA id; ChannelConnection.Holds: not disconnected,
// verified). not_found when there is none; service_unavailable when the
// only claims are pending verification, as for WorkspaceForAccount.
func (s *Service) WorkspaceForOwner(ctx context.Context, channel, owner string) (string, error) {
	return s.workspaceFor(ctx, &driver.ConnectionListParams{Channel: channel, WABAID: owner}, owner)
}

func (s *Service) workspaceFor(ctx context.Context, p *driver.ConnectionListParams, id string) (string, error) {
	if id == "" {
		return "", notFound("account", id)
	}
	list, err := s.store.ConnectionList(ctx, p)
	if err != nil {
		return "", wrapStoreError(err, "connection", "")
	}
	pending := false
	for _, c := range list {
		// Only a connection the provider verified receives the account's
		// events: an unverified claim never reads another's messages.
		if c.Holds() {
			return c.WorkspaceID, nil
		}
		pending = pending || c.Status == record.ConnectionPending
	}
	if pending {
		// A claim waits for the provider's verdict: the event is neither
		// applied nor dropped; the provider is asked to deliver it again.
		return "", &Error{Code: CodeServiceUnavailable, Message: fmt.Sprintf("account %s: its connection is pending verification with the provider; retry later", id)}
	}
	return "", notFound("account", id)
}
