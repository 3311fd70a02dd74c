package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/store/driver"

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
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sms_accounts (partner_id, key_hash, credit, time_zone, cost_per_segment, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, a.PartnerID, a.KeyHash, int64(a.Credit), a.TimeZone, int64(a.CostPerSegment),
			fmtTime(a.CreatedAt), fmtTime(a.UpdatedAt)); err != nil {
			return err
		}
		if a.Credit != 0 {
			if _, err := s.execTx(ctx, tx, qSMSLedger, a.PartnerID, sms.LedgerOpening, int64(a.Credit), int64(a.Credit), "", 0, fmtTime(a.CreatedAt)); err != nil {
				return err
			}
		}
		return addSenders(ctx, tx, a.PartnerID, a.Senders, a.CreatedAt)
	})
}

func addSenders(ctx context.Context, tx *sql.Tx, partnerID string, senders []string, at time.Time) error {
	for _, sd := range senders {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sms_senders (partner_id, sender, approved_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, partnerID, sd, fmtTime(at)); err != nil {
			return err
		}
	}
	return nil
}

func getAccount(ctx context.Context, q queryer, partnerID string) (*sms.Account, error) {
	var a sms.Account
	var credit, cost int64
	if err := q.QueryRowContext(ctx, `SELECT partner_id, key_hash, credit, time_zone, cost_per_segment, created_at, updated_at, callback_endpoint_id
		FROM sms_accounts WHERE partner_id = ?`, partnerID).
		Scan(&a.PartnerID, &a.KeyHash, &credit, &a.TimeZone, &cost, storedTime{&a.CreatedAt}, storedTime{&a.UpdatedAt}, &a.CallbackEndpointID); err != nil {
		return nil, err
	}
	a.Credit, a.CostPerSegment = sms.Credit(credit), sms.Credit(cost)
	rows, err := q.QueryContext(ctx, `SELECT sender FROM sms_senders WHERE partner_id = ? ORDER BY sender`, partnerID)
	if a.Senders, err = collect(rows, err, scanString); err != nil {
		return nil, err
	}
	if a.Senders == nil {
		a.Senders = []string{}
	}
	return &a, nil
}

// SMSAccountGet implements sms.Store. Senders are sorted.
func (s *Store) SMSAccountGet(ctx context.Context, partnerID string) (*sms.Account, error) {
	var a *sms.Account
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = getAccount(ctx, tx, partnerID)
		return err
	})
	return a, err
}

