package pgstore_test

import (
	"context"
	"testing"

	"github.com/ujumbe/messaging/store/internal/storedjson/storedjsontest"
)

// TestStoredEncodingIsPinned: the JSON a store writes for nested values is
// (as jsonb) what earlier versions wrote, and reads back unchanged.
func TestStoredEncodingIsPinned(t *testing.T) {
	s := fresh(t)
	storedjsontest.CheckPinned(t, s, func(table, id, want string) (string, bool, error) {
		var same bool
		var got string
		err := s.Pool().QueryRow(context.Background(), `SELECT components = $1::jsonb, components::text FROM `+table+` WHERE id = $2`,
			want, id).Scan(&same, &got)
		return got, same, err
	})
}
