package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
)

// sweepBatch bounds the expired reports one PendingReportSave deletes.
const sweepBatch = 100

// Statements of the pending provider reports (see
// migrations/0005_pending_reports.sql).
const (
	qPendingSweep = `DELETE FROM pending_reports WHERE seq IN (
			SELECT seq FROM pending_reports WHERE received_at < ? ORDER BY received_at LIMIT ?)`
	qPendingInsert = `INSERT INTO pending_reports (provider_message_id, status, provider_code, provider_text, received_at)
			SELECT ?, ?, ?, ?, ?
			WHERE (SELECT count(*) FROM pending_reports WHERE provider_message_id = ? AND received_at >= ?) < ?
			RETURNING seq`
	qPendingTake = `DELETE FROM pending_reports WHERE provider_message_id = ?
			RETURNING seq, provider_message_id, status, provider_code, provider_text, received_at`
	qPendingAny = `SELECT 1 FROM pending_reports WHERE provider_message_id = ? LIMIT 1`
)

// PendingReportSave implements driver.Store. The sweep, the count of
// the id's unexpired reports and the insert run in one write transaction;
// the writer is serialized, so the count cannot be overtaken.
func (s *Store) PendingReportSave(ctx context.Context, p *driver.PendingReportSaveParams) (bool, error) {
	r := p.Report
	var kept bool
	var seq int64
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		kept = false
		if _, err := s.execTx(ctx, tx, qPendingSweep, fmtTime(p.NotBefore), sweepBatch); err != nil {
			return err
		}
		// No row: the id has p.Limit reports already.
		var err error
		kept, err = sqlrows.Kept(s.rowTx(ctx, tx, qPendingInsert, r.ProviderMessageID, r.Status, r.ProviderCode, r.ProviderText, fmtTime(r.ReceivedAt),
			r.ProviderMessageID, fmtTime(p.NotBefore), p.Limit).Scan(&seq), sql.ErrNoRows)
		return err
	})
	return sqlrows.PendingSaved(r, kept, seq, err)
}

// PendingReportTake implements driver.Store. It first looks for a report
// of each id on a reader connection, and only for the ids that have one
// deletes them through the writer: most ids recorded by the dispatcher have none,
// and a report saved after that read is the saver's to take (see
// messaging.Service.ApplyProviderStatus).
func (s *Store) PendingReportTake(ctx context.Context, p *driver.PendingReportTakeParams) ([]*driver.PendingReport, error) {
	var ids []string
	for _, id := range p.ProviderMessageIDs {
		var one int
		err := s.queryRow(ctx, qPendingAny, id).Scan(&one)
		switch {
		case err == nil:
			ids = append(ids, id)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, interpretError(err)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var taken []*driver.PendingReport
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		taken = nil
		for _, id := range ids {
			rows, err := s.queryTx(ctx, tx, qPendingTake, id)
			some, err := collect(rows, err, scanPendingReport)
			if err != nil {
				return err
			}
			taken = append(taken, some...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*driver.PendingReport
	for _, r := range taken {
		if !r.ReceivedAt.Before(p.NotBefore) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *driver.PendingReport) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// scanPendingReport scans a kept provider report.
func scanPendingReport(sc scanner) (*driver.PendingReport, error) {
	var r driver.PendingReport
	if err := sc.Scan(&r.Seq, &r.ProviderMessageID, &r.Status, &r.ProviderCode, &r.ProviderText, storedTime{&r.ReceivedAt}); err != nil {
		return nil, err
	}
	return &r, nil
}
