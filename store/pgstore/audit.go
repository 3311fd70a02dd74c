package pgstore

import (
	"context"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
)

// AuditAppend implements driver.Store: seq comes from a sequence, so
// it only grows (a rolled-back insert leaves a gap, never a repeat).
func (s *Store) AuditAppend(ctx context.Context, e *messaging.AuditEvent) error {
	ctx = writeCtx(ctx)
	err := s.pool.QueryRow(ctx, `INSERT INTO audit_events (id, workspace_id, actor, action, target, at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq`,
		e.ID, e.WorkspaceID, e.Actor, e.Action, e.Target, ts(e.At)).Scan(&e.Seq)
	return interpretError(err)
}

// AuditList implements driver.Store.
func (s *Store) AuditList(ctx context.Context, p *driver.AuditListParams) ([]*messaging.AuditEvent, error) {
	before := sqlrows.Before(p.Before)
	rows, err := s.pool.Query(ctx, `SELECT seq, id, workspace_id, actor, action, target, at FROM audit_events
		WHERE workspace_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, p.WorkspaceID, before, p.Limit)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []*messaging.AuditEvent
	for rows.Next() {
		var e messaging.AuditEvent
		var at int64
		if err := rows.Scan(&e.Seq, &e.ID, &e.WorkspaceID, &e.Actor, &e.Action, &e.Target, &at); err != nil {
			return nil, interpretError(err)
		}
		e.At = fromTS(at)
		out = append(out, &e)
	}
	return out, interpretError(rows.Err())
}