// SMSAccountList implements sms.Store, through the primary key of
// sms_accounts.
func (s *Store) SMSAccountList(ctx context.Context, p *sms.AccountListParams) ([]*sms.Account, error) {
	var out []*sms.Account
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT partner_id FROM sms_accounts WHERE partner_id > ? ORDER BY partner_id LIMIT ?`, p.After, p.Limit)
		ids, err := collect(rows, err, scanString)
		if err != nil {
			return err
		}
		for _, id := range ids {
			a, err := getAccount(ctx, tx, id)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

const qSMSAccountKey = `SELECT key_hash FROM sms_accounts WHERE partner_id = ?`

// SMSAccountKey implements sms.Store: one statement on the primary key.
func (s *Store) SMSAccountKey(ctx context.Context, partnerID string) ([]byte, error) {
	var h []byte
	if err := s.queryRow(ctx, qSMSAccountKey, partnerID).Scan(&h); err != nil {
		return nil, interpretError(err)
	}
	return h, nil
}

// SMSAccountUpdate implements sms.Store.
func (s *Store) SMSAccountUpdate(ctx context.Context, p *sms.AccountUpdate) (*sms.Account, error) {
	var a *sms.Account
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := oneRow(tx.ExecContext(ctx, `UPDATE sms_accounts SET
			time_zone = coalesce(?, time_zone), cost_per_segment = coalesce(?, cost_per_segment),
			callback_endpoint_id = coalesce(?, callback_endpoint_id), updated_at = ?
			WHERE partner_id = ?`, nullString(p.TimeZone), nullCredit(p.CostPerSegment), nullString(p.CallbackEndpointID), fmtTime(p.At), p.PartnerID)); err != nil {
			return err
		}
		if err := addSenders(ctx, tx, p.PartnerID, p.AddSenders, p.At); err != nil {
			return err
		}
		var err error
		a, err = getAccount(ctx, tx, p.PartnerID)
		return err
	})
	return a, err
}

func nullString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func nullCredit(c *sms.Credit) any {
	if c == nil {
		return nil
	}
	return int64(*c)
}

// SMSCreditAdd implements sms.Store: in one write transaction, a look-up
// of the reference (through the unique index sms_ledger_reference), a
// conditional UPDATE that keeps the credit at or below p.Max, and the
// ledger entry.
func (s *Store) SMSCreditAdd(ctx context.Context, p *sms.CreditAddParams) (e, prev *sms.LedgerEntry, err error) {
	err = s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		e, prev = nil, nil
		if p.Reference != "" {
			old, err := scanLedger(tx.QueryRowContext(ctx, `SELECT `+ledgerCols+` FROM sms_ledger WHERE partner_id = ? AND reference = ?`, p.PartnerID, p.Reference))
			if err == nil {
				prev = old
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		var credit int64
		err := tx.QueryRowContext(ctx, `UPDATE sms_accounts SET credit = credit + ?, updated_at = ? WHERE partner_id = ? RETURNING credit`,
			int64(p.Amount), fmtTime(p.At), p.PartnerID).Scan(&credit)
		if err != nil {
			return interpretError(err)
		}
		if credit > int64(p.Max) {
			return sms.ErrCreditOverflow // the transaction rolls back
		}
		res, err := s.execTx(ctx, tx, qSMSLedger, p.PartnerID, sms.LedgerTopUp, int64(p.Amount), credit, p.Reference, 0, fmtTime(p.At))
		if err != nil {
			return err
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return err
		}
		e = &sms.LedgerEntry{Seq: seq, PartnerID: p.PartnerID, Kind: sms.LedgerTopUp, Amount: p.Amount, Balance: sms.Credit(credit),
			Reference: p.Reference, At: p.At}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return e, prev, nil
}

const ledgerCols = `seq, partner_id, kind, amount, balance, reference, message_number, at`

func scanLedger(sc scanner) (*sms.LedgerEntry, error) {
	var e sms.LedgerEntry
	var amount, balance int64
	if err := sc.Scan(&e.Seq, &e.PartnerID, &e.Kind, &amount, &balance, &e.Reference, &e.MessageNumber, storedTime{&e.At}); err != nil {
		return nil, err
	}
	e.Amount, e.Balance = sms.Credit(amount), sms.Credit(balance)
	return &e, nil
}

// SMSLedger implements sms.Store, through the index sms_ledger_account.
func (s *Store) SMSLedger(ctx context.Context, p *sms.LedgerParams) ([]*sms.LedgerEntry, error) {
	before := p.Before
	if before == 0 {
		before = math.MaxInt64
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+ledgerCols+` FROM sms_ledger WHERE partner_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
		p.PartnerID, before, p.Limit)
	return collect(rows, err, scanLedger)
}

const smsCols = `number, id, partner_id, mobile, text, sender, client_sms_id, encoding, segments, cost, status, due_at,
	attempts, claim_token, gateway_message_id, network_id, failure_reason,
	dlr_status, dlr_description, dlr_network_id, dlr_time, sent_at, created_at, updated_at, unconfirmed_since`

