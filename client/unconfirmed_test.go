package client_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/client"
)

// TestAdminUnconfirmedSends: a workspace's unconfirmed_sends is resend
// until UpdateWorkspace sets fail (leaving outside_window), CreateWorkspace
// sets it at creation, an update of another setting leaves it, and a bad
// value is a 400 validation_error naming the field.
func TestAdminUnconfirmedSends(t *testing.T) {
	e, a := setupAdmin(t)
	ctx := context.Background()
	if ws, err := a.GetWorkspace(ctx, e.A.ID); err != nil || ws.UnconfirmedSends != "resend" {
		t.Fatalf("A before: %+v %v, want the default resend", ws, err)
	}
	ws, err := a.UpdateWorkspace(ctx, e.A.ID, &client.WorkspaceUpdateParams{UnconfirmedSends: "fail"})
	if err != nil || ws.UnconfirmedSends != "fail" || ws.OutsideWindow != "provider" {
		t.Fatalf("update to fail: %+v %v", ws, err)
	}
	if ws, err := a.UpdateWorkspace(ctx, e.A.ID, &client.WorkspaceUpdateParams{OutsideWindow: "reject"}); err != nil || ws.UnconfirmedSends != "fail" {
		t.Errorf("update of outside_window alone: %+v %v, want fail kept", ws, err)
	}
	if got, err := a.GetWorkspace(ctx, e.A.ID); err != nil || got.UnconfirmedSends != "fail" || got.OutsideWindow != "reject" {
		t.Errorf("A after: %+v %v", got, err)
	}
	if got, err := a.GetWorkspace(ctx, e.B.ID); err != nil || got.UnconfirmedSends != "resend" {
		t.Errorf("B after A's update: %+v %v", got, err)
	}
	if ws, err := a.CreateWorkspace(ctx, &client.WorkspaceCreateParams{ID: "ws_careful", UnconfirmedSends: "fail"}); err != nil || ws.UnconfirmedSends != "fail" {
		t.Errorf("create with fail: %+v %v", ws, err)
	}
	_, err = a.UpdateWorkspace(ctx, e.A.ID, &client.WorkspaceUpdateParams{UnconfirmedSends: "twice"})
	if ce := apiError(t, err); ce.StatusCode != http.StatusBadRequest || ce.Code != client.CodeValidation || ce.Field != "unconfirmed_sends" ||
		!strings.Contains(ce.Message, "resend or fail") {
		t.Errorf("a bad unconfirmed_sends: %v", err)
	}
	if got, err := a.GetWorkspace(ctx, e.A.ID); err != nil || got.UnconfirmedSends != "fail" {
		t.Errorf("A after the refused update: %+v %v", got, err)
	}
}
