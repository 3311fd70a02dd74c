package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// report is a pending report of id received at at(sec).
func report(id, status string, sec int) *driver.PendingReport {
	r := &driver.PendingReport{ProviderMessageID: id, Status: status, ReceivedAt: at(sec)}
	if status == messaging.StatusFailed {
		r.ProviderCode, r.ProviderText = "131026", "Message undeliverable"
	}
	return r
}

// save saves r with the given expiry and limit and returns whether it was
// kept.
func save(t *testing.T, s driver.Store, r *driver.PendingReport, notBefore, limit int) bool {
	t.Helper()
	kept, err := s.PendingReportSave(context.Background(), &driver.PendingReportSaveParams{Report: r, NotBefore: at(notBefore), Limit: limit})
	if err != nil {
		t.Fatalf("PendingReportSave(%s %s): %v", r.ProviderMessageID, r.Status, err)
	}
	return kept
}

// take takes the reports of id received at or after at(notBefore).
func take(t *testing.T, s driver.Store, id string, notBefore int) []*driver.PendingReport {
	t.Helper()
	return takeMany(t, s, []string{id}, notBefore)
}

// takeMany takes the reports of ids received at or after at(notBefore).
func takeMany(t *testing.T, s driver.Store, ids []string, notBefore int) []*driver.PendingReport {
	t.Helper()
	got, err := s.PendingReportTake(context.Background(), &driver.PendingReportTakeParams{ProviderMessageIDs: ids, NotBefore: at(notBefore)})
	if err != nil {
		t.Fatalf("PendingReportTake(%v): %v", ids, err)
	}
	return got
}

