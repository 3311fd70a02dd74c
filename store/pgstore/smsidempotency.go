package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
)

// SMS idempotency records (table sms_idempotency). SMSAcceptIdempotent
// first claims the key with one INSERT ... ON CONFLICT: a new key is
// inserted (its results filled in at the end of the transaction), an
// expired record is taken over, and a live record is only locked. Either
// way the transaction holds the key's row from then on, so a concurrent
// request with the same key waits in its own INSERT until this transaction
// ends, and then finds the record committed with it (or, if it rolled back,
// claims the key itself). The key's row is the first lock a keyed accept
// takes, before the accounts (in partnerID order, as SMSAccept), so keyed
// and unkeyed accepts never wait for each other in a cycle.

const (
	qSMSIdemClaim = `INSERT INTO sms_idempotency (partner_id, idem_key, request_hash, answer, numbers, balances, refused, created_at, expires_at)
		VALUES ($1, $2, $3, $4, '{}', '{}', '{}', $5, $6)
		ON CONFLICT (partner_id, idem_key) DO UPDATE SET request_hash = EXCLUDED.request_hash, answer = EXCLUDED.answer,
			numbers = '{}', balances = '{}', refused = '{}', created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
		WHERE sms_idempotency.expires_at <= EXCLUDED.created_at
		RETURNING true`
	qSMSIdemGet = `SELECT partner_id, idem_key, request_hash, answer, numbers, balances, refused, created_at, expires_at
		FROM sms_idempotency WHERE partner_id = $1 AND idem_key = $2 AND expires_at > $3`
	qSMSIdemResults = `UPDATE sms_idempotency SET numbers = $3, balances = $4, refused = $5
		WHERE partner_id = $1 AND idem_key = $2`
	// qSMSIdemPurge deletes a few expired records, oldest first, through
	// the index on expires_at, skipping those another transaction holds
	// (it never waits).
	qSMSIdemPurge = `DELETE FROM sms_idempotency d USING (
			SELECT partner_id, idem_key FROM sms_idempotency WHERE expires_at <= $1
			ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) e
		WHERE d.partner_id = e.partner_id AND d.idem_key = e.idem_key`
)

// idemPurgeBatch is how many expired records a write of a record deletes
// at most: more than it adds, so expired records never pile up.
const idemPurgeBatch = 8

func scanIdem(row pgx.Row) (*sms.Idempotency, error) {
	var r sms.Idempotency
	var numbers, balances []int64
	var refused []bool
	var created, expires int64
	if err := row.Scan(&r.PartnerID, &r.Key, &r.RequestHash, &r.Answer, &numbers, &balances, &refused, &created, &expires); err != nil {
		return nil, err
	}
	if len(balances) != len(numbers) || len(refused) != len(numbers) {
		return nil, fmt.Errorf("idempotency key %q: %d numbers, %d balances, %d refusals", r.Key, len(numbers), len(balances), len(refused))
	}
	stored := make([]sqlrows.AcceptResult, len(numbers))
	for i := range numbers {
		stored[i] = sqlrows.AcceptResult{Number: numbers[i], Balance: balances[i], Refused: refused[i]}
	}
	r.Results = sqlrows.LoadResults(stored)
	r.CreatedAt, r.ExpiresAt = fromTS(created), fromTS(expires)
	return &r, nil
}

// SMSAcceptIdempotent implements sms.Store: the claim of the key, the
// debits and inserts of SMSAccept, the results of the record and the purge
// of a few expired records are one transaction.
func (s *Store) SMSAcceptIdempotent(ctx context.Context, p *sms.AcceptIdempotentParams) ([]sms.AcceptResult, *sms.Idempotency, error) {
	ctx = writeCtx(ctx)
	rec := p.Record
	var res []sms.AcceptResult
	var prev *sms.Idempotency
	err := s.tx(ctx, func(tx pgx.Tx) error {
		res, prev = nil, nil
		var claimed bool
		err := tx.QueryRow(ctx, qSMSIdemClaim, rec.PartnerID, rec.Key, nonNil(rec.RequestHash), nonNil(rec.Answer),
			ts(rec.CreatedAt), ts(rec.ExpiresAt)).Scan(&claimed)
		if errors.Is(err, pgx.ErrNoRows) {
			// A live record, now locked by this transaction.
			prev, err = scanIdem(tx.QueryRow(ctx, qSMSIdemGet, rec.PartnerID, rec.Key, ts(rec.CreatedAt)))
			return err
		}
		if err != nil {
			return err // a foreign key violation: no such account
		}
		out, err := acceptTx(ctx, tx, p.Messages)
		if err != nil {
			return err
		}
		stored, err := sqlrows.StoreResults(out)
		if err != nil {
			return err
		}
		numbers := make([]int64, len(out))
		balances := make([]int64, len(out))
		refused := make([]bool, len(out))
		for i, r := range stored {
			numbers[i], balances[i], refused[i] = r.Number, r.Balance, r.Refused
		}
		if _, err := tx.Exec(ctx, qSMSIdemResults, rec.PartnerID, rec.Key, numbers, balances, refused); err != nil {
			return err
		}
		res = out
		_, err = tx.Exec(ctx, qSMSIdemPurge, ts(rec.CreatedAt), idemPurgeBatch)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return res, prev, nil
}

// SMSIdempotencyGet implements sms.Store.
func (s *Store) SMSIdempotencyGet(ctx context.Context, p *sms.IdempotencyGetParams) (*sms.Idempotency, error) {
	r, err := scanIdem(s.pool.QueryRow(ctx, qSMSIdemGet, p.PartnerID, p.Key, ts(p.Now)))
	return r, interpretError(err)
}
