package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// richOutbound sets every member of an outbound content (a message has
// only those of its type; a store keeps them all).
func richOutbound() *record.OutboundContent {
	return &record.OutboundContent{
		Interactive: &record.Interactive{Type: record.InteractiveTypeList,
			Header: &record.InteractiveHeader{Type: "image", Text: "Menu <é>", MediaURL: "https://x.example/h.png", Filename: "h.png",
				Media: &record.MediaRef{ID: "med_h", ProviderMediaID: "pm_h", MimeType: "image/png"}},
			Body: "Pick one & go", Footer: "footer",
			Buttons: []record.InteractiveButton{{ID: "b1", Title: "Yes"}, {ID: "b2", Title: "No"}},
			List: &record.InteractiveList{Button: "Open", Sections: []record.ListSection{
				{Title: "S1", Rows: []record.ListRow{{ID: "r1", Title: "One", Description: "first"}, {ID: "r2", Title: "Two"}}},
				{Title: "S2", Rows: []record.ListRow{{ID: "r3", Title: "Three", Description: "third"}}},
			}},
			CTA: &record.CTAURL{DisplayText: "Visit", URL: "https://x.example/cta"}},
		Location: &record.Location{Latitude: -1.2921, Longitude: 36.8219, Name: "Nairobi", Address: "CBD", URL: "https://x.example/l"},
		Contacts: []record.SharedContact{{FormattedName: "Amina W", FirstName: "Amina", LastName: "W", Organization: "Acme",
			Phones: []record.ContactPhone{{Phone: "+254712345678", WaID: "254712345678", Type: "CELL"}, {Phone: "+254700000000"}},
			Emails: []record.ContactEmail{{Email: "a@example.com", Type: "WORK"}}}},
		Reaction: &record.Reaction{MessageID: "msg_0", ProviderMessageID: "wamid.0", Emoji: "👍"},
		Context:  &record.ReplyContext{MessageID: "msg_q", ProviderMessageID: "wamid.q"},
		Media:    &record.MediaRef{ID: "med_1", ProviderMediaID: "pm_1", MimeType: "image/jpeg"},
	}
}

