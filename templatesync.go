package messaging

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/workqueue"
)

// TemplateSyncOptions configure the refresh of the cached template list
// from providers that list templates (TemplateLister).
type TemplateSyncOptions struct {
	// Every is how often Start's loop synchronises every WhatsApp
	// connection with a WABA id, after a first sync at start. Zero means
	// DefaultTemplateSyncEvery; negative means at start only
	// (SyncTemplates still works on demand).
	Every time.Duration
	// Lease is how long one instance owns the sync of an account, so
	// that two instances on one database do not sync it at once. Zero
	// means DefaultTemplateSyncLease.
	Lease time.Duration
	// ResubmitAfter is how long a pending template that the provider
	// has not received (no provider id: it could not be reached) waits
	// before a sync hands it over again. Zero means one minute.
	ResubmitAfter time.Duration
}

// templateSender returns the provider's template capability and the
// workspace's WhatsApp sender (nil without credentials); ok is false when
// the provider does not manage templates.
func (s *Service) templateSender(ctx context.Context, ws string) (tm TemplateManager, snd *ChannelSender, ok bool, err error) {
	tm, ok = s.providerFor(ChannelWhatsApp).(TemplateManager)
	if !ok {
		return nil, nil, false, nil
	}
	snd, err = s.ChannelSender(ctx, ws, ChannelWhatsApp)
	return tm, snd, true, err
}

// submitToProvider hands a pending template to the provider, when it
// manages templates, and records its answer; it returns the template as
// stored. Failures are logged and leave the template pending without a
// provider id, for the sync to hand over again; a provider's refusal of
// the template itself rejects it with the provider's reason.
func (s *Service) submitToProvider(ctx context.Context, t *Template) *Template {
	tm, snd, ok, err := s.templateSender(ctx, t.WorkspaceID)
	if !ok {
		return t
	}
	log := func(msg string, err error) {
		s.log.WarnContext(ctx, msg, "workspace", t.WorkspaceID, "template_id", t.ID, "template", t.Name, "err", err)
	}
	if err != nil {
		log("template kept pending: the workspace has no WhatsApp connection to submit it with", err)
		return t
	}
	started := s.now()
	pt, err := tm.SubmitTemplate(ctx, snd, s.withSampleHandles(ctx, t))
	next := *t
	var se *SendError
	switch {
	case err == nil && pt != nil:
		next.ProviderTemplateID = pt.ID
		if st, ok := TemplateEventState(pt.Status); ok && st != "" && st != templateGone {
			next.Status, next.StatusReason = st, noneReason(pt.Reason)
		}
		if pt.Quality != "" {
			next.Quality = pt.Quality
		}
	case errors.As(err, &se) && se.Credentials:
		s.credentialsRefused(context.WithoutCancel(ctx), t.WorkspaceID, ChannelWhatsApp, se, started)
		log("template kept pending: the provider refused the connection's credentials", err)
		return t
	case errors.As(err, &se) && !se.Retryable:
		next.Status, next.StatusReason = record.TemplateRejected, FailureReason(se.Code, se.Text)
	default:
		log("template kept pending: submitting it to the provider failed; the template sync hands it over again", err)
		return t
	}
	next.UpdatedAt = s.now()
	if err := s.store.TemplateUpdate(context.WithoutCancel(ctx), &driver.TemplateUpdateParams{Template: &next, From: []string{record.TemplatePending}}); err != nil {
		// A review event may have moved it already; the stored record wins.
		if cur, gerr := s.store.TemplateGet(context.WithoutCancel(ctx), t.WorkspaceID, t.ID); gerr == nil {
			return cur
		}
		log("recording the provider's answer to a submission failed", err)
		return t
	}
	s.announceTemplate(ctx, t, &next)
	return &next
}

// withSampleHandles returns t with the provider's handle of each media
// header's sample (ExampleHandle) set from its upload; a sample that is
// gone is left without one (the provider's review refuses it). t itself
// is not changed.
func (s *Service) withSampleHandles(ctx context.Context, t *Template) *Template {
	c := *t
	c.Components = slices.Clone(t.Components)
	for i, tc := range c.Components {
		if tc.ExampleMedia == "" {
			continue
		}
		if u, err := s.store.MediaGet(ctx, t.WorkspaceID, tc.ExampleMedia); err == nil && u.Purpose == record.MediaForTemplateSample {
			c.Components[i].ExampleHandle = u.ProviderMediaID
		} else if err != nil && ErrorCode(err) != CodeNotFound {
			s.log.WarnContext(ctx, "reading a template's sample failed: submitting it without", "workspace", t.WorkspaceID, "template_id", t.ID, "err", err)
		}
	}
	return &c
}

func noneReason(r string) string {
	if r == "NONE" {
		return ""
	}
	return r
}

