package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Truth under cancellation: many writers run concurrently and a random
// tenth of them cancel their context after a random 0-2 ms, so that some
// cancellations land while a write runs (on a store that shares one
// transaction among callers, while other callers' writes run too). Whatever
// a store answers, it must be the truth: a write reported done is stored, a
// write reported failed is not.

// cancelWriters and cancelOps size the run: enough concurrent writes that
// cancellations land mid-write on every store.
const (
	cancelWriters = 32
	cancelOps     = 40
)

// cancelSeed returns the seed of a run, logged so that a failure can be
// replayed by hand.
func cancelSeed(t *testing.T) uint64 {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return seed
}

// maybeCancel returns a context that, one time in ten, is cancelled after a
// random 0-2 ms, and its cancel function.
func maybeCancel(rng *rand.Rand) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	if rng.IntN(10) == 0 {
		d := time.Duration(rng.Int64N(int64(2 * time.Millisecond)))
		time.AfterFunc(d, cancel)
	}
	return ctx, cancel
}

// runWriters runs op cancelOps times on each of cancelWriters goroutines,
// each with its own random source.
func runWriters(seed uint64, op func(rng *rand.Rand, w, i int)) {
	var wg sync.WaitGroup
	for w := range cancelWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := range cancelOps {
				op(rng, w, i)
			}
		}()
	}
	wg.Wait()
}

func testCancellationTruth(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	seed := cancelSeed(t)

	// Messages to update and to claim, made before the run.
	const updatable, claimable = 300, 300
	for i := range updatable {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", fmt.Sprintf("msg_u%d", i), at(3600))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range claimable {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", fmt.Sprintf("msg_c%d", i), at(0))); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	created := map[string]bool{}  // message id -> reported created
	contacts := map[string]bool{} // contact id -> reported created
	updated := map[string]bool{}  // message id -> reported updated (only the first try of each)
	claimedBy := map[string]string{}
	var claimOwners []string
	nextUpdate := 0
	runWriters(seed, func(rng *rand.Rand, w, i int) {
		c, cancel := maybeCancel(rng)
		defer cancel()
		switch i % 4 {
		case 0: // create a message
			id := fmt.Sprintf("msg_n%d_%d", w, i)
			m := queuedMessage("a", id, at(7200))
			if rng.IntN(2) == 0 {
				m.IdempotencyKey, m.RequestHash = "k-"+id, "h"
			}
			_, ok, err := s.MessageCreate(c, m)
			mu.Lock()
			created[id] = err == nil && ok
			mu.Unlock()
		case 1: // create a contact
			id := fmt.Sprintf("ct_%d_%d", w, i)
			err := s.ContactCreate(c, contact("a", id, 1, "Ann", "Lee", fmt.Sprintf("+2547%08d", w*1000+i), ""))
			mu.Lock()
			contacts[id] = err == nil
			mu.Unlock()
		case 2: // move a queued message to sent
			mu.Lock()
			n := nextUpdate
			nextUpdate++
			mu.Unlock()
			if n >= updatable {
				return
			}
			id := fmt.Sprintf("msg_u%d", n)
			_, changed, err := updateStatus(c, s, &driver.MessageStatusParams{
				WorkspaceID: "a", ID: id, From: []string{"queued"}, To: "sent", ProviderMessageID: "p-" + id, At: at(10),
			})
			mu.Lock()
			updated[id] = err == nil && changed
			mu.Unlock()
		case 3: // claim due messages
			owner := fmt.Sprintf("o%d_%d", w, i)
			got, err := s.MessageClaim(c, &driver.MessageClaimParams{Owner: owner, Now: at(1), Lease: time.Hour, Limit: 3})
			mu.Lock()
			claimOwners = append(claimOwners, owner)
			if err == nil {
				for _, m := range got {
					if prev, ok := claimedBy[m.ID]; ok {
						t.Errorf("%s claimed by %s and %s", m.ID, prev, owner)
					}
					claimedBy[m.ID] = owner
				}
			}
			mu.Unlock()
		}
	})

	failures := 0
	for id, ok := range created {
		_, err := s.MessageGet(ctx, "a", id)
		switch {
		case ok && err != nil:
			t.Errorf("message %s reported created, then MessageGet: %v", id, err)
		case !ok && !errors.Is(err, messaging.ErrNotFound):
			t.Errorf("message %s reported failed but is stored (MessageGet: %v)", id, err)
		}
		if !ok {
			failures++
		}
	}
	for id, ok := range contacts {
		_, err := s.ContactGet(ctx, "a", id)
		switch {
		case ok && err != nil:
			t.Errorf("contact %s reported created, then ContactGet: %v", id, err)
		case !ok && !errors.Is(err, messaging.ErrNotFound):
			t.Errorf("contact %s reported failed but is stored (ContactGet: %v)", id, err)
		}
	}
	for id, ok := range updated {
		m, err := s.MessageGet(ctx, "a", id)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "sent", false: "queued"}[ok]; m.Status != want {
			t.Errorf("message %s: status update reported done=%v, stored status %q", id, ok, m.Status)
		}
	}
	owners := map[string]bool{}
	for _, o := range claimOwners {
		owners[o] = true
	}
	for i := range claimable {
		id := fmt.Sprintf("msg_c%d", i)
		m, err := s.MessageGet(ctx, "a", id)
		if err != nil {
			t.Fatal(err)
		}
		if m.LeaseOwner != claimedBy[id] {
			t.Errorf("message %s: reported claimed by %q, stored lease owner %q", id, claimedBy[id], m.LeaseOwner)
		}
		wantAttempts := 0
		if claimedBy[id] != "" {
			wantAttempts = 1
		}
		if m.Attempts != wantAttempts {
			t.Errorf("message %s: %d attempts stored, want %d (claimed by %q)", id, m.Attempts, wantAttempts, claimedBy[id])
		}
	}
	t.Logf("%d message creates reported failed", failures)
}

