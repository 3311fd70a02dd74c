package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// testAPIKeyListOrder: keys are listed oldest first by CreatedAt, whatever
// their ids, then by id among keys created at the same instant.
func testAPIKeyListOrder(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	for _, k := range []struct {
		id  string
		sec int
	}{{"key_c", 1}, {"key_b", 2}, {"key_a", 3}, {"key_e", 2}} {
		if err := s.APIKeyCreate(ctx, &messaging.APIKey{ID: k.id, WorkspaceID: "a", Prefix: "p" + k.id, Hash: []byte(k.id),
			Scopes: []string{record.ScopeReadMessages}, CreatedAt: at(k.sec)}); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := s.APIKeyList(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range keys {
		got = append(got, k.ID)
	}
	if want := []string{"key_c", "key_b", "key_e", "key_a"}; !slices.Equal(got, want) {
		t.Errorf("APIKeyList order = %v, want %v (CreatedAt, then id)", got, want)
	}
}