func scanSMS(sc scanner) (*sms.Message, error) {
	var m sms.Message
	var cost int64
	var dlrStatus sql.NullInt64
	var dlrDesc, dlrNet sql.NullString
	var dlrTime *time.Time
	if err := sc.Scan(&m.Number, &m.ID, &m.PartnerID, &m.Mobile, &m.Text, &m.Sender, &m.ClientSMSID, &m.Encoding, &m.Segments,
		&cost, &m.Status, storedTime{&m.DueAt}, &m.Attempts, &m.ClaimToken, &m.GatewayMessageID, &m.NetworkID, &m.FailureReason,
		&dlrStatus, &dlrDesc, &dlrNet, storedTimePtr{&dlrTime}, storedTimePtr{&m.SentAt}, storedTime{&m.CreatedAt}, storedTime{&m.UpdatedAt},
		storedTimePtr{&m.UnconfirmedSince}); err != nil {
		return nil, err
	}
	m.Cost = sms.Credit(cost)
	if dlrDesc.Valid {
		m.Report = &sms.Report{Status: int(dlrStatus.Int64), Description: dlrDesc.String, NetworkID: dlrNet.String}
		if dlrTime != nil {
			m.Report.Time = *dlrTime
		}
	}
	return &m, nil
}

// Hot statements of SMSAccept (see hotWrites).
const (
	qSMSDebit = `UPDATE sms_accounts SET credit = credit - ?, updated_at = ?
			WHERE partner_id = ? AND credit >= ? RETURNING credit`
	// qSMSLedger records a ledger entry: partner, kind, amount, balance,
	// reference, message number, time.
	qSMSLedger = `INSERT INTO sms_ledger (partner_id, kind, amount, balance, reference, message_number, at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// The accepted messages of an SMSAccept and their charges are written with
// multi-row INSERTs, a few per table (see chunks): SQLite then runs one
// statement for many rows, with one statement journal, one load and one
// save of the table's AUTOINCREMENT counter and one cgo round trip, where a
// statement per row repeated all of them.

// smsInsertCols and smsInsertRow are a message insert's columns and one
// row of its values: id, partner, mobile, text, sender, client sms id,
// encoding, segments, cost, status, due at, network id, created at,
// updated at.
const (
	smsInsertCols = `INSERT INTO sms_messages (id, partner_id, mobile, text, sender, client_sms_id,
			encoding, segments, cost, status, due_at, attempts, claim_token, gateway_message_id, network_id, failure_reason,
			created_at, updated_at) VALUES `
	smsInsertRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', '', ?, '', ?, ?)`
	// smsChargeCols and smsChargeRow insert charges: partner, amount,
	// balance, message number, time.
	smsChargeCols = `INSERT INTO sms_ledger (partner_id, kind, amount, balance, reference, message_number, at) VALUES `
	smsChargeRow  = `(?, 'charge', ?, ?, '', ?, ?)`
)

// maxRowsLog2 bounds the rows of one multi-row INSERT: 1<<maxRowsLog2
// (16). The statements of 1, 2, 4, 8 and 16 rows are prepared at Open, so
// a bulk of sms.MaxBulk (20) messages is two statements per table.
const maxRowsLog2 = 4

