package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging"
)

// testConversationList: MessageCreate keeps the conversations; they are
// listed by last activity then id, each with its newest message and the
// time of its newest inbound message (a message created out of order
// never moves either back), by id, after a cursor, and never another
// workspace's.
func testConversationList(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	type msg struct {
		ws, id, conv, dir string
		sec               int
	}
	for _, m := range []msg{
		{"a", "msg_01", "conv_1", "outbound", 1},
		{"a", "msg_02", "conv_1", "inbound", 2},
		{"a", "msg_03", "conv_2", "inbound", 3},
		{"a", "msg_04", "conv_1", "outbound", 4},
		{"a", "msg_05", "conv_3", "outbound", 4}, // same time as conv_1's last: id breaks the tie
		{"a", "msg_06", "conv_2", "inbound", 2},  // created out of order: not the last, not the last inbound
		{"b", "msg_07", "conv_9", "inbound", 9},
		{"a", "msg_08", "conv_2", "outbound", 3}, // same time as msg_03: the larger id is the last
	} {
		rec := message(m.ws, m.id, "", "")
		rec.ConversationID, rec.Direction, rec.To = m.conv, m.dir, "+2547000000"+m.conv[5:]
		rec.CreatedAt, rec.UpdatedAt = at(m.sec), at(m.sec)
		if _, _, err := s.MessageCreate(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	// A repeated idempotency key inserts nothing and changes no
	// conversation.
	dup := message("a", "msg_99", "key", "h")
	dup.ConversationID, dup.CreatedAt = "conv_4", at(20)
	if _, _, err := s.MessageCreate(ctx, dup); err != nil {
		t.Fatal(err)
	}
	again := message("a", "msg_98", "key", "h")
	again.ConversationID, again.CreatedAt = "conv_1", at(30)
	if _, created, err := s.MessageCreate(ctx, again); err != nil || created {
		t.Fatalf("repeated key: created %v, err %v", created, err)
	}

	type row struct {
		ID, To, Last string
		LastAt       time.Time
		InboundAt    time.Time
	}
	rows := func(list []*messaging.Conversation) []row {
		var out []row
		for _, c := range list {
			if c.WorkspaceID != "a" || c.Channel != "whatsapp" || c.LastMessage.ConversationID != c.ID {
				t.Errorf("conversation %s: workspace %q channel %q last message's conversation %q", c.ID, c.WorkspaceID, c.Channel, c.LastMessage.ConversationID)
			}
			out = append(out, row{c.ID, c.To, c.LastMessage.ID, c.LastMessageAt, c.LastInboundAt})
		}
		return out
	}
	all := []row{
		{"conv_4", "+2547000000", "msg_99", at(20), time.Time{}},
		{"conv_3", "+25470000003", "msg_05", at(4), time.Time{}},
		{"conv_1", "+25470000001", "msg_04", at(4), at(2)},
		{"conv_2", "+25470000002", "msg_08", at(3), at(3)},
	}
	all[0].To = "+254712345678"
	got, err := s.ConversationList(ctx, &driver.ConversationListParams{WorkspaceID: "a", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(all, rows(got)); d != "" {
		t.Errorf("ConversationList (-want +got):\n%s", d)
	}
	if len(got) > 0 && got[0].LastMessage.Text != dup.Text {
		t.Errorf("last message not read whole: %+v", got[0].LastMessage)
	}
	for i := range all {
		got, err := s.ConversationList(ctx, &driver.ConversationListParams{WorkspaceID: "a", BeforeAt: all[i].LastAt, BeforeID: all[i].ID, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := all[i+1 : min(i+3, len(all))]
		if d := cmp.Diff(want, rows(got), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("after %s (-want +got):\n%s", all[i].ID, d)
		}
	}
	one, err := s.ConversationList(ctx, &driver.ConversationListParams{WorkspaceID: "a", ID: "conv_1", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(all[2:3], rows(one)); d != "" {
		t.Errorf("by id (-want +got):\n%s", d)
	}
	for _, p := range []driver.ConversationListParams{{WorkspaceID: "a", ID: "conv_9", Limit: 1}, {WorkspaceID: "c", Limit: 5}} {
		got, err := s.ConversationList(ctx, &p)
		if err != nil || len(got) != 0 {
			t.Errorf("ConversationList(%+v) = %d conversations, %v; want none", p, len(got), err)
		}
	}
	// Many conversations: the limit holds.
	for i := range 5 {
		rec := message("b", fmt.Sprintf("msg_b%d", i), "", "")
		rec.ConversationID = fmt.Sprintf("conv_b%d", i)
		if _, _, err := s.MessageCreate(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.ConversationList(ctx, &driver.ConversationListParams{WorkspaceID: "b", Limit: 3}); err != nil || len(got) != 3 {
		t.Errorf("limit 3: %d conversations, %v", len(got), err)
	}
}

// testContactsByPhone: exact phones of the workspace only.
func testContactsByPhone(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	for i, c := range []struct{ ws, id, phone, email string }{
		{"a", "ct_1", "+254700000001", ""},
		{"a", "ct_2", "+254700000002", ""},
		{"a", "ct_3", "", "x@example.com"},
		{"b", "ct_4", "+254700000003", ""},
	} {
		err := s.ContactCreate(ctx, &messaging.Contact{ID: c.id, WorkspaceID: c.ws, FirstName: "C", FullName: "C", Phone: c.phone,
			Email: c.email, EmailKey: c.email, Tags: []string{}, Version: 1, CreatedAt: at(i), UpdatedAt: at(i)})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ContactsByPhone(ctx, &driver.ContactsByPhoneParams{WorkspaceID: "a", Phones: []string{"+254700000002", "+254700000003", "+25470000000", ""}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "ct_2" {
		t.Errorf("ContactsByPhone = %v, want ct_2 only", got)
	}
}
