package pgstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
)

var _ sms.OutboxStore = (*Store)(nil)

// SMSOutbox returns s: the SMS records and the webhook outbox are in the
// same store, so a report's push is queued in its transaction (see
// sms.OutboxStore).
func (s *Store) SMSOutbox() driver.Store { return s }

// SMSAccountCreate implements sms.Store.
func (s *Store) SMSAccountCreate(ctx context.Context, a *sms.Account) error {
	ctx = writeCtx(ctx)
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO sms_accounts (partner_id, key_hash, credit, time_zone, cost_per_segment, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, a.PartnerID, nonNil(a.KeyHash), int64(a.Credit), a.TimeZone, int64(a.CostPerSegment),
			ts(a.CreatedAt), ts(a.UpdatedAt)); err != nil {
			return err
		}
		if a.Credit != 0 {
			if _, err := tx.Exec(ctx, qSMSLedger, a.PartnerID, sms.LedgerOpening, int64(a.Credit), int64(a.Credit), "", 0, ts(a.CreatedAt)); err != nil {
				return err
			}
		}
		return addSenders(ctx, tx, a.PartnerID, a.Senders, a.CreatedAt)
	})
}

func addSenders(ctx context.Context, q querier, partnerID string, senders []string, at time.Time) error {
	if len(senders) == 0 {
		return nil
	}
	_, err := q.Exec(ctx, `INSERT INTO sms_senders (partner_id, sender, approved_at)
		SELECT $1, sd, $3 FROM unnest($2::text[]) AS sd ON CONFLICT DO NOTHING`, partnerID, senders, ts(at))
	return err
}

func getAccount(ctx context.Context, q querier, partnerID string) (*sms.Account, error) {
	return scanAccount(q.QueryRow(ctx, `SELECT `+accountCols+` FROM sms_accounts a WHERE partner_id = $1`, partnerID))
}

// accountCols are the columns scanAccount reads, from sms_accounts a.
const accountCols = `partner_id, key_hash, credit, time_zone, cost_per_segment, created_at, updated_at, callback_endpoint_id,
	coalesce((SELECT array_agg(sender ORDER BY sender) FROM sms_senders WHERE partner_id = a.partner_id), '{}')`

// SMSAccountList implements sms.Store, through the primary key of
// sms_accounts. Partner ids compare byte-wise (COLLATE "C"), like the
// other stores.
func (s *Store) SMSAccountList(ctx context.Context, p *sms.AccountListParams) ([]*sms.Account, error) {
	out, err := queryAll(ctx, s.pool, scanAccount, `SELECT `+accountCols+`
		FROM sms_accounts a WHERE partner_id COLLATE "C" > $1 ORDER BY partner_id COLLATE "C" LIMIT $2`, p.After, p.Limit)
	return out, interpretError(err)
}

func scanAccount(row pgx.Row) (*sms.Account, error) {
	var a sms.Account
	var credit, cost, created, updated int64
	if err := row.Scan(&a.PartnerID, &a.KeyHash, &credit, &a.TimeZone, &cost, &created, &updated, &a.CallbackEndpointID, &a.Senders); err != nil {
		return nil, err
	}
	a.Credit, a.CostPerSegment = sms.Credit(credit), sms.Credit(cost)
	a.CreatedAt, a.UpdatedAt = fromTS(created), fromTS(updated)
	a.Senders = nonNil(a.Senders)
	return &a, nil
}

// SMSMessageList implements sms.Store. It walks the primary key (number)
// down and keeps the account's messages.
func (s *Store) SMSMessageList(ctx context.Context, p *sms.MessageListParams) ([]*sms.Message, error) {
	before := sqlrows.Before(p.Before)
	out, err := queryAll(ctx, s.pool, scanSMS, `SELECT `+smsCols+` FROM sms_messages
		WHERE partner_id = $1 AND number < $2 ORDER BY number DESC LIMIT $3`, p.PartnerID, before, p.Limit)
	return out, interpretError(err)
}

// SMSAccountGet implements sms.Store. Senders are sorted.
func (s *Store) SMSAccountGet(ctx context.Context, partnerID string) (*sms.Account, error) {
	a, err := getAccount(ctx, s.pool, partnerID)
	if err != nil {
		return nil, interpretError(err)
	}
	return a, nil
}

// SMSAccountKey implements sms.Store: one statement on the primary key.
func (s *Store) SMSAccountKey(ctx context.Context, partnerID string) ([]byte, error) {
	var h []byte
	if err := s.pool.QueryRow(ctx, `SELECT key_hash FROM sms_accounts WHERE partner_id = $1`, partnerID).Scan(&h); err != nil {
		return nil, interpretError(err)
	}
	return h, nil
}

