package messaging

import (
	"context"

	"github.com/ujumbe/messaging/internal/paging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// actorKey is the context key of the actor of a management change.
type actorKey struct{}

// WithActor returns a context whose management changes are recorded as
// made by actor (an API key id, "operator", "bootstrap").
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorFrom returns the actor WithActor set on ctx, or "library".
func ActorFrom(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	return "library"
}

// audit records a management change that has been made. A failure to
// record it is logged and does not undo or fail the change.
func (s *Service) audit(ctx context.Context, workspaceID, action, target string) {
	e := &AuditEvent{ID: record.NewID("aud"), WorkspaceID: workspaceID, Actor: ActorFrom(ctx), Action: action, Target: target, At: s.now()}
	if err := s.store.AuditAppend(context.WithoutCancel(ctx), e); err != nil {
		s.log.ErrorContext(ctx, "recording an audit event failed", "workspace", workspaceID, "action", action, "target", target, "err", err)
	}
}

// AuditEvents returns a page of the workspace's audit events, newest
// first: at most limit (1 to MaxAuditPage; 0 means 50) after the cursor
// (empty: from the newest). next is the cursor of the following page,
// empty when there is none.
func (s *Service) AuditEvents(ctx context.Context, workspaceID, cursor string, limit int) (events []*AuditEvent, next string, err error) {
	before, limit, err := seqPage(cursor, limit, record.MaxAuditPage)
	if err != nil {
		return nil, "", err
	}
	list, err := s.store.AuditList(ctx, &driver.AuditListParams{WorkspaceID: workspaceID, Before: before, Limit: limit + 1})
	if err != nil {
		return nil, "", wrapStoreError(err, "audit event", "")
	}
	list, next = paging.Cut(list, limit, func(e *AuditEvent) string { return paging.FormatSeq(e.Seq) })
	return list, next, nil
}