func testPendingReports(t *testing.T, s driver.Store) {
	a1, a2 := report("wamid.A", messaging.StatusSent, 1), report("wamid.A", messaging.StatusDelivered, 1)
	b1 := report("wamid.B", messaging.StatusRead, 2)
	a3 := report("wamid.A", messaging.StatusFailed, 3)
	var prev int64
	for _, r := range []*driver.PendingReport{a1, a2, b1, a3} {
		if !save(t, s, r, -100, 8) {
			t.Fatalf("report %s %s was not kept", r.ProviderMessageID, r.Status)
		}
		if r.Seq <= prev {
			t.Errorf("Seq of report %s %s = %d, want more than the previous %d", r.ProviderMessageID, r.Status, r.Seq, prev)
		}
		prev = r.Seq
	}
	// The reports of one id come back in the order they were saved (a1 and
	// a2 arrived at the same time), with their times exact.
	if d := cmp.Diff([]*driver.PendingReport{a1, a2, a3}, take(t, s, "wamid.A", -100)); d != "" {
		t.Errorf("take (-want +got):\n%s", d)
	}
	if got := take(t, s, "wamid.A", -100); len(got) != 0 {
		t.Errorf("a second take returned %d reports, want none", len(got))
	}
	if d := cmp.Diff([]*driver.PendingReport{b1}, take(t, s, "wamid.B", -100)); d != "" {
		t.Errorf("take of another id (-want +got):\n%s", d)
	}
	if got := take(t, s, "wamid.UNKNOWN", -100); len(got) != 0 {
		t.Errorf("take of an unknown id returned %d reports, want none", len(got))
	}

	// One take of several ids (a batch of status changes) returns the
	// reports of each, in Seq order across them, and leaves other ids'.
	x1, y1 := report("wamid.X", messaging.StatusSent, 4), report("wamid.Y", messaging.StatusRead, 4)
	x2, z1 := report("wamid.X", messaging.StatusDelivered, 5), report("wamid.Z", messaging.StatusRead, 5)
	for _, r := range []*driver.PendingReport{x1, y1, x2, z1} {
		save(t, s, r, -100, 8)
	}
	if d := cmp.Diff([]*driver.PendingReport{x1, y1, x2}, takeMany(t, s, []string{"wamid.Y", "wamid.UNKNOWN", "wamid.X"}, -100)); d != "" {
		t.Errorf("take of several ids (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]*driver.PendingReport{z1}, take(t, s, "wamid.Z", -100)); d != "" {
		t.Errorf("take of an id left out of the take of several (-want +got):\n%s", d)
	}
}

func testPendingReportExpiry(t *testing.T, s driver.Store) {
	// A take returns only the unexpired reports, and deletes the others.
	old, recent := report("wamid.E", messaging.StatusDelivered, 0), report("wamid.E", messaging.StatusRead, 100)
	save(t, s, old, -1000, 8)
	save(t, s, recent, -1000, 8)
	if d := cmp.Diff([]*driver.PendingReport{recent}, take(t, s, "wamid.E", 50)); d != "" {
		t.Errorf("take (-want +got):\n%s", d)
	}
	if got := take(t, s, "wamid.E", -1000); len(got) != 0 {
		t.Errorf("the expired report was not deleted by the take: %d left", len(got))
	}

	// A save deletes the expired reports of other ids.
	for i := range 3 {
		save(t, s, report("wamid.OLD", messaging.StatusDelivered, i), -1000, 8)
	}
	save(t, s, report("wamid.NEW", messaging.StatusDelivered, 1000), 500, 8)
	if got := take(t, s, "wamid.OLD", -1000); len(got) != 0 {
		t.Errorf("a save left %d expired reports of another id, want none", len(got))
	}

	// Deleting the expired report of an id keeps its unexpired ones.
	kept := report("wamid.TWO", messaging.StatusRead, 2100)
	save(t, s, report("wamid.TWO", messaging.StatusDelivered, 2000), -1000, 8)
	save(t, s, kept, -1000, 8)
	save(t, s, report("wamid.THREE", messaging.StatusDelivered, 2200), 2050, 8)
	if d := cmp.Diff([]*driver.PendingReport{kept}, take(t, s, "wamid.TWO", 2050)); d != "" {
		t.Errorf("take after a save deleted the id's expired report (-want +got):\n%s", d)
	}
}

func testPendingReportLimit(t *testing.T, s driver.Store) {
	const limit = 8
	var want []*driver.PendingReport
	for i := range limit {
		r := report("wamid.CAP", messaging.StatusDelivered, i)
		if !save(t, s, r, -100, limit) {
			t.Fatalf("report %d of %d was not kept", i+1, limit)
		}
		want = append(want, r)
	}
	over := report("wamid.CAP", messaging.StatusRead, limit)
	if save(t, s, over, -100, limit) {
		t.Errorf("report %d was kept, want at most %d per id", limit+1, limit)
	}
	if over.Seq != 0 {
		t.Errorf("a report not kept got Seq %d", over.Seq)
	}
	// Other ids have their own limit.
	other := report("wamid.OTHER", messaging.StatusRead, limit)
	if !save(t, s, other, -100, limit) {
		t.Error("the limit of one id refused a report of another")
	}
	if d := cmp.Diff(want, take(t, s, "wamid.CAP", -100)); d != "" {
		t.Errorf("take (-want +got):\n%s", d)
	}
	// Expired reports do not count.
	for i := range limit {
		save(t, s, report("wamid.CAP2", messaging.StatusDelivered, i), -100, limit)
	}
	late := report("wamid.CAP2", messaging.StatusRead, 200)
	if !save(t, s, late, 100, limit) {
		t.Error("expired reports counted towards the limit")
	}
	if d := cmp.Diff([]*driver.PendingReport{late}, take(t, s, "wamid.CAP2", 100)); d != "" {
		t.Errorf("take after expiry (-want +got):\n%s", d)
	}
}

func testPendingReportConcurrent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	// Concurrent takes never return the same report twice, and lose none.
	const n = 40
	for i := range n {
		save(t, s, report("wamid.C", messaging.StatusDelivered, i), -100, n)
	}
	var mu sync.Mutex
	var seqs []int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := s.PendingReportTake(ctx, &driver.PendingReportTakeParams{ProviderMessageIDs: []string{"wamid.C"}, NotBefore: at(-100)})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range got {
				seqs = append(seqs, r.Seq)
			}
		}()
	}
	wg.Wait()
	slices.Sort(seqs)
	if len(seqs) != n || len(slices.Compact(slices.Clone(seqs))) != n {
		t.Errorf("8 concurrent takes returned %d reports, %d distinct; want each of %d exactly once", len(seqs), len(slices.Compact(seqs)), n)
	}

	// Concurrent saves of one id keep no more than the limit.
	const limit = 5
	var kept sync.Map
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := report("wamid.D", messaging.StatusDelivered, i)
			ok, err := s.PendingReportSave(ctx, &driver.PendingReportSaveParams{Report: r, NotBefore: at(-100), Limit: limit})
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				kept.Store(fmt.Sprint(i), true)
			}
		}()
	}
	wg.Wait()
	nKept := 0
	kept.Range(func(any, any) bool { nKept++; return true })
	if got := len(take(t, s, "wamid.D", -100)); nKept != limit || got != limit {
		t.Errorf("16 concurrent saves with limit %d: %d reported kept, %d taken; want %d", limit, nKept, got, limit)
	}
}