// SMSAccountUpdate implements sms.Store.
func (s *Store) SMSAccountUpdate(ctx context.Context, p *sms.AccountUpdate) (*sms.Account, error) {
	ctx = writeCtx(ctx)
	var a *sms.Account
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE sms_accounts SET
			time_zone = coalesce($1, time_zone), cost_per_segment = coalesce($2, cost_per_segment), updated_at = $3,
			callback_endpoint_id = coalesce($5, callback_endpoint_id)
			WHERE partner_id = $4`, p.TimeZone, nullCredit(p.CostPerSegment), ts(p.At), p.PartnerID, p.CallbackEndpointID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return messaging.ErrNotFound
		}
		if err := addSenders(ctx, tx, p.PartnerID, p.AddSenders, p.At); err != nil {
			return err
		}
		a, err = getAccount(ctx, tx, p.PartnerID)
		return err
	})
	return a, err
}

func nullCredit(c *sms.Credit) *int64 {
	if c == nil {
		return nil
	}
	v := int64(*c)
	return &v
}

// qSMSLedger records a ledger entry: partner, kind, amount, balance,
// reference, message number, time.
const qSMSLedger = `INSERT INTO sms_ledger (partner_id, kind, amount, balance, reference, message_number, at)
	VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq`

// SMSCreditAdd implements sms.Store. The account's row is locked first,
// so that concurrent top-ups of one reference wait for each other and the
// later one finds the earlier's entry.
func (s *Store) SMSCreditAdd(ctx context.Context, p *sms.CreditAddParams) (e, prev *sms.LedgerEntry, err error) {
	ctx = writeCtx(ctx)
	err = s.tx(ctx, func(tx pgx.Tx) error {
		e, prev = nil, nil
		var credit int64
		if err := tx.QueryRow(ctx, `SELECT credit FROM sms_accounts WHERE partner_id = $1 FOR UPDATE`, p.PartnerID).Scan(&credit); err != nil {
			return err
		}
		if p.Reference != "" {
			old, err := scanLedger(tx.QueryRow(ctx, `SELECT `+ledgerCols+` FROM sms_ledger WHERE partner_id = $1 AND reference = $2`, p.PartnerID, p.Reference))
			if err == nil {
				prev = old
				return nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		if credit > int64(p.Max-p.Amount) {
			return sms.ErrCreditOverflow
		}
		if err := tx.QueryRow(ctx, `UPDATE sms_accounts SET credit = credit + $1, updated_at = $2 WHERE partner_id = $3 RETURNING credit`,
			int64(p.Amount), ts(p.At), p.PartnerID).Scan(&credit); err != nil {
			return err
		}
		e = &sms.LedgerEntry{PartnerID: p.PartnerID, Kind: sms.LedgerTopUp, Amount: p.Amount, Balance: sms.Credit(credit), Reference: p.Reference, At: p.At}
		return tx.QueryRow(ctx, qSMSLedger, p.PartnerID, sms.LedgerTopUp, int64(p.Amount), credit, p.Reference, 0, ts(p.At)).Scan(&e.Seq)
	})
	if err != nil {
		return nil, nil, interpretError(err)
	}
	return e, prev, nil
}

// SMSLedger implements sms.Store, through the index sms_ledger_account.
func (s *Store) SMSLedger(ctx context.Context, p *sms.LedgerParams) ([]*sms.LedgerEntry, error) {
	before := sqlrows.Before(p.Before)
	out, err := queryAll(ctx, s.pool, scanLedger, `SELECT `+ledgerCols+` FROM sms_ledger
		WHERE partner_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, p.PartnerID, before, p.Limit)
	return out, interpretError(err)
}

const ledgerCols = `seq, partner_id, kind, amount, balance, reference, message_number, at`

func scanLedger(row pgx.Row) (*sms.LedgerEntry, error) {
	var e sms.LedgerEntry
	var amount, balance, at int64
	if err := row.Scan(&e.Seq, &e.PartnerID, &e.Kind, &amount, &balance, &e.Reference, &e.MessageNumber, &at); err != nil {
		return nil, err
	}
	e.Amount, e.Balance, e.At = sms.Credit(amount), sms.Credit(balance), fromTS(at)
	return &e, nil
}

const smsCols = `number, id, partner_id, mobile, text, sender, client_sms_id, encoding, segments, cost, status, due_at,
	attempts, claim_token, gateway_message_id, network_id, failure_reason,
	dlr_status, dlr_description, dlr_network_id, dlr_time, sent_at, created_at, updated_at, unconfirmed_since`