// multiRow returns the INSERT head followed by n copies of row.
func multiRow(head, row string, n int) string {
	return head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// qSMSInsertRows[k] inserts 1<<k messages; qSMSChargeRows[k] inserts 1<<k
// charges.
var qSMSInsertRows, qSMSChargeRows = func() (ins, chg []string) {
	for k := range maxRowsLog2 + 1 {
		ins = append(ins, multiRow(smsInsertCols, smsInsertRow, 1<<k))
		chg = append(chg, multiRow(smsChargeCols, smsChargeRow, 1<<k))
	}
	return ins, chg
}()

// chunks splits n rows into statements of prepared sizes: the powers of two
// of n's binary form, largest first, after as many of the largest size as
// fit. It returns the log2 of each statement's rows.
func chunks(n int) []int {
	var out []int
	for ; n >= 1<<maxRowsLog2; n -= 1 << maxRowsLog2 {
		out = append(out, maxRowsLog2)
	}
	for k := maxRowsLog2 - 1; k >= 0; k-- {
		if n&(1<<k) != 0 {
			out = append(out, k)
		}
	}
	return out
}

// eachChunk calls fn with each run of accepted that one multi-row
// statement writes (see chunks): k is the log2 of its length.
func eachChunk(accepted []int, fn func(k int, part []int) error) error {
	off := 0
	for _, k := range chunks(len(accepted)) {
		part := accepted[off : off+1<<k]
		off += 1 << k
		if err := fn(k, part); err != nil {
			return err
		}
	}
	return nil
}

// SMSAccept implements sms.Store. Every debit is one conditional statement
// (UPDATE ... SET credit = credit - cost WHERE credit >= cost), and the
// debits and inserts of a call are one transaction. An account whose credit
// covers all its messages of the call is debited once for all of them;
// otherwise message by message, in order, so that the later ones are
// refused when the credit runs out. The accepted messages are then
// inserted, in order, and their charges after them, each table with a few
// multi-row INSERTs (see chunks).
func (s *Store) SMSAccept(ctx context.Context, msgs []*sms.Message) ([]sms.AcceptResult, error) {
	var out []sms.AcceptResult
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		out, err = s.acceptTx(ctx, tx, msgs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// acceptTx debits and inserts msgs in tx (see SMSAccept).
func (s *Store) acceptTx(ctx context.Context, tx *sql.Tx, msgs []*sms.Message) ([]sms.AcceptResult, error) {
	out, accepted, err := s.debitTx(ctx, tx, msgs)
	if err != nil || len(accepted) == 0 {
		return out, err
	}
	if err := s.insertSMSTx(ctx, tx, msgs, accepted, out); err != nil {
		return nil, err
	}
	if err := s.insertChargesTx(ctx, tx, msgs, accepted, out); err != nil {
		return nil, err
	}
	return out, nil
}

// debitTx debits the cost of msgs from their accounts in tx (see
// SMSAccept). It returns each message's result but its Number, and the
// indexes of the messages accepted, in order.
func (s *Store) debitTx(ctx context.Context, tx *sql.Tx, msgs []*sms.Message) ([]sms.AcceptResult, []int, error) {
	out := make([]sms.AcceptResult, len(msgs))
	// The cost of each account's messages, and when its last one was made
	// (the time its credit changes).
	total := map[string]int64{}
	last := map[string]time.Time{}
	for _, m := range msgs {
		total[m.PartnerID] += int64(m.Cost)
		if m.CreatedAt.After(last[m.PartnerID]) || last[m.PartnerID].IsZero() {
			last[m.PartnerID] = m.CreatedAt
		}
	}
	// pending[p] is the cost of p's messages not yet accounted for when
	// the whole debit of p succeeded, and after[p] its credit after that
	// debit.
	after := map[string]int64{}
	pending := map[string]int64{}
	for p, cost := range total {
		var credit int64
		err := s.rowTx(ctx, tx, qSMSDebit, cost, fmtTime(last[p]), p, cost).Scan(&credit)
		if errors.Is(err, sql.ErrNoRows) {
			continue // not enough for all, or no such account: one by one
		}
		if err != nil {
			return nil, nil, err
		}
		after[p], pending[p] = credit, cost
	}
	accepted := make([]int, 0, len(msgs))
	for i, m := range msgs {
		var credit int64
		if c, ok := after[m.PartnerID]; ok {
			pending[m.PartnerID] -= int64(m.Cost)
			credit = c + pending[m.PartnerID] // the credit after this message's debit
		} else {
			err := s.rowTx(ctx, tx, qSMSDebit, int64(m.Cost), fmtTime(m.CreatedAt), m.PartnerID, int64(m.Cost)).Scan(&credit)
			if errors.Is(err, sql.ErrNoRows) {
				if err := tx.QueryRowContext(ctx, `SELECT credit FROM sms_accounts WHERE partner_id = ?`, m.PartnerID).Scan(&credit); err != nil {
					return nil, nil, err // ErrNoRows: no such account, nothing is stored
				}
				out[i] = sms.AcceptResult{Balance: sms.Credit(credit), Err: sms.ErrInsufficientCredit}
				continue
			}
			if err != nil {
				return nil, nil, err
			}
		}
		out[i].Balance = sms.Credit(credit)
		accepted = append(accepted, i)
	}
	return out, accepted, nil
}

// insertSMSTx inserts the messages msgs[i] for i in accepted, in order, in
// tx and sets out[i].Number to the number each got. The rows of a
// multi-row INSERT are inserted in the order of its VALUES, and an
// AUTOINCREMENT table gives each new row one more than the largest number
// it ever held (its counter is kept in a register for the statement), so
// the numbers of one statement's rows are consecutive and the last is the
// row id the insert reports; the row count is checked.
func (s *Store) insertSMSTx(ctx context.Context, tx *sql.Tx, msgs []*sms.Message, accepted []int, out []sms.AcceptResult) error {
	args := make([]any, 0, 14<<maxRowsLog2)
	return eachChunk(accepted, func(k int, part []int) error {
		args = args[:0]
		for _, i := range part {
			m := msgs[i]
			args = append(args, m.ID, m.PartnerID, m.Mobile, m.Text, m.Sender, m.ClientSMSID,
				m.Encoding, m.Segments, int64(m.Cost), m.Status, fmtTime(m.DueAt), m.NetworkID,
				fmtTime(m.CreatedAt), fmtTime(m.UpdatedAt))
		}
		res, err := s.execTx(ctx, tx, qSMSInsertRows[k], args...)
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if k > 0 {
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n != int64(len(part)) {
				return fmt.Errorf("sqlitestore: an insert of %d SMS messages inserted %d", len(part), n)
			}
		}
		for j, i := range part {
			out[i].Number = last - int64(len(part)-1-j)
		}
		return nil
	})
}

// insertChargesTx records in tx the charge of each message msgs[i] for i in
// accepted, in order, with its number and balance from out[i].
func (s *Store) insertChargesTx(ctx context.Context, tx *sql.Tx, msgs []*sms.Message, accepted []int, out []sms.AcceptResult) error {
	args := make([]any, 0, 5<<maxRowsLog2)
	return eachChunk(accepted, func(k int, part []int) error {
		args = args[:0]
		for _, i := range part {
			m := msgs[i]
			args = append(args, m.PartnerID, -int64(m.Cost), int64(out[i].Balance), out[i].Number, fmtTime(m.CreatedAt))
		}
		_, err := s.execTx(ctx, tx, qSMSChargeRows[k], args...)
		return err
	})
}

// SMSMessageGet implements sms.Store.
func (s *Store) SMSMessageGet(ctx context.Context, partnerID string, number int64) (*sms.Message, error) {
	m, err := scanSMS(s.r.QueryRowContext(ctx, `SELECT `+smsCols+` FROM sms_messages WHERE number = ? AND partner_id = ?`, number, partnerID))
	return m, interpretError(err)
}

// qSMSMessageList reads an account's messages newest first through the
// index sms_messages_account (partner_id, number).
var qSMSMessageList = `SELECT ` + smsCols + ` FROM sms_messages INDEXED BY sms_messages_account
	WHERE partner_id = ? AND number < ? ORDER BY number DESC LIMIT ?`

// SMSMessageList implements sms.Store.
func (s *Store) SMSMessageList(ctx context.Context, p *sms.MessageListParams) ([]*sms.Message, error) {
	before := sqlrows.Before(p.Before)
	rows, err := s.r.QueryContext(ctx, qSMSMessageList, p.PartnerID, before, p.Limit)
	return collect(rows, err, scanSMS)
}

// qSMSClaimPick picks the due messages to claim (see SMSClaimDue) and
// their marks; its arguments are now and the limit.
const qSMSClaimPick = `SELECT number, unconfirmed_since FROM sms_messages INDEXED BY sms_messages_due
			WHERE status IN ('scheduled', 'queued', 'sending') AND due_at <= ?
			ORDER BY due_at, number LIMIT ?`

// qSMSClaim claims the picked messages; its arguments are the lease end,
// the claim token, now, now, the mark renewal bound, then the numbers.
const qSMSClaim = `UPDATE sms_messages
			SET status = 'sending', due_at = ?, claim_token = ?, attempts = attempts + 1, updated_at = ?,
				unconfirmed_since = CASE WHEN unconfirmed_since IS NULL OR unconfirmed_since <= ? THEN ? ELSE unconfirmed_since END
			WHERE number IN (%s)
			RETURNING ` + smsCols

// SMSClaimDue implements sms.Store: in the writer's transaction, so two
// claimers never get the same message, a SELECT of the candidates (with
// their marks as they were) through the partial index sms_messages_due,
// and one UPDATE ... RETURNING of them.
func (s *Store) SMSClaimDue(ctx context.Context, p *sms.ClaimParams) ([]*sms.Message, error) {
	var out []*sms.Message
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qSMSClaimPick, fmtTime(p.Now), p.Limit)
		if err != nil {
			return err
		}
		prev := map[int64]*time.Time{}
		var args []any
		renew := ""
		if !p.RenewMarksBefore.IsZero() {
			renew = fmtTime(p.RenewMarksBefore)
		}
		args = append(args, fmtTime(p.LeaseUntil), p.Token, fmtTime(p.Now), renew, fmtTime(p.Now))
		for rows.Next() {
			var n int64
			var mark *time.Time
			if err := rows.Scan(&n, storedTimePtr{&mark}); err != nil {
				rows.Close()
				return err
			}
			prev[n] = mark
			args = append(args, n)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(prev) == 0 {
			return nil
		}
		rows, err = tx.QueryContext(ctx, fmt.Sprintf(qSMSClaim, placeholders(len(prev))), args...)
		out, err = collect(rows, err, scanSMS)
		for _, m := range out {
			m.UnconfirmedSince = prev[m.Number]
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *sms.Message) int { return cmp.Compare(a.Number, b.Number) })
	return out, nil
}

// SMSComplete implements sms.Store.
func (s *Store) SMSComplete(ctx context.Context, cs []*sms.Completion) ([]error, error) {
	errs := make([]error, len(cs))
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for i, c := range cs {
			var res sql.Result
			var err error
			switch c.Status {
			case sms.StatusSent:
				res, err = tx.ExecContext(ctx, `UPDATE sms_messages SET status = 'sent', gateway_message_id = ?, network_id = ?,
					failure_reason = '', claim_token = '', sent_at = ?, updated_at = ?, unconfirmed_since = NULL
					WHERE number = ? AND status = 'sending' AND claim_token = ?`,
					c.GatewayMessageID, c.NetworkID, fmtTime(c.At), fmtTime(c.At), c.Number, c.Token)
			case sms.StatusQueued:
				res, err = tx.ExecContext(ctx, `UPDATE sms_messages SET status = 'queued', due_at = ?, failure_reason = ?,
					claim_token = '', updated_at = ?, unconfirmed_since = CASE WHEN ? THEN unconfirmed_since END,
					attempts = CASE WHEN ? AND attempts > 0 THEN attempts - 1 ELSE attempts END
					WHERE number = ? AND status = 'sending' AND claim_token = ?`,
					fmtTime(c.RetryAt), c.FailureReason, fmtTime(c.At), c.Unconfirmed, c.Untried, c.Number, c.Token)
			default:
				res, err = tx.ExecContext(ctx, `UPDATE sms_messages SET status = 'failed', failure_reason = ?,
					claim_token = '', updated_at = ?, unconfirmed_since = NULL
					WHERE number = ? AND status = 'sending' AND claim_token = ?`,
					c.FailureReason, fmtTime(c.At), c.Number, c.Token)
			}
			n, err := affected(res, err)
			if err != nil {
				return err
			}
			if n == 0 {
				errs[i] = driver.ErrStale
				continue
			}
			if c.Status != sms.StatusSent && c.Status != sms.StatusQueued {
				var partner string
				var cost, credit int64
				if err := tx.QueryRowContext(ctx, `SELECT partner_id, cost FROM sms_messages WHERE number = ?`, c.Number).Scan(&partner, &cost); err != nil {
					return err
				}
				if err := tx.QueryRowContext(ctx, `UPDATE sms_accounts SET credit = credit + ?, updated_at = ?
					WHERE partner_id = ? RETURNING credit`, cost, fmtTime(c.At), partner).Scan(&credit); err != nil {
					return err
				}
				if _, err := s.execTx(ctx, tx, qSMSLedger, partner, sms.LedgerRefund, cost, credit, "", c.Number, fmtTime(c.At)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// SMSConfirm implements sms.Store: a conditional update and, when it
// changed nothing, a read, in the writer's transaction.
func (s *Store) SMSConfirm(ctx context.Context, p *sms.ConfirmParams) (*sms.Message, bool, error) {
	var out *sms.Message
	var confirmed bool
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		m, err := scanSMS(tx.QueryRowContext(ctx, `UPDATE sms_messages SET status = 'sent', gateway_message_id = ?,
				network_id = CASE WHEN ? = '' THEN network_id ELSE ? END,
				failure_reason = '', claim_token = '', sent_at = ?, updated_at = ?, unconfirmed_since = NULL
			WHERE number = ? AND unconfirmed_since IS NOT NULL AND status IN ('queued', 'sending')
			RETURNING `+smsCols, p.GatewayMessageID, p.NetworkID, p.NetworkID, fmtTime(p.At), fmtTime(p.At), p.Number))
		if err == nil {
			out, confirmed = m, true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out, err = scanSMS(tx.QueryRowContext(ctx, `SELECT `+smsCols+` FROM sms_messages WHERE number = ?`, p.Number))
		return interpretError(err)
	})
	if err != nil {
		return nil, false, err
	}
	return out, confirmed, nil
}

// SMSMessageByGatewayID implements sms.Store, through the index
// sms_messages_gateway_id.
func (s *Store) SMSMessageByGatewayID(ctx context.Context, gatewayMessageID string) (*sms.Message, error) {
	if gatewayMessageID == "" {
		return nil, messaging.ErrNotFound
	}
	m, err := scanSMS(s.r.QueryRowContext(ctx, qSMSByGatewayID, gatewayMessageID))
	return m, interpretError(err)
}

// qSMSByGatewayID finds a message by the gateway's id (see
// SMSMessageByGatewayID).
const qSMSByGatewayID = `SELECT ` + smsCols + ` FROM sms_messages INDEXED BY sms_messages_gateway_id
	WHERE gateway_message_id = ? AND gateway_message_id <> '' ORDER BY number DESC LIMIT 1`

// SMSReportSave implements sms.Store. The update leaves a row whose stored
// report is final alone; a row it did not change is told from a missing
// one by reading it.
func (s *Store) SMSReportSave(ctx context.Context, p *sms.ReportSaveParams) (pushed bool, err error) {
	r := p.Report
	var t any
	if !r.Time.IsZero() {
		t = fmtTime(r.Time)
	}
	finals := sms.FinalDeliveryStates()
	args := []any{r.Status, r.Description, r.NetworkID, t, p.Number, p.PartnerID}
	for _, f := range finals {
		args = append(args, f)
	}
	q := `UPDATE sms_messages SET dlr_status = ?, dlr_description = ?, dlr_network_id = ?, dlr_time = ?
			WHERE number = ? AND partner_id = ? AND (dlr_description IS NULL OR dlr_description NOT IN (?` + strings.Repeat(", ?", len(finals)-1) + `))`
	err = s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, q, args...))
		if err != nil {
			return err
		}
		if n > 0 {
			if p.Push != nil {
				pushed, err = queueEndpointEvent(ctx, tx, p.Push)
			}
			return err
		}
		var one int
		return interpretError(tx.QueryRowContext(ctx, `SELECT 1 FROM sms_messages WHERE number = ? AND partner_id = ?`, p.Number, p.PartnerID).Scan(&one))
	})
	if err != nil {
		return false, err
	}
	return pushed, nil
}
