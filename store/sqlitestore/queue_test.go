package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/store/driver"
)

// TestPingChecksSchemaVersion: a database another program migrated further
// (or back) while this one runs is not ready, and a closed store is not
// either.
func TestPingChecksSchemaVersion(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if _, err := s.w.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	err := s.Ping(ctx)
	if err == nil || !errors.Is(err, driver.ErrSchemaVersion) {
		t.Errorf("Ping with a newer schema: %v, want a schema version error", err)
	}
	if _, err := s.w.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion())); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping with the schema back: %v", err)
	}
	_ = s.Close()
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping of a closed store answered nil")
	}
}

// TestQueueStatsUseQueueIndexes: the dispatch queue figures read a partial
// index of the queued messages, never the messages table.
func TestQueueStatsUseQueueIndexes(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	for name, q := range map[string]string{"all": qQueueStatsAll, "workspace": qQueueStatsWS} {
		rows, err := s.r.Query("EXPLAIN QUERY PLAN "+q, "2026-01-01", "ws")
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		_ = rows.Close()
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, "COVERING INDEX messages_") {
			t.Errorf("%s: plan %q does not read a covering index of the queue", name, p)
		}
	}
}
