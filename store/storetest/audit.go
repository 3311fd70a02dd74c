package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testAuditEvents: events come back newest first, per workspace, paged by
// Seq, with every field as stored.
func testAuditEvents(t *testing.T, s driver.Store) {
	ctx := context.Background()
	var a []*messaging.AuditEvent
	var lastSeq int64
	for i := range 5 {
		ws := "a"
		if i == 2 {
			ws = "b"
		}
		e := &messaging.AuditEvent{ID: fmt.Sprintf("aud_%d", i), WorkspaceID: ws, Actor: "key_1", Action: record.AuditKeyCreated,
			Target: fmt.Sprintf("key_%d", i), At: at(i)}
		if err := s.AuditAppend(ctx, e); err != nil {
			t.Fatal(err)
		}
		if e.Seq <= lastSeq {
			t.Fatalf("event %d got Seq %d after %d; want it to grow", i, e.Seq, lastSeq)
		}
		lastSeq = e.Seq
		if ws == "a" {
			a = append([]*messaging.AuditEvent{e}, a...) // newest first
		}
	}
	page1, err := s.AuditList(ctx, &driver.AuditListParams{WorkspaceID: "a", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a[:3], page1); d != "" {
		t.Errorf("first page (-want +got):\n%s", d)
	}
	page2, err := s.AuditList(ctx, &driver.AuditListParams{WorkspaceID: "a", Before: page1[2].Seq, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a[3:], page2); d != "" {
		t.Errorf("second page (-want +got):\n%s", d)
	}
	b, err := s.AuditList(ctx, &driver.AuditListParams{WorkspaceID: "b", Limit: 10})
	if err != nil || len(b) != 1 || b[0].ID != "aud_2" {
		t.Errorf("workspace b's events = %v, %v; want only aud_2", b, err)
	}
	if none, err := s.AuditList(ctx, &driver.AuditListParams{WorkspaceID: "c", Limit: 10}); err != nil || len(none) != 0 {
		t.Errorf("workspace c's events = %v, %v; want none", none, err)
	}
}
