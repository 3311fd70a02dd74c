package memstore

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

var _ sms.OutboxStore = (*Store)(nil)

// SMSOutbox returns s: the SMS records and the webhook outbox are in the
// same store, so a report's push is queued in its transaction (see
// sms.OutboxStore).
func (s *Store) SMSOutbox() driver.Store { return s }

// smsData is the SMS part of the store. Its zero value is ready to use.
type smsData struct {
	mu       sync.Mutex
	accounts map[string]*sms.Account
	messages map[int64]*sms.Message
	// pending holds the numbers of scheduled, queued and sending messages,
	// so claims look at those alone.
	pending map[int64]struct{}
	// byGateway indexes sent messages by the gateway's id (the highest
	// number when an id repeats).
	byGateway map[string]int64
	last      int64
	// idem holds the idempotency records; idemSwept is its size after the
	// last sweep of expired records.
	idem      map[idemKey]*sms.Idempotency
	idemSwept int
	// ledger holds every account's ledger entries, oldest first; topUps
	// indexes the top-ups that have a reference.
	ledger []*sms.LedgerEntry
	topUps map[idemKey]*sms.LedgerEntry
}

// idemKey identifies an idempotency record: keys are scoped to accounts.
type idemKey struct{ partnerID, key string }

func (d *smsData) init() {
	if d.accounts == nil {
		d.accounts = map[string]*sms.Account{}
		d.messages = map[int64]*sms.Message{}
		d.pending = map[int64]struct{}{}
		d.byGateway = map[string]int64{}
		d.idem = map[idemKey]*sms.Idempotency{}
		d.topUps = map[idemKey]*sms.LedgerEntry{}
	}
}

func copyIdem(r *sms.Idempotency) *sms.Idempotency {
	c := *r
	c.RequestHash = slices.Clone(r.RequestHash)
	c.Answer = slices.Clone(r.Answer)
	c.Results = slices.Clone(r.Results)
	return &c
}

func copyAccount(a *sms.Account) *sms.Account {
	c := *a
	c.KeyHash = slices.Clone(a.KeyHash)
	c.Senders = append([]string{}, a.Senders...)
	return &c
}

func copySMS(m *sms.Message) *sms.Message {
	c := *m
	if m.Report != nil {
		r := *m.Report
		c.Report = &r
	}
	c.SentAt = copyTime(m.SentAt)
	c.UnconfirmedSince = copyTime(m.UnconfirmedSince)
	return &c
}

func pendingStatus(status string) bool {
	return status == sms.StatusScheduled || status == sms.StatusQueued || status == sms.StatusSending
}

// do runs fn on the SMS data, ready to use, under its lock, unless ctx is
// done.
func (d *smsData) do(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	return fn()
}

// smsRead is smsData.do for a method that returns a value: fn runs under
// the SMS lock, unless ctx is done.
func smsRead[T any](ctx context.Context, d *smsData, fn func() (T, error)) (T, error) {
	var out T
	err := d.do(ctx, func() error {
		var err error
		out, err = fn()
		return err
	})
	return out, err
}

// withAccount runs fn on the account partnerID under the SMS lock, unless
// ctx is done; messaging.ErrNotFound when there is no such account.
func (d *smsData) withAccount(ctx context.Context, partnerID string, fn func(a *sms.Account)) error {
	return d.do(ctx, func() error {
		a, ok := d.accounts[partnerID]
		if !ok {
			return messaging.ErrNotFound
		}
		fn(a)
		return nil
	})
}

// withMessage runs fn on the message number of the account partnerID under
// the SMS lock, unless ctx is done; messaging.ErrNotFound when the account
// has no such message.
func (d *smsData) withMessage(ctx context.Context, partnerID string, number int64, fn func(m *sms.Message)) error {
	return d.do(ctx, func() error {
		m, ok := d.messages[number]
		if !ok || m.PartnerID != partnerID {
			return messaging.ErrNotFound
		}
		fn(m)
		return nil
	})
}

// SMSAccountCreate implements sms.Store.
func (s *Store) SMSAccountCreate(ctx context.Context, a *sms.Account) error {
	d := &s.sms
	return d.do(ctx, func() error {
		c := copyAccount(a)
		c.Senders = sortedUnique(c.Senders)
		if err := insert(d.accounts, a.PartnerID, c); err != nil {
			return err
		}
		if c.Credit != 0 {
			d.record(&sms.LedgerEntry{PartnerID: c.PartnerID, Kind: sms.LedgerOpening, Amount: c.Credit, Balance: c.Credit, At: c.CreatedAt})
		}
		return nil
	})
}

// record appends e to the ledger with the next Seq. d.mu must be held.
func (d *smsData) record(e *sms.LedgerEntry) *sms.LedgerEntry {
	e.Seq = int64(len(d.ledger)) + 1
	d.ledger = append(d.ledger, e)
	return e
}