func scanSMS(row pgx.Row) (*sms.Message, error) { return scanSMSWith(row) }

// scanClaimedSMS scans a message SMSClaimDue returns: smsCols and the mark
// before the claim, which replaces the stored one.
func scanClaimedSMS(row pgx.Row) (*sms.Message, error) {
	var prev *int64
	m, err := scanSMSWith(row, &prev)
	if err != nil {
		return nil, err
	}
	m.UnconfirmedSince = fromTSPtr(prev)
	return m, nil
}

// scanSMSWith scans smsCols and then extra.
func scanSMSWith(row pgx.Row, extra ...any) (*sms.Message, error) {
	var m sms.Message
	var cost, due, created, updated int64
	var dlrStatus *int32
	var dlrDesc, dlrNet *string
	var dlrTime, sent, unconfirmed *int64
	dest := []any{&m.Number, &m.ID, &m.PartnerID, &m.Mobile, &m.Text, &m.Sender, &m.ClientSMSID, &m.Encoding, &m.Segments,
		&cost, &m.Status, &due, &m.Attempts, &m.ClaimToken, &m.GatewayMessageID, &m.NetworkID, &m.FailureReason,
		&dlrStatus, &dlrDesc, &dlrNet, &dlrTime, &sent, &created, &updated, &unconfirmed}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	m.Cost = sms.Credit(cost)
	m.DueAt, m.CreatedAt, m.UpdatedAt, m.SentAt = fromTS(due), fromTS(created), fromTS(updated), fromTSPtr(sent)
	m.UnconfirmedSince = fromTSPtr(unconfirmed)
	if dlrDesc != nil {
		r := &sms.Report{Description: *dlrDesc}
		if dlrStatus != nil {
			r.Status = int(*dlrStatus)
		}
		if dlrNet != nil {
			r.NetworkID = *dlrNet
		}
		if t := fromTSPtr(dlrTime); t != nil {
			r.Time = *t
		}
		m.Report = r
	}
	return &m, nil
}

