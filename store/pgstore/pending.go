package pgstore

import (
	"context"
	"hash/fnv"

	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/internal/sqlrows"

	"github.com/jackc/pgx/v5"
)

// sweepBatch bounds the expired reports one PendingReportSave deletes.
const sweepBatch = 100

// pendingLockClass is the first key of the transaction-scoped advisory
// locks that serialize the saves of one provider message id (the second
// key is a hash of the id). Two-key advisory locks never collide with the
// one-key lock of the migrations.
const pendingLockClass = 0x6d736772 // "msgr"

// Statements of the pending provider reports (see
// migrations/0004_pending_reports.sql).
const (
	// qPendingSweep deletes a batch of expired reports, skipping those
	// another transaction is deleting, so concurrent saves never wait on
	// each other's sweep.
	qPendingSweep = `DELETE FROM pending_reports WHERE seq IN (
			SELECT seq FROM pending_reports WHERE received_at < $1 ORDER BY received_at LIMIT $2
			FOR UPDATE SKIP LOCKED)`
	qPendingInsert = `INSERT INTO pending_reports (provider_message_id, status, provider_code, provider_text, received_at)
			SELECT $1, $2, $3, $4, $5
			WHERE (SELECT count(*) FROM pending_reports WHERE provider_message_id = $1 AND received_at >= $6) < $7
			RETURNING seq`
	qPendingTake = `WITH d AS (
			DELETE FROM pending_reports WHERE provider_message_id = ANY($1::text[])
			RETURNING seq, provider_message_id, status, provider_code, provider_text, received_at)
		SELECT seq, provider_message_id, status, provider_code, provider_text, received_at FROM d
		WHERE received_at >= $2 ORDER BY seq`
)

// pendingLockKey is the second advisory lock key of a provider message id.
func pendingLockKey(providerMessageID string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(providerMessageID))
	return int32(h.Sum32())
}

// PendingReportSave implements driver.Store. In one transaction it
// takes an advisory lock on the id (so the count and the insert of
// concurrent saves of one id do not interleave under READ COMMITTED),
// sweeps a batch of expired reports and inserts the report if the id has
// fewer than p.Limit unexpired ones.
func (s *Store) PendingReportSave(ctx context.Context, p *driver.PendingReportSaveParams) (bool, error) {
	ctx = writeCtx(ctx)
	r := p.Report
	var kept bool
	var seq int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		kept = false
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, int32(pendingLockClass), pendingLockKey(r.ProviderMessageID)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, qPendingSweep, ts(p.NotBefore), sweepBatch); err != nil {
			return err
		}
		// No row: the id has p.Limit reports already.
		var err error
		kept, err = sqlrows.Kept(tx.QueryRow(ctx, qPendingInsert, r.ProviderMessageID, r.Status, r.ProviderCode, r.ProviderText, ts(r.ReceivedAt),
			ts(p.NotBefore), p.Limit).Scan(&seq), pgx.ErrNoRows)
		return err
	})
	return sqlrows.PendingSaved(r, kept, seq, err)
}

// PendingReportTake implements driver.Store with one DELETE ...
// RETURNING: a report deleted by a concurrent take is not returned twice.
func (s *Store) PendingReportTake(ctx context.Context, p *driver.PendingReportTakeParams) ([]*driver.PendingReport, error) {
	ctx = writeCtx(ctx)
	out, err := queryAll(ctx, s.pool, scanPendingReport, qPendingTake, p.ProviderMessageIDs, ts(p.NotBefore))
	return out, interpretError(err)
}

// scanPendingReport scans a kept provider report.
func scanPendingReport(row pgx.Row) (*driver.PendingReport, error) {
	var r driver.PendingReport
	var received int64
	if err := row.Scan(&r.Seq, &r.ProviderMessageID, &r.Status, &r.ProviderCode, &r.ProviderText, &received); err != nil {
		return nil, err
	}
	r.ReceivedAt = fromTS(received)
	return &r, nil
}
