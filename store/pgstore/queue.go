package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ujumbe/messaging"
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

// MessageQueueStats implements messaging.Store.
func (s *Store) MessageQueueStats(ctx context.Context, p *messaging.MessageQueueStatsParams) (*messaging.MessageQueueStats, error) {
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

// Ping implements messaging.Store: it reads the schema version of the
// store's schema and compares it with SchemaVersion.
func (s *Store) Ping(ctx context.Context) error {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return interpretError(err)
	}
	if want := SchemaVersion(); v != want {
		return fmt.Errorf("pgstore: %w: the database is at version %d, this program needs %d", messaging.ErrSchemaVersion, v, want)
	}
	return nil
}
