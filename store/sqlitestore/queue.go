package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Dispatch queue figures (MessageQueueStats): both read only a partial
// index of the queued messages (messages_due for every workspace,
// messages_queue_workspace for one), never the table.
const (
	qQueueStatsAll = `SELECT COUNT(*), COALESCE(SUM(due_at <= ?1), 0), MIN(CASE WHEN due_at <= ?1 THEN due_at END)
		FROM messages WHERE status = 'queued'`
	qQueueStatsWS = `SELECT COUNT(*), COALESCE(SUM(due_at <= ?1), 0), MIN(CASE WHEN due_at <= ?1 THEN due_at END)
		FROM messages WHERE status = 'queued' AND workspace_id = ?2`
)

// MessageQueueStats implements driver.Store.
func (s *Store) MessageQueueStats(ctx context.Context, p *driver.MessageQueueStatsParams) (*messaging.MessageQueueStats, error) {
	var row *sql.Row
	if p.WorkspaceID == "" {
		row = s.r.QueryRowContext(ctx, qQueueStatsAll, fmtTime(p.Now))
	} else {
		row = s.r.QueryRowContext(ctx, qQueueStatsWS, fmtTime(p.Now), p.WorkspaceID)
	}
	st := &messaging.MessageQueueStats{}
	var err error
	if st.OldestDueAt, err = scanQueueStats(row, &st.Queued, &st.Due); err != nil {
		return nil, interpretError(err)
	}
	return st, nil
}

// scanQueueStats scans a row of queue figures into n (the records) and due
// (those due), and returns the oldest due time, nil when none is due.
func scanQueueStats(row *sql.Row, n, due *int64) (*time.Time, error) {
	var oldest sql.NullString
	if err := row.Scan(n, due, &oldest); err != nil {
		return nil, err
	}
	if !oldest.Valid || oldest.String == "" {
		return nil, nil
	}
	t, err := parseTime(oldest.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// Ping implements driver.Store: it reads the schema version through a
// reader connection and compares it with SchemaVersion.
func (s *Store) Ping(ctx context.Context) error {
	var v int
	if err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return interpretError(err)
	}
	if want := SchemaVersion(); v != want {
		return fmt.Errorf("sqlitestore: %w: the database is at version %d, this program needs %d", driver.ErrSchemaVersion, v, want)
	}
	return nil
}

// qSMSQueueStats reads the scheduler's queue through the partial index
// sms_messages_due, which holds the pending messages only.
const qSMSQueueStats = `SELECT COUNT(*), COALESCE(SUM(due_at <= ?1), 0), MIN(CASE WHEN due_at <= ?1 THEN due_at END)
	FROM sms_messages WHERE status IN ('scheduled', 'queued', 'sending')`

// SMSQueueStats implements sms.Store.
func (s *Store) SMSQueueStats(ctx context.Context, p *sms.QueueStatsParams) (*sms.QueueStats, error) {
	st := &sms.QueueStats{}
	var err error
	if st.OldestDueAt, err = scanQueueStats(s.r.QueryRowContext(ctx, qSMSQueueStats, fmtTime(p.Now)), &st.Pending, &st.Due); err != nil {
		return nil, interpretError(err)
	}
	return st, nil
}
