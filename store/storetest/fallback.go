package storetest

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// fallbackMessage is a queued template send of ws with an SMS fallback
// pending until due.
func fallbackMessage(ws, id string, due time.Time) *messaging.Message {
	m := queuedMessage(ws, id, at(0))
	m.Type, m.TemplateName, m.Language = record.TypeTemplate, "hello", "en"
	m.Fallback = &record.SMSFallback{Text: "Your code is 1234", PartnerID: "1234", Shortcode: "ACME", After: due.Sub(at(0)),
		Status: record.SMSFallbackPending, DueAt: due, UpdatedAt: at(0)}
	return m
}

// testMessageFallbacks: a message's fallback is stored with it, claimed
// once due (or at once by its id) by one claimer at a time, and settled
// only by the holder of its lease.
func testMessageFallbacks(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	for _, m := range []*messaging.Message{
		fallbackMessage("a", "msg_1", at(60)),
		fallbackMessage("a", "msg_2", at(30)),
		fallbackMessage("b", "msg_3", at(600)),
		queuedMessage("a", "msg_plain", at(0)),
	} {
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.MessageFallbacks(ctx, "a", []string{"msg_1", "msg_2", "msg_3", "msg_plain"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*record.SMSFallback{"msg_1": fallbackMessage("a", "msg_1", at(60)).Fallback, "msg_2": fallbackMessage("a", "msg_2", at(30)).Fallback}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("MessageFallbacks of a (-want +got):\n%s", d)
	}
	if m, err := s.MessageGet(ctx, "a", "msg_1"); err != nil || m.Fallback != nil {
		t.Fatalf("MessageGet = %+v, %v; want no Fallback (read apart)", m, err)
	}

	claim := func(owner string, now time.Time, ws, id string) []string {
		t.Helper()
		cs, err := s.MessageFallbackClaim(ctx, &driver.MessageFallbackClaimParams{Now: now, Owner: owner, LeaseUntil: now.Add(time.Minute), Limit: 10,
			WorkspaceID: ws, MessageID: id})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range cs {
			if c.Fallback.LeaseOwner != owner || !c.Fallback.DueAt.Equal(now.Add(time.Minute)) || c.Fallback.Text != "Your code is 1234" {
				t.Fatalf("claimed %s: %+v", c.MessageID, c.Fallback)
			}
			ids = append(ids, c.WorkspaceID+"/"+c.MessageID)
		}
		sort.Strings(ids) // which were claimed matters, not their order
		return ids
	}
	if ids := claim("w1", at(29), "", ""); ids != nil {
		t.Fatalf("claimed %v before any was due", ids)
	}
	if d := cmp.Diff([]string{"a/msg_1", "a/msg_2"}, claim("w1", at(60), "", "")); d != "" {
		t.Fatalf("claim of the due fallbacks (-want +got):\n%s", d)
	}
	if ids := claim("w2", at(61), "", ""); ids != nil {
		t.Fatalf("claimed %v under another's lease", ids)
	}
	// By id: at once, not due yet; not while another holds it; not in
	// another workspace.
	if ids := claim("w2", at(61), "a", "msg_3"); ids != nil {
		t.Fatalf("claimed %v of another workspace", ids)
	}
	if ids := claim("w2", at(61), "a", "msg_1"); ids != nil {
		t.Fatalf("claimed %v under w1's lease", ids)
	}
	if d := cmp.Diff([]string{"b/msg_3"}, claim("w2", at(61), "b", "msg_3")); d != "" {
		t.Fatalf("claim by id (-want +got):\n%s", d)
	}
	// Settled only by the lease's holder, once.
	settle := func(owner, ws, id, status string) bool {
		t.Helper()
		ok, err := s.MessageFallbackSettle(ctx, &driver.MessageFallbackSettleParams{WorkspaceID: ws, MessageID: id, Owner: owner, Status: status,
			Reason: "r", SMSMessageID: "sms_1", SMSProviderMessageID: "7", At: at(70)})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if settle("w2", "a", "msg_1", record.SMSFallbackQueued) {
		t.Fatal("settled by a claimer that does not hold the lease")
	}
	if !settle("w1", "a", "msg_1", record.SMSFallbackQueued) || settle("w1", "a", "msg_1", record.SMSFallbackFailed) {
		t.Fatal("settle by the holder: want true once, then false")
	}
	// An expired lease is taken over.
	if d := cmp.Diff([]string{"a/msg_2"}, claim("w3", at(120), "", "")); d != "" {
		t.Fatalf("claim after the lease (-want +got):\n%s", d)
	}
	if settle("w1", "a", "msg_2", record.SMSFallbackSkipped) {
		t.Fatal("settled by the holder of an expired lease taken over")
	}
	got, err = s.MessageFallbacks(ctx, "a", []string{"msg_1"})
	if err != nil {
		t.Fatal(err)
	}
	wantSettled := &record.SMSFallback{Text: "Your code is 1234", PartnerID: "1234", Shortcode: "ACME", After: time.Minute,
		Status: record.SMSFallbackQueued, Reason: "r", SMSMessageID: "sms_1", SMSProviderMessageID: "7", UpdatedAt: at(70)}
	if d := cmp.Diff(wantSettled, got["msg_1"]); d != "" {
		t.Fatalf("settled fallback (-want +got):\n%s", d)
	}
	if ids := claim("w4", at(10_000), "a", "msg_1"); ids != nil {
		t.Fatalf("claimed a settled fallback: %v", ids)
	}
}

// testMessageFallbackClaimConcurrent: concurrent claimers never both get
// one fallback.
func testMessageFallbackClaimConcurrent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	const n = 20
	for i := range n {
		if _, _, err := s.MessageCreate(ctx, fallbackMessage("a", "msg_"+string(rune('a'+i)), at(1))); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				cs, err := s.MessageFallbackClaim(ctx, &driver.MessageFallbackClaimParams{Now: at(2), Owner: "w" + string(rune('0'+w)), LeaseUntil: at(100), Limit: 3})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, c := range cs {
					seen[c.MessageID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("claimed %d fallbacks, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("%s claimed %d times", id, k)
		}
	}
}

// testWorkspaceSMSAccounts: links are set, unset, listed sorted, and
// refused for a workspace that does not exist.
func testWorkspaceSMSAccounts(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	set := func(ws, partner string, linked bool) (bool, error) {
		return s.WorkspaceSMSAccountSet(ctx, &driver.WorkspaceSMSAccountParams{WorkspaceID: ws, PartnerID: partner, Linked: linked, At: at(1)})
	}
	for _, c := range []struct {
		partner     string
		linked, chg bool
	}{{"5678", true, true}, {"1234", true, true}, {"1234", true, false}, {"5678", false, true}, {"5678", false, false}, {"9", true, true}} {
		if chg, err := set("a", c.partner, c.linked); err != nil || chg != c.chg {
			t.Fatalf("set(%s, %v) = %v, %v; want %v", c.partner, c.linked, chg, err, c.chg)
		}
	}
	if _, err := set("nope", "1234", true); !errors.Is(err, messaging.ErrNotFound) {
		t.Fatalf("linking to a missing workspace: %v, want ErrNotFound", err)
	}
	got, err := s.WorkspaceSMSAccounts(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"1234", "9"}, got); d != "" {
		t.Fatalf("WorkspaceSMSAccounts (-want +got):\n%s", d)
	}
	if got, err := s.WorkspaceSMSAccounts(ctx, "nope"); err != nil || len(got) != 0 {
		t.Fatalf("accounts of a missing workspace = %v, %v", got, err)
	}
}
