package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ujumbe/messaging/store/driver"
)

// sweepBatch bounds the expired reports one PendingReportSave deletes.
const sweepBatch = 100

// pendingReports holds the provider reports kept for provider message ids
// no message carries yet. Callers hold Store.mu.
type pendingReports struct {
	seq int64
	// byID holds the kept reports of each id, in Seq order.
	byID map[string][]*driver.PendingReport
	// order holds the reports in Seq order, for the sweep of expired
	// ones; it may still hold reports already taken, until the sweep
	// reaches them.
	order []*driver.PendingReport
}

// kept reports whether r is still held (not taken nor swept).
func (p *pendingReports) kept(r *driver.PendingReport) bool {
	return slices.Contains(p.byID[r.ProviderMessageID], r)
}

// remove deletes r from its id's reports.
func (p *pendingReports) remove(r *driver.PendingReport) {
	rs := slices.DeleteFunc(p.byID[r.ProviderMessageID], func(x *driver.PendingReport) bool { return x == r })
	if len(rs) == 0 {
		delete(p.byID, r.ProviderMessageID)
		return
	}
	p.byID[r.ProviderMessageID] = rs
}

// sweep drops, from the oldest, at most sweepBatch reports that are taken
// or received before notBefore; it stops at the first report still kept
// and unexpired.
func (p *pendingReports) sweep(notBefore time.Time) {
	n := 0
	for n < len(p.order) && n < sweepBatch {
		r := p.order[n]
		if p.kept(r) {
			if !r.ReceivedAt.Before(notBefore) {
				break
			}
			p.remove(r)
		}
		n++
	}
	p.order = p.order[n:]
}

// PendingReportSave implements driver.Store.
func (s *Store) PendingReportSave(ctx context.Context, p *driver.PendingReportSaveParams) (bool, error) {
	return write(ctx, s, func() (bool, error) {
		pr := &s.pending
		if pr.byID == nil {
			pr.byID = map[string][]*driver.PendingReport{}
		}
		pr.sweep(p.NotBefore)
		id := p.Report.ProviderMessageID
		// The id's expired reports go too (the order slice lets go of them
		// when the sweep reaches them).
		if rs := slices.DeleteFunc(pr.byID[id], func(r *driver.PendingReport) bool { return r.ReceivedAt.Before(p.NotBefore) }); len(rs) > 0 {
			pr.byID[id] = rs
		} else {
			delete(pr.byID, id)
		}
		if len(pr.byID[id]) >= p.Limit {
			return false, nil
		}
		pr.seq++
		p.Report.Seq = pr.seq
		c := *p.Report
		c.ReceivedAt = c.ReceivedAt.UTC()
		pr.byID[id] = append(pr.byID[id], &c)
		pr.order = append(pr.order, &c)
		return true, nil
	})
}

// PendingReportTake implements driver.Store.
func (s *Store) PendingReportTake(ctx context.Context, p *driver.PendingReportTakeParams) ([]*driver.PendingReport, error) {
	return write(ctx, s, func() ([]*driver.PendingReport, error) {
		var rs []*driver.PendingReport
		for _, id := range p.ProviderMessageIDs {
			rs = append(rs, s.pending.byID[id]...)
			delete(s.pending.byID, id)
		}
		slices.SortFunc(rs, func(a, b *driver.PendingReport) int { return cmp.Compare(a.Seq, b.Seq) })
		return copiesOf(slices.Values(rs), func(r *driver.PendingReport) bool { return !r.ReceivedAt.Before(p.NotBefore) }, shallowCopy), nil
	})
}
