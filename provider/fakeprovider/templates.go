package fakeprovider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

var _ messaging.TemplateManager = (*Provider)(nil)

// Template review of the fake, as Meta's codes and reasons name it.
const (
	// RejectPrefix starts the names of templates the fake rejects.
	RejectPrefix = "reject_"
	// ReasonInvalidFormat is the rejection reason of those templates.
	ReasonInvalidFormat = "INVALID_FORMAT"
)

// TemplateSink receives the fake's template review events.
// *messaging.Service satisfies it. A Sink that is not a TemplateSink
// receives no template events.
type TemplateSink interface {
	ApplyTemplateEvent(ctx context.Context, ev *messaging.TemplateEvent) (*messaging.Template, error)
}

// templateEvent is a scheduled review event.
type templateEvent struct {
	due time.Time
	ev  messaging.TemplateEvent
}

// SubmitTemplate implements messaging.TemplateManager: the fake reviews
// every submitted template deterministically. It answers PENDING with an
// id (Options.TemplateIDPrefix and a sequence number: "fake-tpl-1", ...) and schedules the review result Options.ReviewAfter
// later (applied by Flush, like status reports): REJECTED with reason
// INVALID_FORMAT for a template whose name starts with "reject_", APPROVED
// for every other. The sender may be nil: the fake needs no credentials.
//
// As Meta, it refuses (a permanent *messaging.SendError, 100 "Invalid
// parameter", which the service records as the template's rejection) a
// template whose IMAGE, VIDEO or DOCUMENT header has no ExampleHandle, or
// one that is not a live handle UploadTemplateSample gave for a sample of
// that kind (and of the template's workspace, when the upload had a
// sender).
func (p *Provider) SubmitTemplate(ctx context.Context, _ *messaging.ChannelSender, t *messaging.Template) (*messaging.ProviderTemplate, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t == nil || t.Name == "" || t.Language == "" {
		return nil, refuse(CodeInvalidParameter, TextInvalidParameter)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkHeaderHandle(t); err != nil {
		return nil, err
	}
	p.tplSeq++
	id := p.opts.TemplateIDPrefix + strconv.Itoa(p.tplSeq)
	if p.opts.ReviewAfter >= 0 {
		ev := messaging.TemplateEvent{WorkspaceID: t.WorkspaceID, ProviderTemplateID: id, Name: t.Name, Language: t.Language,
			Event: record.ProviderTemplateApproved}
		if strings.HasPrefix(t.Name, RejectPrefix) {
			ev.Event, ev.Reason = record.ProviderTemplateRejected, ReasonInvalidFormat
		}
		p.tplEvents = append(p.tplEvents, templateEvent{due: p.opts.Clock().Add(p.opts.ReviewAfter), ev: ev})
	}
	return &messaging.ProviderTemplate{ID: id, Name: t.Name, Language: t.Language, Category: t.Category,
		Status: record.ProviderTemplatePending}, nil
}

// checkHeaderHandle checks the sample handle of t's media header; p.mu is
// held.
func (p *Provider) checkHeaderHandle(t *messaging.Template) error {
	for _, c := range t.Components {
		if c.Type != "HEADER" {
			continue
		}
		kind := strings.ToLower(c.Format)
		if kind != record.MediaImage && kind != record.MediaVideo && kind != record.MediaDocument {
			continue
		}
		if c.ExampleHandle == "" {
			return invalid("header_handle is required for a media header")
		}
		u, ok := p.uploads[c.ExampleHandle]
		switch {
		case !ok || u.Purpose != record.MediaForTemplateSample || (u.WorkspaceID != "" && u.WorkspaceID != t.WorkspaceID):
			return invalid(fmt.Sprintf("header_handle %q is not an uploaded sample", c.ExampleHandle))
		case !p.opts.Clock().Before(u.ExpiresAt):
			return invalid(fmt.Sprintf("header_handle %q expired", c.ExampleHandle))
		case u.Kind != kind:
			return invalid(fmt.Sprintf("header_handle %q is a %s sample, not a %s one", c.ExampleHandle, u.Kind, kind))
		}
	}
	return nil
}

// DeleteTemplate implements messaging.TemplateManager: it drops the
// template's review events not applied yet. It never fails.
func (p *Provider) DeleteTemplate(ctx context.Context, _ *messaging.ChannelSender, t *messaging.Template) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.tplEvents[:0]
	for _, e := range p.tplEvents {
		if e.ev.WorkspaceID != t.WorkspaceID || e.ev.Name != t.Name || (t.ProviderTemplateID != "" && e.ev.ProviderTemplateID != t.ProviderTemplateID) {
			kept = append(kept, e)
		}
	}
	p.tplEvents = kept
	return nil
}

// TemplateEvent schedules a review event of a template, due at once
// (applied by the next Flush), as Meta sends them when a template's
// quality drops: for example messaging.ProviderTemplatePaused or
// messaging.ProviderTemplateDisabled with a reason, or
// messaging.ProviderTemplateReinstated.
func (p *Provider) TemplateEvent(workspaceID, name, language, event, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tplEvents = append(p.tplEvents, templateEvent{due: p.opts.Clock(), ev: messaging.TemplateEvent{
		WorkspaceID: workspaceID, Name: name, Language: language, Event: event, Reason: reason}})
}

// flushTemplates applies the template events due at now, in order, to a
// TemplateSink. An event about a template the sink does not know yet is
// kept for the next Flush (for up to RetryFor); one it refuses is logged
// and dropped.
func (p *Provider) flushTemplates(ctx context.Context, sink Sink, now time.Time) (applied int, errs []error) {
	ts, ok := sink.(TemplateSink)
	p.mu.Lock()
	var due, later []templateEvent
	for _, e := range p.tplEvents {
		if !e.due.After(now) && ok {
			due = append(due, e)
		} else {
			later = append(later, e)
		}
	}
	p.tplEvents = later
	p.mu.Unlock()
	var keep []templateEvent
	for _, e := range due {
		ev := e.ev
		_, err := ts.ApplyTemplateEvent(ctx, &ev)
		switch code := messaging.ErrorCode(err); {
		case err == nil:
			applied++
		case code == messaging.CodeNotFound && now.Sub(e.due) <= p.opts.RetryFor:
			keep = append(keep, e)
		case code == messaging.CodeNotFound || code == messaging.CodeConflict || code == messaging.CodeValidation:
			p.opts.Logger.WarnContext(ctx, "fakeprovider: dropping a template event", "template", ev.Name, "event", ev.Event, "err", err)
		default:
			keep = append(keep, e)
			if !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("fakeprovider: applying %s to template %s: %w", ev.Event, ev.Name, err))
			}
		}
	}
	if len(keep) > 0 {
		p.mu.Lock()
		p.tplEvents = append(keep, p.tplEvents...)
		p.mu.Unlock()
	}
	return applied, errs
}
