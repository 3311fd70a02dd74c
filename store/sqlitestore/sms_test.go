package sqlitestore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/storetest"
)

func TestSMSConformance(t *testing.T) {
	storetest.RunSMS(t, func(t *testing.T) sms.Store {
		return openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	})
}

// TestSMSClaimUsesDueIndex proves the claim walks the partial index on the
// due time instead of scanning every message ever sent.
func TestSMSClaimUsesDueIndex(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	rows, err := s.r.QueryContext(context.Background(), `EXPLAIN QUERY PLAN SELECT number FROM sms_messages
		WHERE status IN ('scheduled', 'queued', 'sending') AND due_at <= ? ORDER BY due_at, number LIMIT ?`, "2026", 20)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	text := strings.Join(plan, "\n")
	t.Logf("claim plan:\n%s", text)
	if !strings.Contains(text, "sms_messages_due") || strings.Contains(text, "SCAN sms_messages\n") || strings.HasSuffix(text, "SCAN sms_messages") || strings.Contains(text, "TEMP B-TREE") {
		t.Errorf("the claim does not walk sms_messages_due:\n%s", text)
	}
}
