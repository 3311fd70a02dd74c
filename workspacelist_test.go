package messaging_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// TestListWorkspaces: workspaces page in id order with a cursor; a bad
// limit or cursor names its field.
func TestListWorkspaces(t *testing.T) {
	t.Parallel()
	f := setup(t) // acme and other
	if _, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "beta", Name: "Beta"}); err != nil {
		t.Fatal(err)
	}
	page, next, err := f.svc.ListWorkspaces(f.ctx, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range page {
		ids = append(ids, w.ID)
	}
	if d := cmp.Diff([]string{"acme", "beta"}, ids); d != "" || next != "beta" {
		t.Errorf("first page (-want +got):\n%s next %q", d, next)
	}
	rest, next, err := f.svc.ListWorkspaces(f.ctx, next, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0].ID != "other" || rest[0].Name != "Other Ltd" || next != "" {
		t.Errorf("second page %+v next %q", rest, next)
	}
	for _, tc := range []struct {
		cursor string
		limit  int
		field  string
	}{{"", 101, "limit"}, {"", -1, "limit"}, {"a b", 10, "cursor"}} {
		_, _, err := f.svc.ListWorkspaces(f.ctx, tc.cursor, tc.limit)
		var me *messaging.Error
		if !errors.As(err, &me) || me.Code != messaging.CodeValidation || me.Field != tc.field {
			t.Errorf("ListWorkspaces(%q, %d): %v, want validation_error on %s", tc.cursor, tc.limit, err, tc.field)
		}
	}
}
