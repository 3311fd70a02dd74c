package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// TestConversationsBackfill: the statement of migration 0015 that fills
// the conversations of messages stored before it builds the same rows as
// the trigger that keeps them afterwards.
func TestConversationsBackfill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := func() []string {
		t.Helper()
		r, err := db.Query(`SELECT id, channel, recipient, last_message_id, last_message_at, last_inbound_at FROM conversations ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []string
		for r.Next() {
			var a, b, c, d, e, f string
			if err := r.Scan(&a, &b, &c, &d, &e, &f); err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.Join([]string{a, b, c, d, e, f}, " "))
		}
		return out
	}
	byTrigger := rows()
	if len(byTrigger) != 4 {
		t.Fatalf("trigger kept %d conversations, want 4: %v", len(byTrigger), byTrigger)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	src := ms[14].SQL
	start := strings.Index(src, "INSERT INTO conversations")
	end := strings.Index(src[start:], "LIMIT 1);")
	if !strings.HasPrefix(ms[14].Name, "0015_") || start < 0 || end < 0 {
		t.Fatalf("backfill statement not found in %s", ms[14].Name)
	}
	if _, err := db.Exec(`DELETE FROM conversations`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(src[start : start+end+len("LIMIT 1);")]); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(byTrigger, rows()); d != "" {
		t.Errorf("backfill (-trigger +backfill):\n%s", d)
	}
}