// SMSLedger implements sms.Store.
func (s *Store) SMSLedger(ctx context.Context, p *sms.LedgerParams) ([]*sms.LedgerEntry, error) {
	d := &s.sms
	return smsRead(ctx, d, func() ([]*sms.LedgerEntry, error) {
		return newestPage(d.ledger, p.Limit, func(e *sms.LedgerEntry) bool {
			return e.PartnerID == p.PartnerID && (p.Before == 0 || e.Seq < p.Before)
		}, shallowCopy), nil
	})
}

// SMSAccountList implements sms.Store.
func (s *Store) SMSAccountList(ctx context.Context, p *sms.AccountListParams) ([]*sms.Account, error) {
	var out []*sms.Account
	d := &s.sms
	err := d.do(ctx, func() error {
		for _, id := range keysAfter(d.accounts, p.After, p.Limit) {
			out = append(out, copyAccount(d.accounts[id]))
		}
		return nil
	})
	return out, err
}

// SMSMessageList implements sms.Store. Numbers are consecutive, so it
// walks them down from p.Before.
func (s *Store) SMSMessageList(ctx context.Context, p *sms.MessageListParams) ([]*sms.Message, error) {
	var out []*sms.Message
	d := &s.sms
	err := d.do(ctx, func() error {
		n := d.last
		if p.Before > 0 {
			n = min(n, p.Before-1)
		}
		for ; n > 0 && len(out) < p.Limit; n-- {
			if m, ok := d.messages[n]; ok && m.PartnerID == p.PartnerID {
				out = append(out, copySMS(m))
			}
		}
		return nil
	})
	return out, err
}

// SMSAccountGet implements sms.Store.
func (s *Store) SMSAccountGet(ctx context.Context, partnerID string) (*sms.Account, error) {
	var out *sms.Account
	err := s.sms.withAccount(ctx, partnerID, func(a *sms.Account) { out = copyAccount(a) })
	return out, err
}

// SMSAccountKey implements sms.Store.
func (s *Store) SMSAccountKey(ctx context.Context, partnerID string) ([]byte, error) {
	var out []byte
	err := s.sms.withAccount(ctx, partnerID, func(a *sms.Account) { out = slices.Clone(a.KeyHash) })
	return out, err
}

// SMSAccountUpdate implements sms.Store.
func (s *Store) SMSAccountUpdate(ctx context.Context, p *sms.AccountUpdate) (*sms.Account, error) {
	var out *sms.Account
	err := s.sms.withAccount(ctx, p.PartnerID, func(a *sms.Account) {
		if len(p.AddSenders) > 0 {
			a.Senders = sortedUnique(append(slices.Clone(a.Senders), p.AddSenders...))
		}
		if p.TimeZone != nil {
			a.TimeZone = *p.TimeZone
		}
		if p.CostPerSegment != nil {
			a.CostPerSegment = *p.CostPerSegment
		}
		if p.CallbackEndpointID != nil {
			a.CallbackEndpointID = *p.CallbackEndpointID
		}
		a.UpdatedAt = p.At
		out = copyAccount(a)
	})
	return out, err
}

