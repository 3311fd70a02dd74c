package memstore

import (
	"context"

	"github.com/ujumbe/messaging"
)

// AuditAppend implements messaging.Store.
func (s *Store) AuditAppend(ctx context.Context, e *messaging.AuditEvent) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s.auditSeq++
	e.Seq = s.auditSeq
	c := *e
	s.audit = append(s.audit, &c)
	return nil
}

// AuditList implements messaging.Store.
func (s *Store) AuditList(ctx context.Context, p *messaging.AuditListParams) ([]*messaging.AuditEvent, error) {
	unlock, err := s.rlock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []*messaging.AuditEvent
	for i := len(s.audit) - 1; i >= 0 && len(out) < p.Limit; i-- {
		e := s.audit[i]
		if e.WorkspaceID == p.WorkspaceID && (p.Before == 0 || e.Seq < p.Before) {
			c := *e
			out = append(out, &c)
		}
	}
	return out, nil
}
