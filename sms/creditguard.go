package sms

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultUpstreamCreditCheckEvery is how often the scheduler reads the
// service's credit at the upstream when Options.UpstreamCreditFloor is set
// and Options.UpstreamCreditCheckEvery is not.
const DefaultUpstreamCreditCheckEvery = 5 * time.Minute

// creditGuard watches the service's own credit at the upstream gateway
// (see Options.UpstreamCreditFloor). Its zero value is off.
type creditGuard struct {
	floor Credit
	every time.Duration
	pause bool

	mu        sync.Mutex
	credit    Credit
	low       bool
	checkedAt time.Time
	// due is when the next balance check is due (zero: at once).
	due time.Time
	// failing is set while balance checks fail, so one line is logged
	// per run of failures.
	failing bool
}

// on reports whether the guard is configured.
func (g *creditGuard) on() bool { return g.floor > 0 }

// UpstreamCredit returns the service's own credit at the upstream gateway
// as the scheduler last read it (Gateway.Balance), whether it was below
// Options.UpstreamCreditFloor, and when it was read. checkedAt is zero when
// the credit was never read: no floor is set, or no check succeeded yet.
func (s *SMS) UpstreamCredit() (credit Credit, low bool, checkedAt time.Time) {
	g := &s.credit
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.credit, g.low, g.checkedAt
}

// HandOverPaused reports whether the scheduler holds messages back
// because the upstream credit is below the floor and
// Options.PauseBelowFloor is set.
func (s *SMS) HandOverPaused() bool {
	g := &s.credit
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pause && g.low
}

// lowCreditRefusal reports whether err is the upstream refusing for low
// credit: a *GatewayError with CodeLowCredit, the upstream's code as it is
// this API's.
func lowCreditRefusal(err error) bool {
	var ge *GatewayError
	return errors.As(err, &ge) && ge.Code == CodeLowCredit
}

// checkCreditSoon makes the next claim read the upstream credit first.
func (s *SMS) checkCreditSoon() {
	g := &s.credit
	g.mu.Lock()
	g.due = time.Time{}
	g.mu.Unlock()
}

// mayHandOver is the credit guard's word before a claim: it reads the
// upstream credit when a check is due, and returns false while hand-over
// is paused (the credit is below the floor and Options.PauseBelowFloor is
// set). A check that fails changes nothing but the time of the next one.
func (s *SMS) mayHandOver(ctx context.Context) bool {
	g := &s.credit
	if !g.on() {
		return true
	}
	now := s.now()
	g.mu.Lock()
	if !g.due.IsZero() && now.Before(g.due) {
		defer g.mu.Unlock()
		return !(g.pause && g.low)
	}
	// Claims while this check runs go by the last known state.
	g.due = now.Add(g.every)
	g.mu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, s.opts.Lease/2)
	c, err := s.gw.Balance(bctx)
	cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil && !g.failing {
			s.log.WarnContext(ctx, "sms: reading the upstream credit failed", "err", err.Error(), "retry_in", g.every)
		}
		g.failing = ctx.Err() == nil
		return !(g.pause && g.low)
	}
	g.failing = false
	wasLow := g.low
	g.credit, g.low, g.checkedAt = c, c < g.floor, now
	switch {
	case g.low && !wasLow:
		s.log.WarnContext(ctx, "sms: upstream credit below the floor", "credit", c.String(), "floor", g.floor.String(), "hand_over_paused", g.pause)
	case !g.low && wasLow:
		s.log.InfoContext(ctx, "sms: upstream credit back at or above the floor", "credit", c.String(), "floor", g.floor.String())
	}
	return !(g.pause && g.low)
}
