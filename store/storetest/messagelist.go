package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testMessageHistory: every status change is appended to History with its
// time, a refused change appends nothing, and a new message has none.
func testMessageHistory(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	m := message("a", "msg_1", "", "")
	m.History = []record.StatusChange{{Status: "bogus", At: at(0)}}
	stored, _, err := s.MessageCreate(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if stored.History != nil {
		t.Errorf("MessageCreate stored History %v; want none", stored.History)
	}
	steps := []struct {
		from []string
		to   string
		at   time.Time
	}{
		{[]string{"queued"}, "sent", at(5)},
		{[]string{"queued"}, "failed", at(6)}, // refused: not queued
		{[]string{"sent"}, "delivered", at(7)},
		{[]string{"sent", "delivered"}, "read", at(8)},
	}
	var after *messaging.Message
	for _, st := range steps {
		a, _, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_1", From: st.from, To: st.to, At: st.at})
		if err != nil {
			t.Fatal(err)
		}
		after = a
	}
	want := []record.StatusChange{{Status: "sent", At: at(5)}, {Status: "delivered", At: at(7)}, {Status: "read", At: at(8)}}
	if d := cmp.Diff(want, after.History); d != "" {
		t.Errorf("History returned by the last update (-want +got):\n%s", d)
	}
	got, err := s.MessageGet(ctx, "a", "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got.History); d != "" {
		t.Errorf("History read back (-want +got):\n%s", d)
	}
}

// testMessageList: newest first by (CreatedAt, ID), every filter, the
// cursor, the limit, and other workspaces never listed.
func testMessageList(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	var all []*messaging.Message // newest first
	for i := range 12 {
		m := message("a", fmt.Sprintf("msg_%02d", i), "", "")
		m.Components, m.Type, m.TemplateName, m.Language, m.Text = nil, "text", "", "", fmt.Sprint("hello ", i)
		m.CreatedAt = at(i / 2) // pairs share a time: ID breaks the tie
		m.UpdatedAt = m.CreatedAt
		if i%3 == 0 {
			m.Channel, m.To, m.ConversationID = "messenger", "psid-1", "conv_m"
		}
		if i%4 == 0 {
			m.Direction = "inbound"
		}
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
		all = append([]*messaging.Message{m}, all...)
	}
	other := message("b", "msg_b", "", "")
	if _, _, err := s.MessageCreate(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_05", From: []string{"queued"}, To: "sent", At: at(9)}); err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if m.ID == "msg_05" {
			m.Status, m.UpdatedAt, m.History = "sent", at(9), []record.StatusChange{{Status: "sent", At: at(9)}}
		}
	}
	keep := func(f func(*messaging.Message) bool) []*messaging.Message {
		var out []*messaging.Message
		for _, m := range all {
			if f(m) {
				out = append(out, m)
			}
		}
		return out
	}
	list := func(p driver.MessageListParams) []*messaging.Message {
		t.Helper()
		p.WorkspaceID = "a"
		if p.Limit == 0 {
			p.Limit = 100
		}
		got, err := s.MessageList(ctx, &p)
		if err != nil {
			t.Fatalf("MessageList(%+v): %v", p, err)
		}
		return got
	}
	cases := []struct {
		name string
		p    driver.MessageListParams
		want []*messaging.Message
	}{
		{"all", driver.MessageListParams{}, all},
		{"limit", driver.MessageListParams{Limit: 3}, all[:3]},
		{"direction", driver.MessageListParams{Direction: "inbound"}, keep(func(m *messaging.Message) bool { return m.Direction == "inbound" })},
		{"status", driver.MessageListParams{Status: "sent"}, keep(func(m *messaging.Message) bool { return m.Status == "sent" })},
		{"channel", driver.MessageListParams{Channel: "messenger"}, keep(func(m *messaging.Message) bool { return m.Channel == "messenger" })},
		{"to", driver.MessageListParams{To: "+254712345678"}, keep(func(m *messaging.Message) bool { return m.To == "+254712345678" })},
		{"conversation", driver.MessageListParams{ConversationID: "conv_m"}, keep(func(m *messaging.Message) bool { return m.ConversationID == "conv_m" })},
		{"created after (inclusive)", driver.MessageListParams{CreatedAfter: at(4)}, keep(func(m *messaging.Message) bool { return !m.CreatedAt.Before(at(4)) })},
		{"created before (exclusive)", driver.MessageListParams{CreatedBefore: at(2)}, keep(func(m *messaging.Message) bool { return m.CreatedAt.Before(at(2)) })},
		{"filters combine", driver.MessageListParams{Channel: "whatsapp", Direction: "inbound"},
			keep(func(m *messaging.Message) bool { return m.Channel == "whatsapp" && m.Direction == "inbound" })},
		{"cursor inside a tie", driver.MessageListParams{BeforeCreatedAt: all[2].CreatedAt, BeforeID: all[2].ID}, all[3:]},
		{"cursor with filter", driver.MessageListParams{Channel: "whatsapp", BeforeCreatedAt: all[0].CreatedAt, BeforeID: all[0].ID},
			keep(func(m *messaging.Message) bool { return m.Channel == "whatsapp" && m.ID != all[0].ID })},
		{"no match", driver.MessageListParams{To: "+1"}, nil},
		{"conversations", driver.MessageListParams{ConversationIDs: []string{"conv_m", "conv_a"}}, all},
		{"conversations, merged under a limit", driver.MessageListParams{ConversationIDs: []string{"conv_a", "conv_m"}, Limit: 5}, all[:5]},
		{"conversations, one unknown", driver.MessageListParams{ConversationIDs: []string{"conv_none", "conv_m"}},
			keep(func(m *messaging.Message) bool { return m.ConversationID == "conv_m" })},
		{"conversations, repeated", driver.MessageListParams{ConversationIDs: []string{"conv_m", "conv_m"}},
			keep(func(m *messaging.Message) bool { return m.ConversationID == "conv_m" })},
		{"conversations and to", driver.MessageListParams{To: "psid-1", ConversationIDs: []string{"conv_a", "conv_m"}},
			keep(func(m *messaging.Message) bool { return m.To == "psid-1" })},
		{"conversations and filter", driver.MessageListParams{Direction: "inbound", ConversationIDs: []string{"conv_a", "conv_m"}},
			keep(func(m *messaging.Message) bool { return m.Direction == "inbound" })},
		{"conversations with cursor", driver.MessageListParams{ConversationIDs: []string{"conv_a", "conv_m"}, BeforeCreatedAt: all[2].CreatedAt, BeforeID: all[2].ID}, all[3:]},
		{"conversation among conversations", driver.MessageListParams{ConversationID: "conv_m", ConversationIDs: []string{"conv_a", "conv_m"}},
			keep(func(m *messaging.Message) bool { return m.ConversationID == "conv_m" })},
		{"conversation not among conversations", driver.MessageListParams{ConversationID: "conv_m", ConversationIDs: []string{"conv_a"}}, nil},
	}
	for _, tc := range cases {
		if d := cmp.Diff(tc.want, list(tc.p)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	// Paging through with the cursor visits every message once, in order.
	var paged []*messaging.Message
	p := driver.MessageListParams{Limit: 5}
	for range 10 {
		page := list(p)
		paged = append(paged, page...)
		if len(page) < p.Limit {
			break
		}
		last := page[len(page)-1]
		p.BeforeCreatedAt, p.BeforeID = last.CreatedAt, last.ID
	}
	if d := cmp.Diff(all, paged); d != "" {
		t.Errorf("paged listing (-want +got):\n%s", d)
	}
	if got, err := s.MessageList(ctx, &driver.MessageListParams{WorkspaceID: "b", Limit: 10}); err != nil || len(got) != 1 || got[0].ID != "msg_b" {
		t.Errorf("workspace b lists %v, %v; want only msg_b", got, err)
	}
}

// testMessageHourlyCounts: counts by creation hour and current status,
// from Since on, ordered by hour then status, per workspace.
func testMessageHourlyCounts(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	h0 := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	create := func(ws, id string, created time.Time, status string) {
		t.Helper()
		m := message(ws, id, "", "")
		m.CreatedAt, m.UpdatedAt = created, created
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
		if status != "queued" {
			if _, _, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: ws, ID: id, From: []string{"queued"}, To: status, At: created}); err != nil {
				t.Fatal(err)
			}
		}
	}
	create("a", "msg_old", h0.Add(-time.Nanosecond), "queued") // before Since
	create("a", "msg_1", h0, "queued")
	create("a", "msg_2", h0.Add(59*time.Minute+59*time.Second), "sent")
	create("a", "msg_3", h0.Add(30*time.Minute), "queued")
	create("a", "msg_4", h0.Add(2*time.Hour+time.Second), "failed")
	create("b", "msg_b", h0.Add(time.Minute), "queued")
	got, err := s.MessageHourlyCounts(ctx, &driver.MessageCountParams{WorkspaceID: "a", Since: h0})
	if err != nil {
		t.Fatal(err)
	}
	want := []*record.MessageCount{
		{Hour: h0, Status: "queued", Count: 2},
		{Hour: h0, Status: "sent", Count: 1},
		{Hour: h0.Add(2 * time.Hour), Status: "failed", Count: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("MessageHourlyCounts (-want +got):\n%s", d)
	}
}
