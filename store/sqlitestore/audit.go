package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
)

// AuditAppend implements driver.Store: seq is SQLite's AUTOINCREMENT,
// so it never goes back, even after the newest row is deleted.
func (s *Store) AuditAppend(ctx context.Context, e *messaging.AuditEvent) error {
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO audit_events (id, workspace_id, actor, action, target, at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`,
			e.ID, e.WorkspaceID, e.Actor, e.Action, e.Target, fmtTime(e.At)).Scan(&e.Seq)
	})
}

// AuditList implements driver.Store.
func (s *Store) AuditList(ctx context.Context, p *driver.AuditListParams) ([]*messaging.AuditEvent, error) {
	before := sqlrows.Before(p.Before)
	rows, err := s.query(ctx, `SELECT seq, id, workspace_id, actor, action, target, at FROM audit_events
		WHERE workspace_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`, p.WorkspaceID, before, p.Limit)
	out, err := collect(rows, err, func(sc scanner) (*messaging.AuditEvent, error) {
		var e messaging.AuditEvent
		return &e, sc.Scan(&e.Seq, &e.ID, &e.WorkspaceID, &e.Actor, &e.Action, &e.Target, storedTime{&e.At})
	})
	return out, interpretError(err)
}