// SMSCreditAdd implements sms.Store.
func (s *Store) SMSCreditAdd(ctx context.Context, p *sms.CreditAddParams) (e, prev *sms.LedgerEntry, err error) {
	d := &s.sms
	err = d.do(ctx, func() error {
		a, ok := d.accounts[p.PartnerID]
		if !ok {
			return messaging.ErrNotFound
		}
		k := idemKey{p.PartnerID, p.Reference}
		if old, ok := d.topUps[k]; ok && p.Reference != "" {
			c := *old
			prev = &c
			return nil
		}
		if a.Credit > p.Max-p.Amount {
			return sms.ErrCreditOverflow
		}
		a.Credit += p.Amount
		a.UpdatedAt = p.At
		n := d.record(&sms.LedgerEntry{PartnerID: p.PartnerID, Kind: sms.LedgerTopUp, Amount: p.Amount, Balance: a.Credit, Reference: p.Reference, At: p.At})
		if p.Reference != "" {
			d.topUps[k] = n
		}
		c := *n
		e = &c
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return e, prev, nil
}

// SMSAccept implements sms.Store: the debits and inserts of a call happen
// under one lock, so they are atomic together.
func (s *Store) SMSAccept(ctx context.Context, msgs []*sms.Message) ([]sms.AcceptResult, error) {
	d := &s.sms
	return smsRead(ctx, d, func() ([]sms.AcceptResult, error) { return d.accept(msgs) })
}

// accept debits and inserts msgs. d.mu must be held.
func (d *smsData) accept(msgs []*sms.Message) ([]sms.AcceptResult, error) {
	for _, m := range msgs {
		if _, ok := d.accounts[m.PartnerID]; !ok {
			return nil, messaging.ErrNotFound
		}
	}
	out := make([]sms.AcceptResult, len(msgs))
	for i, m := range msgs {
		a := d.accounts[m.PartnerID]
		if a.Credit < m.Cost {
			out[i] = sms.AcceptResult{Balance: a.Credit, Err: sms.ErrInsufficientCredit}
			continue
		}
		a.Credit -= m.Cost
		d.last++
		c := copySMS(m)
		c.Number = d.last
		d.record(&sms.LedgerEntry{PartnerID: a.PartnerID, Kind: sms.LedgerCharge, Amount: -m.Cost, Balance: a.Credit, MessageNumber: c.Number, At: m.CreatedAt})
		d.messages[c.Number] = c
		if pendingStatus(c.Status) {
			d.pending[c.Number] = struct{}{}
		}
		out[i] = sms.AcceptResult{Number: c.Number, Balance: a.Credit}
	}
	return out, nil
}

// SMSAcceptIdempotent implements sms.Store: the check of the key, the
// debits, the inserts and the record happen under one lock.
func (s *Store) SMSAcceptIdempotent(ctx context.Context, p *sms.AcceptIdempotentParams) ([]sms.AcceptResult, *sms.Idempotency, error) {
	rec := p.Record
	var res []sms.AcceptResult
	var prev *sms.Idempotency
	d := &s.sms
	err := d.do(ctx, func() error {
		k := idemKey{rec.PartnerID, rec.Key}
		if live, ok := d.idem[k]; ok && live.ExpiresAt.After(rec.CreatedAt) {
			prev = copyIdem(live)
			return nil
		}
		if _, ok := d.accounts[rec.PartnerID]; !ok {
			return messaging.ErrNotFound
		}
		var err error
		if res, err = d.accept(p.Messages); err != nil {
			return err
		}
		c := copyIdem(rec)
		c.Results = slices.Clone(res)
		d.idem[k] = c
		d.sweepIdem(rec.CreatedAt)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return res, prev, nil
}

// sweepIdem deletes the records expired at now once the map doubled since
// the last sweep, so that sweeping costs O(1) per record. d.mu must be
// held.
func (d *smsData) sweepIdem(now time.Time) {
	if len(d.idem) < 2*d.idemSwept+64 {
		return
	}
	for k, r := range d.idem {
		if !r.ExpiresAt.After(now) {
			delete(d.idem, k)
		}
	}
	d.idemSwept = len(d.idem)
}

// SMSIdempotencyGet implements sms.Store.
func (s *Store) SMSIdempotencyGet(ctx context.Context, p *sms.IdempotencyGetParams) (*sms.Idempotency, error) {
	d := &s.sms
	return smsRead(ctx, d, func() (*sms.Idempotency, error) {
		r, ok := d.idem[idemKey{p.PartnerID, p.Key}]
		if !ok || !r.ExpiresAt.After(p.Now) {
			return nil, messaging.ErrNotFound
		}
		return copyIdem(r), nil
	})
}

// SMSMessageGet implements sms.Store.
func (s *Store) SMSMessageGet(ctx context.Context, partnerID string, number int64) (*sms.Message, error) {
	var out *sms.Message
	err := s.sms.withMessage(ctx, partnerID, number, func(m *sms.Message) { out = copySMS(m) })
	return out, err
}

// SMSClaimDue implements sms.Store. It scans the pending messages only.
func (s *Store) SMSClaimDue(ctx context.Context, p *sms.ClaimParams) ([]*sms.Message, error) {
	var out []*sms.Message
	d := &s.sms
	err := d.do(ctx, func() error {
		var due []*sms.Message
		for n := range d.pending {
			if m := d.messages[n]; !m.DueAt.After(p.Now) {
				due = append(due, m)
			}
		}
		sort.Slice(due, func(i, j int) bool {
			if !due[i].DueAt.Equal(due[j].DueAt) {
				return due[i].DueAt.Before(due[j].DueAt)
			}
			return due[i].Number < due[j].Number
		})
		out = leaseFirst(due, p.Limit, func(m *sms.Message) *sms.Message {
			prev := copyTime(m.UnconfirmedSince)
			m.Status, m.DueAt, m.ClaimToken = sms.StatusSending, p.LeaseUntil, p.Token
			m.Attempts++
			m.UpdatedAt = p.Now
			if m.UnconfirmedSince == nil || !m.UnconfirmedSince.After(p.RenewMarksBefore) {
				now := p.Now
				m.UnconfirmedSince = &now
			}
			c := copySMS(m)
			c.UnconfirmedSince = prev
			return c
		})
		return nil
	})
	return out, err
}

// SMSComplete implements sms.Store.
func (s *Store) SMSComplete(ctx context.Context, cs []*sms.Completion) ([]error, error) {
	d := &s.sms
	return smsRead(ctx, d, func() ([]error, error) {
		errs := make([]error, len(cs))
		for i, c := range cs {
			m, ok := d.messages[c.Number]
			if !ok || m.Status != sms.StatusSending || m.ClaimToken != c.Token {
				errs[i] = driver.ErrStale
				continue
			}
			m.ClaimToken, m.UpdatedAt = "", c.At
			if c.Status != sms.StatusQueued || !c.Unconfirmed {
				m.UnconfirmedSince = nil
			}
			switch c.Status {
			case sms.StatusSent:
				m.Status, m.GatewayMessageID, m.NetworkID, m.FailureReason = sms.StatusSent, c.GatewayMessageID, c.NetworkID, ""
				at := c.At
				m.SentAt = &at
				delete(d.pending, m.Number)
				if c.GatewayMessageID != "" && d.byGateway[c.GatewayMessageID] < m.Number {
					d.byGateway[c.GatewayMessageID] = m.Number
				}
			case sms.StatusQueued:
				m.Status, m.DueAt, m.FailureReason = sms.StatusQueued, c.RetryAt, c.FailureReason
				if c.Untried && m.Attempts > 0 {
					m.Attempts--
				}
			default:
				m.Status, m.FailureReason = sms.StatusFailed, c.FailureReason
				a := d.accounts[m.PartnerID]
				a.Credit += m.Cost
				d.record(&sms.LedgerEntry{PartnerID: a.PartnerID, Kind: sms.LedgerRefund, Amount: m.Cost, Balance: a.Credit, MessageNumber: m.Number, At: c.At})
				delete(d.pending, m.Number)
			}
		}
		return errs, nil
	})
}

// SMSConfirm implements sms.Store.
func (s *Store) SMSConfirm(ctx context.Context, p *sms.ConfirmParams) (*sms.Message, bool, error) {
	var out *sms.Message
	var confirmed bool
	d := &s.sms
	err := d.do(ctx, func() error {
		m, ok := d.messages[p.Number]
		if !ok {
			return messaging.ErrNotFound
		}
		if m.UnconfirmedSince != nil && (m.Status == sms.StatusQueued || m.Status == sms.StatusSending) {
			confirmed = true
			at := p.At
			m.Status, m.GatewayMessageID, m.FailureReason, m.ClaimToken = sms.StatusSent, p.GatewayMessageID, "", ""
			if p.NetworkID != "" {
				m.NetworkID = p.NetworkID
			}
			m.SentAt, m.UpdatedAt, m.UnconfirmedSince = &at, p.At, nil
			delete(d.pending, m.Number)
			if p.GatewayMessageID != "" && d.byGateway[p.GatewayMessageID] < m.Number {
				d.byGateway[p.GatewayMessageID] = m.Number
			}
		}
		out = copySMS(m)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, confirmed, nil
}

// SMSMessageByGatewayID implements sms.Store.
func (s *Store) SMSMessageByGatewayID(ctx context.Context, gatewayMessageID string) (*sms.Message, error) {
	d := &s.sms
	return smsRead(ctx, d, func() (*sms.Message, error) {
		n, ok := d.byGateway[gatewayMessageID]
		if !ok || gatewayMessageID == "" {
			return nil, messaging.ErrNotFound
		}
		return copySMS(d.messages[n]), nil
	})
}

// SMSReportSave implements sms.Store. A stored final report is kept.
// With a Push it holds the messaging lock, then the SMS lock (the only
// place that holds both, always in this order).
func (s *Store) SMSReportSave(ctx context.Context, p *sms.ReportSaveParams) (pushed bool, err error) {
	if p.Push != nil {
		unlock, err := s.lock(ctx)
		if err != nil {
			return false, err
		}
		defer unlock()
	}
	err = s.sms.withMessage(ctx, p.PartnerID, p.Number, func(m *sms.Message) {
		if m.Report != nil && m.Report.Final() {
			return
		}
		c := *p.Report
		m.Report = &c
		if p.Push != nil {
			pushed = s.queueEndpointEvent(p.Push)
		}
	})
	return pushed, err
}

// SMSQueueStats implements sms.Store. It walks the pending messages only.
func (s *Store) SMSQueueStats(ctx context.Context, p *sms.QueueStatsParams) (*sms.QueueStats, error) {
	d := &s.sms
	return smsRead(ctx, d, func() (*sms.QueueStats, error) {
		dues := func(yield func(time.Time) bool) {
			for n := range d.pending {
				if !yield(d.messages[n].DueAt) {
					return
				}
			}
		}
		st := &sms.QueueStats{}
		st.Pending, st.Due, st.OldestDueAt = dueStats(dues, p.Now)
		return st, nil
	})
}
