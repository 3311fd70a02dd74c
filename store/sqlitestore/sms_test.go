package sqlitestore

import (
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
// due time in order instead of scanning, or sorting, every message ever
// sent. It explains the pick SMSClaimDue runs, not a copy of it.
func TestSMSClaimUsesDueIndex(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	plan := explain(t, s, qSMSClaimPick, "2026", 20)
	t.Logf("claim plan:\n%s", plan)
	if !strings.Contains(plan, "sms_messages_due") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("the claim does not walk sms_messages_due in order:\n%s", plan)
	}
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "SCAN sms_messages") && !strings.Contains(line, "USING") {
			t.Errorf("the claim scans sms_messages:\n%s", plan)
		}
	}
}

// TestSMSByGatewayIDUsesIndex proves a pushed delivery report finds its
// message through sms_messages_gateway_id, not by scanning every message.
func TestSMSByGatewayIDUsesIndex(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	plan := explain(t, s, qSMSByGatewayID, "gw-1")
	if !strings.Contains(plan, "SEARCH sms_messages USING INDEX sms_messages_gateway_id") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("the look-up does not search sms_messages_gateway_id:\n%s", plan)
	}
}
