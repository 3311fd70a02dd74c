package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
)

// SMS idempotency records (table sms_idempotency). A record is written by
// the writer in the transaction that debits and stores its request's
// messages; the writer runs one request at a time, so the check for a live
// record and the write that follows cannot interleave with another
// request's.

const (
	qSMSIdemGet = `SELECT partner_id, idem_key, request_hash, answer, results, created_at, expires_at
		FROM sms_idempotency WHERE partner_id = ? AND idem_key = ? AND expires_at > ?`
	// qSMSIdemPut inserts a record, replacing an expired one of the same
	// key (the caller checked that none is live).
	qSMSIdemPut = `INSERT INTO sms_idempotency (partner_id, idem_key, request_hash, answer, results, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (partner_id, idem_key) DO UPDATE SET request_hash = excluded.request_hash, answer = excluded.answer,
			results = excluded.results, created_at = excluded.created_at, expires_at = excluded.expires_at`
	// qSMSIdemPurge deletes a few expired records, oldest first, through
	// the index on expires_at.
	qSMSIdemPurge = `DELETE FROM sms_idempotency WHERE rowid IN (
		SELECT rowid FROM sms_idempotency WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`
)

// idemPurgeBatch is how many expired records a write of a record deletes
// at most: more than it adds, so expired records never pile up.
const idemPurgeBatch = 8

// encodeResults returns the stored form of res: the JSON array of their
// sqlrows.AcceptResult forms.
func encodeResults(res []sms.AcceptResult) (string, error) {
	out, err := sqlrows.StoreResults(res)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func scanIdem(sc scanner) (*sms.Idempotency, error) {
	var r sms.Idempotency
	var results string
	if err := sc.Scan(&r.PartnerID, &r.Key, &r.RequestHash, &r.Answer, &results, storedTime{&r.CreatedAt}, storedTime{&r.ExpiresAt}); err != nil {
		return nil, err
	}
	var stored []sqlrows.AcceptResult
	if err := json.Unmarshal([]byte(results), &stored); err != nil {
		return nil, fmt.Errorf("bad stored results of idempotency key %q: %w", r.Key, err)
	}
	r.Results = sqlrows.LoadResults(stored)
	return &r, nil
}

// SMSAcceptIdempotent implements sms.Store: the look-up of the key, the
// debits and inserts of SMSAccept, the record and the purge of a few
// expired records are one request of the writer, in one transaction.
func (s *Store) SMSAcceptIdempotent(ctx context.Context, p *sms.AcceptIdempotentParams) ([]sms.AcceptResult, *sms.Idempotency, error) {
	rec := p.Record
	var res []sms.AcceptResult
	var prev *sms.Idempotency
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, prev = nil, nil
		live, err := scanIdem(s.rowTx(ctx, tx, qSMSIdemGet, rec.PartnerID, rec.Key, fmtTime(rec.CreatedAt)))
		if err == nil {
			prev = live
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out, err := s.acceptTx(ctx, tx, p.Messages)
		if err != nil {
			return err
		}
		results, err := encodeResults(out)
		if err != nil {
			return err
		}
		if _, err := s.execTx(ctx, tx, qSMSIdemPut, rec.PartnerID, rec.Key, rec.RequestHash, rec.Answer, results,
			fmtTime(rec.CreatedAt), fmtTime(rec.ExpiresAt)); err != nil {
			return err
		}
		if _, err := s.execTx(ctx, tx, qSMSIdemPurge, fmtTime(rec.CreatedAt), idemPurgeBatch); err != nil {
			return err
		}
		res = out
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return res, prev, nil
}

// SMSIdempotencyGet implements sms.Store.
func (s *Store) SMSIdempotencyGet(ctx context.Context, p *sms.IdempotencyGetParams) (*sms.Idempotency, error) {
	r, err := scanIdem(s.queryRow(ctx, qSMSIdemGet, p.PartnerID, p.Key, fmtTime(p.Now)))
	if err != nil {
		return nil, interpretError(err)
	}
	return r, nil
}
