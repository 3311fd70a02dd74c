package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// checkClaimPlan checks the plan of a claim query: it uses every index of
// want, never scans a table (a claim reads only the rows due), nor sorts.
func checkClaimPlan(t *testing.T, name, plan string, want ...string) {
	t.Helper()
	t.Logf("plan of %s:\n%s", name, plan)
	for _, w := range want {
		if !strings.Contains(plan, w) {
			t.Errorf("plan of %s lacks %q:\n%s", name, w, plan)
		}
	}
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "SCAN ") {
			t.Errorf("plan of %s scans:\n%s", name, plan)
		}
	}
	if strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("plan of %s sorts:\n%s", name, plan)
	}
}

// claimPlans checks the plans of qMessageClaim and qWebhookClaim, the
// queries MessageClaim and WebhookClaim run: the message claim walks the
// partial index messages_due (queued messages only) in due order, the
// webhook claim walks webhook_deliveries_due (pending deliveries only) and
// looks for an earlier pending delivery of the same endpoint and message
// through webhook_deliveries_order.
func claimPlans(t *testing.T, s *Store) {
	t.Helper()
	checkClaimPlan(t, "the message claim", explain(t, s, qMessageClaim, "owner", "2026-lease", "2026", 20),
		"USING COVERING INDEX messages_due (due_at<?)")
	checkClaimPlan(t, "the webhook claim", explain(t, s, qWebhookClaim, "owner", "2026-lease", "2026", 20),
		"USING INDEX webhook_deliveries_due (due_at<?)",
		"USING COVERING INDEX webhook_deliveries_order (endpoint_id=? AND message_id=? AND seq<?)")
}

// TestClaimsUseDueIndexes proves the dispatch and webhook claims never scan
// every message ever sent or the whole outbox: on an empty database, and
// with statistics of many sent messages and many deliveries.
func TestClaimsUseDueIndexes(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	claimPlans(t, s)

	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.WebhookEndpointCreate(ctx, &messaging.WebhookEndpoint{ID: "we_1", WorkspaceID: "a", URL: "https://hooks.example/1", SecretSealed: []byte("sealed"), CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	m := &messaging.Message{ID: "msg_0", WorkspaceID: "a", ConversationID: "c", Channel: "whatsapp", To: "+254712345678",
		Direction: "outbound", Status: messaging.StatusQueued, Type: "text", Text: "hi", CreatedAt: t0, UpdatedAt: t0, DueAt: t0}
	if _, _, err := s.MessageCreate(ctx, m); err != nil {
		t.Fatal(err)
	}
	if rs, err := s.MessageUpdateStatuses(ctx, []*driver.MessageStatusParams{{WorkspaceID: "a", ID: "msg_0",
		From: []string{messaging.StatusQueued}, To: messaging.StatusSent, At: t0,
		Event: &driver.EventRecord{ID: "evt_0", WorkspaceID: "a", MessageID: "msg_0", Type: "message.status_updated", Payload: []byte("{}"), CreatedAt: t0}}}); err != nil || !rs[0].Changed {
		t.Fatal(rs, err)
	}
	// Copies of the sent message and of its delivery, a few queued.
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range []string{
			`CREATE TEMP TABLE seed_m AS SELECT * FROM messages`,
			`CREATE TEMP TABLE seed_d AS SELECT * FROM webhook_deliveries`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		for i := 1; i <= 3000; i++ {
			status := messaging.StatusSent
			if i%500 == 0 {
				status = messaging.StatusQueued
			}
			for _, q := range []string{
				fmt.Sprintf(`UPDATE seed_m SET id = 'msg_%d', status = '%s'`, i, status),
				`INSERT INTO messages SELECT * FROM seed_m`,
				fmt.Sprintf(`UPDATE seed_d SET seq = NULL, message_id = 'msg_%d'`, i),
				`INSERT INTO webhook_deliveries SELECT * FROM seed_d`,
			} {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
		}
		for _, q := range []string{`DROP TABLE seed_m`, `DROP TABLE seed_d`, `ANALYZE`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	claimPlans(t, s)
}

// TestSessionQueriesUseIndexes: a session is found by its hash through the
// primary key, and a sweep walks sessions_expires in order, so neither
// reads every session ever started.
func TestSessionQueriesUseIndexes(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	checkClaimPlan(t, "the session lookup", explain(t, s, qSessionGet, "h"), "USING PRIMARY KEY (hash=?)")
	checkClaimPlan(t, "the session sweep", explain(t, s, qSessionSweep, "2026", 100), "USING COVERING INDEX sessions_expires (expires_at<?)")
}

// TestListsUseIndexes: the message list and an SMS account's message list
// read their index in order, without a scan or a sort, so a page costs the
// same however many messages other workspaces or accounts have.
func TestListsUseIndexes(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	checkClaimPlan(t, "an SMS account's messages", explain(t, s, qSMSMessageList, "1234", 99, 20),
		"USING INDEX sms_messages_account (partner_id=? AND number<?)")
}

// TestFallbackClaimUsesDueIndex: the SMS fallback sweeper's claim walks
// the partial index of the pending fallbacks in due order, never the
// fallbacks settled long ago.
func TestFallbackClaimUsesDueIndex(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	checkClaimPlan(t, "the fallback claim", explain(t, s, qFallbackClaim, "owner", "2026-lease", "2026", 20),
		"USING INDEX message_fallbacks_due (due_at<?)")
}
