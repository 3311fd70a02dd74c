package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/internal/storedjson/storedjsontest"
)

// TestStoredEncodingIsPinned: the JSON a store writes for nested values is
// byte for byte what earlier versions wrote, and reads back unchanged.
func TestStoredEncodingIsPinned(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	storedjsontest.CheckPinned(t, s, func(table, id, want string) (string, bool, error) {
		var got string
		err := s.r.QueryRowContext(context.Background(), `SELECT components FROM `+table+` WHERE id = ?`, id).Scan(&got)
		return got, got == want, err
	})
}

// TestStoredIdempotencyResultsArePinned: the results of a keyed SMS accept
// are stored in their own compact form, byte for byte as earlier versions
// stored them, and read back unchanged.
func TestStoredIdempotencyResultsArePinned(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	if err := s.SMSAccountCreate(ctx, &sms.Account{PartnerID: "p", KeyHash: []byte("h"), Senders: []string{"ACME"},
		Credit: sms.Credits(1), TimeZone: "UTC", CostPerSegment: sms.Credits(1), CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	msg := func(id string) *sms.Message {
		return &sms.Message{ID: id, PartnerID: "p", Mobile: "254712345678", Text: "hi", Sender: "ACME", Encoding: sms.EncodingGSM7,
			Segments: 1, Cost: sms.Credits(1), Status: sms.StatusQueued, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}
	}
	rec := &sms.Idempotency{PartnerID: "p", Key: "k", RequestHash: []byte("h"), Answer: []byte("{}"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	res, _, err := s.SMSAcceptIdempotent(ctx, &sms.AcceptIdempotentParams{Record: rec, Messages: []*sms.Message{msg("sms_1"), msg("sms_2")}})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := s.r.QueryRowContext(ctx, `SELECT results FROM sms_idempotency WHERE partner_id = 'p' AND idem_key = 'k'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := `[{"n":1,"b":0},{"n":0,"b":0,"r":true}]`; got != want {
		t.Errorf("stored results:\n got %s\nwant %s", got, want)
	}
	back, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "p", Key: "k", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(res, back.Results, cmpopts.EquateErrors()); d != "" {
		t.Errorf("results read back (-want +got):\n%s", d)
	}
}