// deleteAtProvider deletes a submitted template at the provider when it
// manages templates.
func (s *Service) deleteAtProvider(ctx context.Context, t *Template) error {
	if t.Status == record.TemplateDraft {
		return nil
	}
	tm, snd, ok, err := s.templateSender(ctx, t.WorkspaceID)
	if !ok || (err != nil && errors.Is(err, ErrNotFound)) {
		return nil // nothing at a provider to delete
	}
	if err != nil {
		return senderError(err, ChannelWhatsApp)
	}
	started := s.now()
	err = tm.DeleteTemplate(ctx, snd, t)
	var se *SendError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		if se.Credentials {
			s.credentialsRefused(context.WithoutCancel(ctx), t.WorkspaceID, ChannelWhatsApp, se, started)
		}
		return errorOn(CodeConflict, "template", fmt.Sprintf("template: the channel provider refused to delete it: %s; it was kept", FailureReason(se.Code, se.Text)), err)
	}
	return &Error{Code: CodeServiceUnavailable, Message: "the channel provider could not be reached to delete the template; it was kept, try again later", Err: err}
}

// TemplateSyncResult counts what a template sync changed.
type TemplateSyncResult struct {
	Listed      int
	Created     int
	Updated     int
	Removed     int
	Resubmitted int
}

// SyncTemplates refreshes the workspace's cached templates from the
// provider's list of its WhatsApp account (when the provider is a
// TemplateLister and the connection has a WABA id): templates created at
// the provider appear, changed statuses, reasons, quality and components
// are applied, templates the provider no longer lists are removed, and
// pending templates the provider never received are handed over again.
// Drafts are never touched. A failure changes nothing (the last good list
// stays) and is recorded on the connection (TemplateSyncError). A sync of
// the same account running on another instance is a conflict.
func (s *Service) SyncTemplates(ctx context.Context, workspaceID string) (*TemplateSyncResult, error) {
	tl, ok := s.providerFor(ChannelWhatsApp).(TemplateLister)
	if !ok {
		return nil, errorOn(CodeConflict, "provider", "provider: the channel provider does not list templates", nil)
	}
	snd, err := s.ChannelSender(ctx, workspaceID, ChannelWhatsApp)
	if err != nil || snd == nil || snd.WABAID == "" {
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, senderError(err, ChannelWhatsApp)
		}
		return nil, errorOn(CodeChannelUnavailable, "channel", "channel: whatsapp has no connection with a WABA id to sync templates from", nil)
	}
	now := s.now()
	held, err := s.store.LeaseAcquire(ctx, &driver.LeaseParams{Name: "template-sync:" + snd.WABAID, Owner: s.owner, Now: now, Until: now.Add(s.syncOpts.Lease)})
	if err != nil {
		return nil, wrapStoreError(err, "lease", "")
	}
	if !held {
		f := s.spec(ChannelWhatsApp).Owner.Name
		return nil, errorOn(CodeConflict, f, f+": another instance is syncing this account's templates", nil)
	}
	defer func() {
		// Release: the next scheduled sync of any instance may run.
		_, _ = s.store.LeaseAcquire(context.WithoutCancel(ctx), &driver.LeaseParams{Name: "template-sync:" + snd.WABAID, Owner: s.owner, Now: s.now(), Until: s.now()})
	}()
	list, err := tl.ListTemplates(ctx, snd)
	if err != nil {
		var se *SendError
		reason := "the channel provider could not be reached"
		if errors.As(err, &se) {
			reason = FailureReason(se.Code, se.Text)
			if se.Credentials {
				s.credentialsRefused(context.WithoutCancel(ctx), workspaceID, ChannelWhatsApp, se, now)
			}
		}
		_, _ = s.store.ConnectionUpdate(context.WithoutCancel(ctx), &driver.ConnectionUpdateParams{WorkspaceID: workspaceID, Channel: ChannelWhatsApp,
			Generation: snd.Generation, SyncError: reason, At: s.now()})
		s.log.WarnContext(ctx, "template sync failed; the cached list is kept", "workspace", workspaceID, "reason", reason)
		return nil, &Error{Code: CodeServiceUnavailable, Message: "template sync failed, the cached list is kept: " + reason, Err: err}
	}
	res, err := s.applyTemplateList(ctx, workspaceID, list, now)
	if err != nil {
		return nil, err
	}
	at := s.now()
	if _, err := s.store.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: workspaceID, Channel: ChannelWhatsApp,
		Generation: snd.Generation, SyncedAt: &at, At: at}); err != nil {
		return nil, wrapStoreError(err, "connection", ChannelWhatsApp)
	}
	return res, nil
}

