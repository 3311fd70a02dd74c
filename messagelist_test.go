package messaging_test

import (
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// TestMessagesListPaging: the cursor walks every message once, newest
// first, and a message sent after the first page never shows on a later
// one; other workspaces' messages are never listed.
func TestMessagesListPaging(t *testing.T) {
	f := setup(t)
	var want []string // newest first
	for range 7 {
		res := f.mustSend(t, f.acme, textMsg("+254712345678"))
		want = append([]string{res.MessageID}, want...)
		f.clock.Advance(time.Millisecond)
	}
	f.mustSend(t, f.other, textMsg("+254712345678"))
	var got []string
	q := &messaging.MessageQuery{Limit: 3}
	for page := 0; ; page++ {
		p, err := f.acme.Messages.List(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Items {
			got = append(got, m.ID)
		}
		if page == 0 { // a message sent while paging is newer than every page
			f.mustSend(t, f.acme, textMsg("+254712345678"))
		}
		if p.NextCursor == "" {
			break
		}
		if len(p.Items) != 3 {
			t.Fatalf("page %d has %d items and a next cursor; want 3", page, len(p.Items))
		}
		q.Cursor = p.NextCursor
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("listed ids (-want +got):\n%s", d)
	}
}

// TestMessagesListFilters: each filter reaches the store, and the last
// page has no cursor.
func TestMessagesListFilters(t *testing.T) {
	f := setup(t)
	wa := f.mustSend(t, f.acme, textMsg("+254712345678"))
	f.clock.Advance(time.Second)
	ms := f.mustSend(t, f.acme, &messaging.SendParams{Channel: "messenger", To: "1234567890", Type: "text", Text: "hi"})
	f.clock.Advance(time.Second)
	// The same recipient id on another channel is another conversation.
	ig := f.mustSend(t, f.acme, &messaging.SendParams{Channel: "instagram", To: "1234567890", Type: "text", Text: "hi"})
	cases := []struct {
		name string
		q    messaging.MessageQuery
		want []string
	}{
		{"none", messaging.MessageQuery{}, []string{ig.MessageID, ms.MessageID, wa.MessageID}},
		{"channel", messaging.MessageQuery{Channel: "whatsapp"}, []string{wa.MessageID}},
		{"to", messaging.MessageQuery{To: "1234567890"}, []string{ig.MessageID, ms.MessageID}},
		{"to on a channel", messaging.MessageQuery{To: "1234567890", Channel: "messenger"}, []string{ms.MessageID}},
		{"to and its conversation", messaging.MessageQuery{To: "1234567890", ConversationID: ig.ConversationID}, []string{ig.MessageID}},
		{"to and another's conversation", messaging.MessageQuery{To: "1234567890", ConversationID: wa.ConversationID}, nil},
		{"to, whatsapp", messaging.MessageQuery{To: "+254712345678"}, []string{wa.MessageID}},
		{"status", messaging.MessageQuery{Status: "sent"}, nil},
		{"direction", messaging.MessageQuery{Direction: "inbound"}, nil},
		{"created_before", messaging.MessageQuery{CreatedBefore: t0.Add(time.Second)}, []string{wa.MessageID}},
		{"created_after", messaging.MessageQuery{CreatedAfter: t0.Add(time.Second)}, []string{ig.MessageID, ms.MessageID}},
	}
	for _, tc := range cases {
		p, err := f.acme.Messages.List(f.ctx, &tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, m := range p.Items {
			got = append(got, m.ID)
		}
		if d := cmp.Diff(tc.want, got); d != "" || p.NextCursor != "" {
			t.Errorf("%s: ids (-want +got):\n%s next=%q", tc.name, d, p.NextCursor)
		}
	}
}

// TestMessagesListRefusesBadQueries: every bad filter names its field.
func TestMessagesListRefusesBadQueries(t *testing.T) {
	f := setup(t)
	cases := []struct {
		q     messaging.MessageQuery
		field string
	}{
		{messaging.MessageQuery{Limit: 101}, "limit"},
		{messaging.MessageQuery{Limit: -1}, "limit"},
		{messaging.MessageQuery{Direction: "sideways"}, "direction"},
		{messaging.MessageQuery{Status: "lost"}, "status"},
		{messaging.MessageQuery{Channel: "sms"}, "channel"},
		{messaging.MessageQuery{Cursor: "bm90IGEgY3Vyc29y"}, "cursor"},
		{messaging.MessageQuery{Cursor: "%%%"}, "cursor"},
		{messaging.MessageQuery{To: runes('1', 257)}, "to"},
		{messaging.MessageQuery{CreatedAfter: t0, CreatedBefore: t0}, "created_before"},
	}
	for _, tc := range cases {
		_, err := f.acme.Messages.List(f.ctx, &tc.q)
		wantError(t, err, messaging.CodeValidation, tc.field)
	}
}

// TestMessageHistoryAndHourlyCounts: the service's status changes land in
// History, and HourlyCounts counts by creation hour and current status.
func TestMessageHistoryAndHourlyCounts(t *testing.T) {
	f := setup(t)
	res := f.mustSend(t, f.acme, textMsg("+254712345678"))
	f.clock.Advance(2 * time.Second)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]record.StatusChange{{Status: "sent", At: f.clock.Now()}}, m.History); d != "" {
		t.Errorf("History after dispatch (-want +got):\n%s", d)
	}
	counts, err := f.acme.Messages.HourlyCounts(f.ctx, t0.Add(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := []*record.MessageCount{{Hour: t0.Truncate(time.Hour), Status: "sent", Count: 1}}
	if d := cmp.Diff(want, counts); d != "" {
		t.Errorf("HourlyCounts (-want +got):\n%s", d)
	}
}