// testOutboundContent: the rich content of an outbound message reads back
// as created, every member kept, through every read of a message:
// MessageCreate (and its idempotent replay), MessageGet,
// MessageGetByIdempotencyKey, MessageGetByProviderID, MessageList,
// ConversationList, MessageClaim and MessageUpdateStatuses. A message
// without it reads back with none, and no inbound content.
func testOutboundContent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	want := richOutbound()
	rich := message("a", "msg_1", "k1", "h1")
	rich.Type, rich.TemplateName, rich.Language, rich.Components = record.TypeInteractive, "", "", nil
	rich.Outbound = richOutbound()
	plain := message("a", "msg_2", "k2", "h2")
	plain.CreatedAt, plain.UpdatedAt = at(2), at(2)
	check := func(what string, m *messaging.Message) {
		t.Helper()
		wantOut := map[string]*record.OutboundContent{"msg_1": want}[m.ID]
		if d := cmp.Diff(wantOut, m.Outbound); d != "" {
			t.Errorf("%s %s: outbound content (-want +got):\n%s", what, m.ID, d)
		}
		if m.Content != nil {
			t.Errorf("%s %s: inbound content %+v; want none", what, m.ID, m.Content)
		}
	}
	for _, m := range []*messaging.Message{rich, plain} {
		got, created, err := s.MessageCreate(ctx, m)
		if err != nil || !created {
			t.Fatalf("MessageCreate %s: created %v, err %v", m.ID, created, err)
		}
		check("MessageCreate", got)
		// A request with the same key gets the stored message back.
		again := m.Clone()
		again.ID, again.Outbound = m.ID+"_again", nil
		replay, created, err := s.MessageCreate(ctx, again)
		if err != nil || created || replay.ID != m.ID {
			t.Fatalf("MessageCreate %s again: created %v, err %v", m.ID, created, err)
		}
		check("MessageCreate replay", replay)
		got, err = s.MessageGet(ctx, "a", m.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("MessageGet", got)
		got, err = s.MessageGetByIdempotencyKey(ctx, "a", m.IdempotencyKey)
		if err != nil {
			t.Fatal(err)
		}
		check("MessageGetByIdempotencyKey", got)
	}
	list, err := s.MessageList(ctx, &driver.MessageListParams{WorkspaceID: "a", Limit: 10})
	if err != nil || len(list) != 2 {
		t.Fatalf("MessageList: %d messages, %v", len(list), err)
	}
	for _, m := range list {
		check("MessageList", m)
	}
	claimed, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w", Now: at(10), Lease: time.Minute, Limit: 10})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("MessageClaim: %d messages, %v", len(claimed), err)
	}
	for _, m := range claimed {
		check("MessageClaim", m)
	}
	rs, err := s.MessageUpdateStatuses(ctx, []*driver.MessageStatusParams{{WorkspaceID: "a", ID: "msg_1",
		From: []string{messaging.StatusQueued}, To: messaging.StatusSent, ProviderMessageID: "wamid.1", At: at(11)}})
	if err != nil || len(rs) != 1 || rs[0].Err != nil || !rs[0].Changed {
		t.Fatalf("MessageUpdateStatuses: %+v, %v", rs, err)
	}
	check("MessageUpdateStatuses", rs[0].Message)
	got, err := s.MessageGetByProviderID(ctx, "wamid.1")
	if err != nil {
		t.Fatal(err)
	}
	check("MessageGetByProviderID", got)
	// The conversation's newest message is the rich one.
	rich2 := message("a", "msg_3", "k3", "h3")
	rich2.Type, rich2.TemplateName, rich2.Language, rich2.Components = record.TypeInteractive, "", "", nil
	rich2.CreatedAt, rich2.UpdatedAt, rich2.Outbound = at(3), at(3), richOutbound()
	if _, _, err := s.MessageCreate(ctx, rich2); err != nil {
		t.Fatal(err)
	}
	convs, err := s.ConversationList(ctx, &driver.ConversationListParams{WorkspaceID: "a", Limit: 10})
	if err != nil || len(convs) != 1 || convs[0].LastMessage == nil {
		t.Fatalf("ConversationList: %+v, %v", convs, err)
	}
	if d := cmp.Diff(want, convs[0].LastMessage.Outbound); d != "" {
		t.Errorf("ConversationList: outbound content (-want +got):\n%s", d)
	}
}

