package memstore

import (
	"context"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// AuditAppend implements driver.Store.
func (s *Store) AuditAppend(ctx context.Context, e *messaging.AuditEvent) error {
	return s.update(ctx, func() error {
		s.auditSeq++
		e.Seq = s.auditSeq
		c := *e
		s.audit = append(s.audit, &c)
		return nil
	})
}

// AuditList implements driver.Store.
func (s *Store) AuditList(ctx context.Context, p *driver.AuditListParams) ([]*messaging.AuditEvent, error) {
	return read(ctx, s, func() ([]*messaging.AuditEvent, error) {
		return newestPage(s.audit, p.Limit, func(e *messaging.AuditEvent) bool {
			return e.WorkspaceID == p.WorkspaceID && (p.Before == 0 || e.Seq < p.Before)
		}, shallowCopy), nil
	})
}
