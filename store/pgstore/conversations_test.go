package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

// TestConversationsBackfill: the statement of migration 0014 that fills
// the conversations of messages stored before it builds the same rows as
// the trigger that keeps them afterwards.
func TestConversationsBackfill(t *testing.T) {
	ctx := context.Background()
	url := testURL(t)
	schema := newSchema(t, url)
	s := open(t, url, schema, 0)
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", Name: "a", Channels: []string{}, CreatedAt: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for i, sec := range []int{5, 1, 9, 9, 3, 7, 2, 8, 4, 6, 0, 9} {
		dir := "outbound"
		if i%3 == 0 {
			dir = "inbound"
		}
		conv := fmt.Sprintf("conv_%d", i%4)
		at := base.Add(time.Duration(sec) * time.Second)
		m := &messaging.Message{ID: fmt.Sprintf("msg_%02d", i), WorkspaceID: "a", ConversationID: conv, Channel: "whatsapp",
			To: "+25470000000" + conv[5:], Direction: dir, Status: "sent", Type: "text", Text: "x", CreatedAt: at, UpdatedAt: at}
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET search_path TO `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	rows := func() []string {
		t.Helper()
		r, err := conn.Query(ctx, `SELECT id || ' ' || last_message_id || ' ' || last_message_at || ' ' || coalesce(last_inbound_at::text, 'null')
			FROM conversations ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	byTrigger := rows()
	if len(byTrigger) != 4 {
		t.Fatalf("trigger kept %d conversations, want 4: %v", len(byTrigger), byTrigger)
	}
	b, err := os.ReadFile("migrations/0014_conversations.sql")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start := strings.Index(src, "INSERT INTO conversations")
	end := strings.Index(src[start:], ";")
	if start < 0 || end < 0 {
		t.Fatal("backfill statement not found")
	}
	if _, err := conn.Exec(ctx, `DELETE FROM conversations`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, src[start:start+end]); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(byTrigger, rows()); d != "" {
		t.Errorf("backfill (-trigger +backfill):\n%s", d)
	}
}