// SMSAccept implements sms.Store. Each message is one statement that debits
// its cost from the account if the credit covers it (UPDATE ... SET credit =
// credit - cost WHERE credit >= cost, which PostgreSQL re-checks on the
// newest version of the row when a concurrent debit got there first) and
// inserts the message only if the debit happened. The statements of a call
// are one transaction. A call that debits several accounts first locks them
// in partnerID order, so that two calls debiting the same accounts in
// different orders wait for each other instead of deadlocking.
func (s *Store) SMSAccept(ctx context.Context, msgs []*sms.Message) ([]sms.AcceptResult, error) {
	ctx = writeCtx(ctx)
	var out []sms.AcceptResult
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = acceptTx(ctx, tx, msgs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// acceptTx debits and inserts msgs in tx (see SMSAccept).
func acceptTx(ctx context.Context, tx pgx.Tx, msgs []*sms.Message) ([]sms.AcceptResult, error) {
	out := make([]sms.AcceptResult, len(msgs))
	var partners []string
	for _, m := range msgs {
		if !slices.Contains(partners, m.PartnerID) {
			partners = append(partners, m.PartnerID)
		}
	}
	if len(partners) > 1 {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM sms_accounts WHERE partner_id = ANY($1) ORDER BY partner_id FOR UPDATE`, partners); err != nil {
			return nil, err
		}
	}
	for i, m := range msgs {
		var credit, number *int64
		err := tx.QueryRow(ctx, `WITH d AS (
				UPDATE sms_accounts SET credit = credit - $3, updated_at = $14
				WHERE partner_id = $2 AND credit >= $3
				RETURNING credit),
			i AS (
				INSERT INTO sms_messages (id, partner_id, mobile, text, sender, client_sms_id,
					encoding, segments, cost, status, due_at, attempts, claim_token, gateway_message_id, network_id, failure_reason,
					created_at, updated_at)
				SELECT $1, $2, $4, $5, $6, $7, $8, $9, $3, $10, $11, 0, '', '', $12, '', $13, $14 FROM d
				RETURNING number),
			l AS (
				INSERT INTO sms_ledger (partner_id, kind, amount, balance, reference, message_number, at)
				SELECT $2, 'charge', -($3::bigint), d.credit, '', i.number, $13 FROM d, i)
			SELECT (SELECT credit FROM d), (SELECT number FROM i)`,
			m.ID, m.PartnerID, int64(m.Cost), m.Mobile, m.Text, m.Sender, m.ClientSMSID,
			m.Encoding, m.Segments, m.Status, ts(m.DueAt), m.NetworkID, ts(m.CreatedAt), ts(m.UpdatedAt)).Scan(&credit, &number)
		if err != nil {
			return nil, err
		}
		if number != nil {
			out[i] = sms.AcceptResult{Number: *number, Balance: sms.Credit(*credit)}
			continue
		}
		// Not debited: the credit is short, or there is no such account.
		// This statement sees the latest committed balance.
		var bal int64
		if err := tx.QueryRow(ctx, `SELECT credit FROM sms_accounts WHERE partner_id = $1`, m.PartnerID).Scan(&bal); err != nil {
			return nil, err // no rows: no such account, nothing is stored
		}
		out[i] = sms.AcceptResult{Balance: sms.Credit(bal), Err: sms.ErrInsufficientCredit}
	}
	return out, nil
}

// SMSMessageGet implements sms.Store.
func (s *Store) SMSMessageGet(ctx context.Context, partnerID string, number int64) (*sms.Message, error) {
	m, err := scanSMS(s.pool.QueryRow(ctx, `SELECT `+smsCols+` FROM sms_messages WHERE number = $1 AND partner_id = $2`, number, partnerID))
	return m, interpretError(err)
}

// qSMSClaim claims due SMS: the oldest due rows of the partial index
// sms_messages_due, skipping rows another claimer has locked, leased in the
// same statement.
const qSMSClaim = `WITH c AS (
			SELECT number AS claim_number, unconfirmed_since AS prev_unconfirmed FROM sms_messages
			WHERE status IN ('scheduled', 'queued', 'sending') AND due_at <= $1
			ORDER BY due_at, number
			LIMIT $2
			FOR UPDATE SKIP LOCKED)
		UPDATE sms_messages SET status = 'sending', due_at = $3, claim_token = $4, attempts = attempts + 1, updated_at = $1,
			unconfirmed_since = CASE WHEN unconfirmed_since IS NULL OR unconfirmed_since <= $5 THEN $1 ELSE unconfirmed_since END
		FROM c WHERE number = c.claim_number
		RETURNING ` + smsCols + `, c.prev_unconfirmed`

// SMSClaimDue implements sms.Store: one statement that picks the oldest due
// messages through the partial index sms_messages_due with FOR UPDATE SKIP
// LOCKED and leases them, so concurrent schedulers in any number of
// processes never get the same message.
func (s *Store) SMSClaimDue(ctx context.Context, p *sms.ClaimParams) ([]*sms.Message, error) {
	ctx = writeCtx(ctx)
	out, err := queryAll(ctx, s.pool, scanClaimedSMS, qSMSClaim, ts(p.Now), p.Limit, ts(p.LeaseUntil), p.Token, ts(p.RenewMarksBefore))
	if err != nil {
		return nil, interpretError(err)
	}
	slices.SortFunc(out, func(a, b *sms.Message) int { return cmp.Compare(a.Number, b.Number) })
	return out, nil
}

// SMSComplete implements sms.Store. A failure refunds the message's cost in
// the same statement that records it.
func (s *Store) SMSComplete(ctx context.Context, cs []*sms.Completion) ([]error, error) {
	ctx = writeCtx(ctx)
	var errs []error
	err := s.tx(ctx, func(tx pgx.Tx) error {
		errs = make([]error, len(cs))
		for i, c := range cs {
			var n int
			var err error
			switch c.Status {
			case sms.StatusSent:
				err = tx.QueryRow(ctx, `WITH u AS (
						UPDATE sms_messages SET status = 'sent', gateway_message_id = $1, network_id = $2,
							failure_reason = '', claim_token = '', sent_at = $3, updated_at = $3, unconfirmed_since = NULL
						WHERE number = $4 AND status = 'sending' AND claim_token = $5 RETURNING 1)
					SELECT count(*) FROM u`,
					c.GatewayMessageID, c.NetworkID, ts(c.At), c.Number, c.Token).Scan(&n)
			case sms.StatusQueued:
				err = tx.QueryRow(ctx, `WITH u AS (
						UPDATE sms_messages SET status = 'queued', due_at = $1, failure_reason = $2, claim_token = '', updated_at = $3,
							unconfirmed_since = CASE WHEN $6 THEN unconfirmed_since END,
							attempts = CASE WHEN $7 AND attempts > 0 THEN attempts - 1 ELSE attempts END
						WHERE number = $4 AND status = 'sending' AND claim_token = $5 RETURNING 1)
					SELECT count(*) FROM u`,
					ts(c.RetryAt), c.FailureReason, ts(c.At), c.Number, c.Token, c.Unconfirmed, c.Untried).Scan(&n)
			default:
				err = tx.QueryRow(ctx, `WITH u AS (
						UPDATE sms_messages SET status = 'failed', failure_reason = $1, claim_token = '', updated_at = $2,
							unconfirmed_since = NULL
						WHERE number = $3 AND status = 'sending' AND claim_token = $4
						RETURNING partner_id, cost),
					r AS (
						UPDATE sms_accounts a SET credit = a.credit + u.cost, updated_at = $2
						FROM u WHERE a.partner_id = u.partner_id
						RETURNING a.partner_id, a.credit, u.cost),
					l AS (
						INSERT INTO sms_ledger (partner_id, kind, amount, balance, reference, message_number, at)
						SELECT r.partner_id, 'refund', r.cost, r.credit, '', $3, $2 FROM r)
					SELECT count(*) FROM u`,
					c.FailureReason, ts(c.At), c.Number, c.Token).Scan(&n)
			}
			if err != nil {
				return err
			}
			if n == 0 {
				errs[i] = driver.ErrStale
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// SMSConfirm implements sms.Store: one conditional update, then a read of
// the message when it changed nothing.
func (s *Store) SMSConfirm(ctx context.Context, p *sms.ConfirmParams) (*sms.Message, bool, error) {
	ctx = writeCtx(ctx)
	m, err := scanSMS(s.pool.QueryRow(ctx, `UPDATE sms_messages SET status = 'sent', gateway_message_id = $2,
			network_id = CASE WHEN $3 = '' THEN network_id ELSE $3 END,
			failure_reason = '', claim_token = '', sent_at = $4, updated_at = $4, unconfirmed_since = NULL
		WHERE number = $1 AND unconfirmed_since IS NOT NULL AND status IN ('queued', 'sending')
		RETURNING `+smsCols, p.Number, p.GatewayMessageID, p.NetworkID, ts(p.At)))
	if err == nil {
		return m, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, interpretError(err)
	}
	m, err = scanSMS(s.pool.QueryRow(ctx, `SELECT `+smsCols+` FROM sms_messages WHERE number = $1`, p.Number))
	if err != nil {
		return nil, false, interpretError(err)
	}
	return m, false, nil
}

// SMSMessageByGatewayID implements sms.Store, through the index
// sms_messages_gateway_id.
func (s *Store) SMSMessageByGatewayID(ctx context.Context, gatewayMessageID string) (*sms.Message, error) {
	if gatewayMessageID == "" {
		return nil, messaging.ErrNotFound
	}
	m, err := scanSMS(s.pool.QueryRow(ctx, `SELECT `+smsCols+` FROM sms_messages
		WHERE gateway_message_id = $1 AND gateway_message_id <> '' ORDER BY number DESC LIMIT 1`, gatewayMessageID))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// SMSReportSave implements sms.Store. The update leaves a row whose stored
// report is final alone (in the same statement, under the row's lock); a
// row it did not change is told from a missing one by reading it. Only a
// save with a push is a transaction (the event is queued with the
// report); without one, the update and the read are two autocommit
// statements, which spares a delivery report BEGIN's and COMMIT's round
// trips.
func (s *Store) SMSReportSave(ctx context.Context, p *sms.ReportSaveParams) (pushed bool, err error) {
	ctx = writeCtx(ctx)
	r := p.Report
	var t *int64
	if !r.Time.IsZero() {
		v := ts(r.Time)
		t = &v
	}
	save := func(q querier) error {
		pushed = false // a retried transaction starts over
		tag, err := q.Exec(ctx, `UPDATE sms_messages SET dlr_status = $1, dlr_description = $2, dlr_network_id = $3, dlr_time = $4
			WHERE number = $5 AND partner_id = $6 AND (dlr_description IS NULL OR dlr_description <> ALL($7))`,
			r.Status, r.Description, r.NetworkID, t, p.Number, p.PartnerID, sms.FinalDeliveryStates())
		if err != nil {
			return err
		}
		if tag.RowsAffected() > 0 {
			if p.Push != nil {
				pushed, err = queueEndpointEvent(ctx, q, p.Push)
			}
			return err
		}
		var one int
		return q.QueryRow(ctx, `SELECT 1 FROM sms_messages WHERE number = $1 AND partner_id = $2`, p.Number, p.PartnerID).Scan(&one)
	}
	if p.Push == nil {
		err = interpretError(save(s.pool))
	} else {
		err = s.tx(ctx, func(tx pgx.Tx) error { return save(tx) })
	}
	if err != nil {
		return false, err
	}
	return pushed, nil
}
