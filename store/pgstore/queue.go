package pgstore

import (
	"context"
	"fmt"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Dispatch queue figures (MessageQueueStats): both read only a partial
// index of the queued messages (messages_due for every workspace,
// messages_queue_workspace for one).
const (
	qQueueStatsAll = `SELECT count(*), count(*) FILTER (WHERE due_at <= $1), min(due_at) FILTER (WHERE due_at <= $1)
		FROM messages WHERE status = 'queued'`
	qQueueStatsWS = `SELECT count(*), count(*) FILTER (WHERE due_at <= $1), min(due_at) FILTER (WHERE due_at <= $1)
		FROM messages WHERE status = 'queued' AND workspace_id = $2`
)

// MessageQueueStats implements driver.Store.
func (s *Store) MessageQueueStats(ctx context.Context, p *driver.MessageQueueStatsParams) (*messaging.MessageQueueStats, error) {
	var row pgx.Row
	if p.WorkspaceID == "" {
		row = s.pool.QueryRow(ctx, qQueueStatsAll, ts(p.Now))
	} else {
		row = s.pool.QueryRow(ctx, qQueueStatsWS, ts(p.Now), p.WorkspaceID)
	}
	st := &messaging.MessageQueueStats{}
	var oldest *int64
	if err := row.Scan(&st.Queued, &st.Due, &oldest); err != nil {
		return nil, interpretError(err)
	}
	st.OldestDueAt = fromTSPtr(oldest)
	return st, nil
}

// Ping implements driver.Store: it reads the schema version of the
// store's schema and compares it with SchemaVersion.
func (s *Store) Ping(ctx context.Context) error {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return interpretError(err)
	}
	if want := SchemaVersion(); v != want {
		return fmt.Errorf("pgstore: %w: the database is at version %d, this program needs %d", driver.ErrSchemaVersion, v, want)
	}
	return nil
}

// qSMSQueueStats reads the scheduler's queue through the partial index
// sms_messages_due, which holds the pending messages only.
const qSMSQueueStats = `SELECT count(*), count(*) FILTER (WHERE due_at <= $1), min(due_at) FILTER (WHERE due_at <= $1)
	FROM sms_messages WHERE status IN ('scheduled', 'queued', 'sending')`

// SMSQueueStats implements sms.Store.
func (s *Store) SMSQueueStats(ctx context.Context, p *sms.QueueStatsParams) (*sms.QueueStats, error) {
	st := &sms.QueueStats{}
	var oldest *int64
	if err := s.pool.QueryRow(ctx, qSMSQueueStats, ts(p.Now)).Scan(&st.Pending, &st.Due, &oldest); err != nil {
		return nil, interpretError(err)
	}
	st.OldestDueAt = fromTSPtr(oldest)
	return st, nil
}