// testMessageMarkRead: the first mark sets ReadAt (to the nanosecond, in
// UTC) and later ones keep it; the mark changes nothing else of the message, nor
// any other message; a message that does not exist, or of another
// workspace, is not found, and is left alone.
func testMessageMarkRead(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	for _, id := range []string{"msg_1", "msg_2"} {
		m := message("a", id, "\x1finbound:whatsapp:"+id, "")
		m.Direction, m.Status, m.Type, m.Text, m.TemplateName, m.Language, m.Components = "inbound", "delivered", "text", "hi", "", "", nil
		m.Content = &messaging.InboundContent{Context: &messaging.ReplyContext{ProviderMessageID: "wamid.0"}}
		if _, created, err := s.MessageReceive(ctx, &driver.MessageReceiveParams{Message: m}); err != nil || !created {
			t.Fatalf("MessageReceive %s: created %v, err %v", id, created, err)
		}
	}
	before, err := s.MessageGet(ctx, "a", "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.MessageGet(ctx, "a", "msg_2")
	if err != nil {
		t.Fatal(err)
	}
	if before.ReadAt != nil {
		t.Fatalf("a new message has ReadAt %v", before.ReadAt)
	}
	_, err = s.MessageMarkRead(ctx, "b", "msg_1", at(4))
	wantErr(t, "MessageMarkRead of another workspace's message", err, messaging.ErrNotFound)
	_, err = s.MessageMarkRead(ctx, "a", "msg_none", at(4))
	wantErr(t, "MessageMarkRead of a missing message", err, messaging.ErrNotFound)
	if got, err := s.MessageGet(ctx, "a", "msg_1"); err != nil || !cmp.Equal(before, got) {
		t.Fatalf("after marks elsewhere: %v (-want +got):\n%s", err, cmp.Diff(before, got))
	}

	want := before.Clone()
	first := at(5)
	want.ReadAt = &first
	eat := time.FixedZone("EAT", 3*60*60)
	for i, mark := range []time.Time{at(5).In(eat), at(9), at(1)} {
		got, err := s.MessageMarkRead(ctx, "a", "msg_1", mark)
		if err != nil {
			t.Fatalf("mark %d: %v", i, err)
		}
		if got.ReadAt != nil && got.ReadAt.Location() != time.UTC {
			t.Errorf("mark %d: ReadAt %v; want it in UTC", i, got.ReadAt)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("mark %d at %v returned (-want +got):\n%s", i, mark, d)
		}
		if got, err = s.MessageGet(ctx, "a", "msg_1"); err != nil {
			t.Fatal(err)
		} else if d := cmp.Diff(want, got); d != "" {
			t.Errorf("MessageGet after mark %d (-want +got):\n%s", i, d)
		}
	}
	list, err := s.MessageList(ctx, &driver.MessageListParams{WorkspaceID: "a", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		w := map[string]*messaging.Message{"msg_1": want, "msg_2": other}[m.ID]
		if d := cmp.Diff(w, m); d != "" {
			t.Errorf("MessageList %s (-want +got):\n%s", m.ID, d)
		}
	}
}

// testMedia: an uploaded media record reads back as created, every field
// kept (its times in UTC), an expired one too; only its workspace finds it; a second record
// with its id, in any workspace, is a conflict that changes nothing.
func testMedia(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	m := &record.UploadedMedia{ID: "med_1", WorkspaceID: "a", Channel: "whatsapp", Purpose: record.MediaForMessages,
		Kind: record.MediaSticker, MimeType: "image/webp", Size: 5 << 30, Filename: "s <1>.webp", SHA256: "ab12",
		ProviderMediaID: "pm_1", Animated: true, CreatedAt: base.In(time.FixedZone("EAT", 3*60*60)), ExpiresAt: base.Add(-time.Nanosecond)}
	sample := &record.UploadedMedia{ID: "med_2", WorkspaceID: "b", Channel: "whatsapp", Purpose: record.MediaForTemplateSample,
		Kind: record.MediaDocument, MimeType: "application/pdf", Size: 1, SHA256: "cd34", ProviderMediaID: "4::handle",
		CreatedAt: at(1), ExpiresAt: at(1).Add(30 * 24 * time.Hour)}
	for _, x := range []*record.UploadedMedia{m, sample} {
		if err := s.MediaCreate(ctx, x); err != nil {
			t.Fatalf("MediaCreate %s: %v", x.ID, err)
		}
	}
	dup := *sample
	dup.ID, dup.ProviderMediaID = "med_1", "pm_other"
	wantErr(t, "MediaCreate of an existing id (another workspace)", s.MediaCreate(ctx, &dup), messaging.ErrConflict)
	dup.WorkspaceID = "a"
	wantErr(t, "MediaCreate of an existing id", s.MediaCreate(ctx, &dup), messaging.ErrConflict)
	for _, x := range []*record.UploadedMedia{m, sample} {
		got, err := s.MediaGet(ctx, x.WorkspaceID, x.ID)
		if err != nil {
			t.Fatalf("MediaGet %s: %v", x.ID, err)
		}
		if d := cmp.Diff(x, got); d != "" {
			t.Errorf("MediaGet %s (-want +got):\n%s", x.ID, d)
		}
		if got.CreatedAt.Location() != time.UTC || got.ExpiresAt.Location() != time.UTC {
			t.Errorf("MediaGet %s: times %v, %v; want them in UTC", x.ID, got.CreatedAt, got.ExpiresAt)
		}
	}
	_, err := s.MediaGet(ctx, "b", "med_1")
	wantErr(t, "MediaGet of another workspace's media", err, messaging.ErrNotFound)
	_, err = s.MediaGet(ctx, "a", "med_2")
	wantErr(t, "MediaGet of another workspace's media", err, messaging.ErrNotFound)
	_, err = s.MediaGet(ctx, "a", "med_none")
	wantErr(t, "MediaGet of a missing id", err, messaging.ErrNotFound)
}