// applyTemplateList makes the workspace's submitted templates what the
// provider listed at listedAt.
func (s *Service) applyTemplateList(ctx context.Context, ws string, list []*ProviderTemplate, listedAt time.Time) (*TemplateSyncResult, error) {
	res := &TemplateSyncResult{Listed: len(list)}
	local, err := s.store.TemplateList(ctx, &driver.TemplateListParams{WorkspaceID: ws})
	if err != nil {
		return nil, wrapStoreError(err, "template", "")
	}
	seen := map[string]bool{}
	for _, pt := range list {
		st, ok := TemplateEventState(pt.Status)
		if !ok || st == "" || st == templateGone {
			continue // a status the cache has no place for, or on its way out
		}
		var cur *Template
		for _, t := range local {
			if (pt.ID != "" && t.ProviderTemplateID == pt.ID) || (t.Name == pt.Name && t.Language == pt.Language) {
				cur = t
				break
			}
		}
		if cur != nil && cur.Status == record.TemplateDraft {
			continue // a local draft that happens to share the name: not ours to change
		}
		next := Template{WorkspaceID: ws, Name: pt.Name, Language: pt.Language, Category: pt.Category, Status: st,
			StatusReason: noneReason(pt.Reason), Quality: pt.Quality, ProviderTemplateID: pt.ID, Components: pt.Components}
		if cur == nil {
			next.ID, next.CreatedAt, next.UpdatedAt = record.NewID("tpl"), s.now(), s.now()
			if err := s.store.TemplateCreate(ctx, &next); err != nil {
				return nil, wrapStoreError(err, "template", next.ID)
			}
			res.Created++
			seen[next.ID] = true
			continue
		}
		seen[cur.ID] = true
		next.ID, next.CreatedAt, next.UpdatedAt = cur.ID, cur.CreatedAt, cur.UpdatedAt
		if next.Category == "" {
			next.Category = cur.Category
		}
		if sameTemplate(cur, &next) {
			continue
		}
		next.UpdatedAt = s.now()
		if err := s.store.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &next, From: []string{cur.Status}}); err != nil {
			if errors.Is(err, driver.ErrStale) || errors.Is(err, ErrNotFound) {
				continue // changed meanwhile (an event): the next sync sees it
			}
			return nil, wrapStoreError(err, "template", cur.ID)
		}
		s.announceTemplate(ctx, cur, &next)
		res.Updated++
	}
	for _, t := range local {
		switch {
		case seen[t.ID] || t.Status == record.TemplateDraft:
		case t.Status == record.TemplatePending && t.ProviderTemplateID == "":
			if listedAt.Sub(t.UpdatedAt) >= s.syncOpts.ResubmitAfter {
				if up := s.submitToProvider(ctx, t); up.ProviderTemplateID != "" || up.Status != record.TemplatePending {
					res.Resubmitted++
				}
			}
		case t.UpdatedAt.After(listedAt):
			// Changed after the list was taken (a submission answered
			// meanwhile): the next sync judges it.
		default:
			if err := s.store.TemplateDelete(ctx, ws, t.ID); err != nil && !errors.Is(err, ErrNotFound) {
				return nil, wrapStoreError(err, "template", t.ID)
			}
			res.Removed++
		}
	}
	return res, nil
}

func sameTemplate(a, b *Template) bool {
	return a.Name == b.Name && a.Language == b.Language && a.Category == b.Category && a.Status == b.Status &&
		a.StatusReason == b.StatusReason && a.Quality == b.Quality && a.ProviderTemplateID == b.ProviderTemplateID &&
		slices.EqualFunc(a.Components, b.Components, func(x, y TemplateComponent) bool {
			return x.Type == y.Type && headerFormat(x) == headerFormat(y) && x.Text == y.Text && slices.Equal(x.Buttons, y.Buttons)
		})
}

// syncAll syncs every WhatsApp connection that holds its account and has a
// WABA id; failures
// are logged (and recorded on the connection by SyncTemplates).
func (s *Service) syncAll(ctx context.Context) {
	list, err := s.store.ConnectionList(ctx, &driver.ConnectionListParams{Channel: ChannelWhatsApp})
	if err != nil {
		s.log.ErrorContext(ctx, "template sync: listing connections failed", "err", err)
		return
	}
	for _, c := range list {
		if ctx.Err() != nil {
			return
		}
		if !c.Holds() || c.WABAID == "" {
			continue // only the WABA's verified holder syncs it
		}
		if res, err := s.SyncTemplates(ctx, c.WorkspaceID); err == nil {
			s.log.InfoContext(ctx, "templates synced", "workspace", c.WorkspaceID, "listed", res.Listed,
				"created", res.Created, "updated", res.Updated, "removed", res.Removed, "resubmitted", res.Resubmitted)
		} else if ErrorCode(err) != CodeConflict {
			s.log.WarnContext(ctx, "template sync failed", "workspace", c.WorkspaceID, "err", err)
		}
	}
}

// runTemplateSync syncs at start and then every Every (when positive)
// until stop.
func (s *Service) runTemplateSync(ctx context.Context, stop <-chan struct{}) {
	if _, ok := s.providerFor(ChannelWhatsApp).(TemplateLister); !ok {
		return
	}
	ctx, cancel := workqueue.UntilStopped(ctx, stop)
	defer cancel()
	for {
		s.syncAll(ctx)
		if s.syncOpts.Every < 0 {
			return
		}
		if err := s.sleep(ctx, s.syncOpts.Every); err != nil {
			return
		}
	}
}

// headerFormat is a component's format, with a HEADER's empty format read
// as TEXT (its default), as providers list it.
func headerFormat(c TemplateComponent) string {
	if c.Type == "HEADER" && c.Format == "" {
		return "TEXT"
	}
	return c.Format
}