func testSMSCancellationTruth(t *testing.T, s sms.Store) {
	ctx := context.Background()
	const accounts = 4
	opening := sms.Credits(100000)
	for a := range accounts {
		smsAccount(t, s, fmt.Sprintf("p%d", a), opening)
	}
	seed := cancelSeed(t)

	type accepted struct {
		partner string
		number  int64
		cost    sms.Credit
	}
	var mu sync.Mutex
	var stored []accepted
	runWriters(seed, func(rng *rand.Rand, w, i int) {
		c, cancel := maybeCancel(rng)
		defer cancel()
		var msgs []*sms.Message
		for k := range 1 + rng.IntN(3) {
			p := fmt.Sprintf("p%d", rng.IntN(accounts))
			m := smsMessage(fmt.Sprintf("sms_%d_%d_%d", w, i, k), p, sms.Credit(1+rng.IntN(500)), sms.StatusQueued, at(0))
			msgs = append(msgs, m)
		}
		res, err := s.SMSAccept(c, msgs)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for k, r := range res {
			if r.Err == nil {
				stored = append(stored, accepted{msgs[k].PartnerID, r.Number, msgs[k].Cost})
			}
		}
	})

	// Credit: the opening credit is the credit plus the cost of every
	// message reported stored.
	cost := map[string]sms.Credit{}
	want := map[string][]int64{}
	for _, a := range stored {
		cost[a.partner] += a.cost
		want[a.partner] = append(want[a.partner], a.number)
		m, err := s.SMSMessageGet(ctx, a.partner, a.number)
		if err != nil {
			t.Errorf("SMS %d of %s reported stored, then SMSMessageGet: %v", a.number, a.partner, err)
		} else if m.Cost != a.cost {
			t.Errorf("SMS %d of %s: cost %v stored, %v accepted", a.number, a.partner, m.Cost, a.cost)
		}
	}
	for a := range accounts {
		p := fmt.Sprintf("p%d", a)
		if got := smsCredit(t, s, p); got+cost[p] != opening {
			t.Errorf("account %s: credit %v + cost of stored messages %v = %v, want the opening credit %v",
				p, got, cost[p], got+cost[p], opening)
		}
	}
	// Every stored message is one reported stored: claiming everything due
	// finds exactly those.
	all, err := s.SMSClaimDue(ctx, &sms.ClaimParams{Now: at(10), LeaseUntil: at(3600), Token: "audit", Limit: cancelWriters * cancelOps * 3})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, m := range all {
		got[m.PartnerID] = append(got[m.PartnerID], m.Number)
	}
	for _, ns := range [](map[string][]int64){got, want} {
		for _, v := range ns {
			sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stored messages against those reported stored (-reported +stored):\n%s", d)
	}
}
