package httpapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/httpapi"
)

// TestWorkspaceUnconfirmedSends: the operator sets a workspace's
// unconfirmed_sends with PATCH /admin/v1/workspaces/{id} (the other
// settings stay) and at creation; GET of the workspace and the list show
// it, resend when never set; a bad value is 400 validation_error naming
// unconfirmed_sends and the allowed values, and stores nothing of the
// body.
func TestWorkspaceUnconfirmedSends(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = opToken })
	op := func(method, path, body string) *response {
		return e.do(t, request{method: method, path: path, headers: hdr("Authorization", "Bearer "+opToken), body: body})
	}
	settings := func(r *response) [2]any {
		t.Helper()
		if r.status != 200 && r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := r.object(t)
		return [2]any{m["unconfirmed_sends"], m["outside_window"]}
	}
	listed := func() map[string]any {
		t.Helper()
		out := map[string]any{}
		for _, w := range op("GET", "/admin/v1/workspaces", "").object(t)["data"].([]any) {
			out[w.(map[string]any)["id"].(string)] = w.(map[string]any)["unconfirmed_sends"]
		}
		return out
	}
	if d := cmp.Diff([2]any{"resend", "provider"}, settings(op("GET", "/admin/v1/workspaces/ws_a", ""))); d != "" {
		t.Errorf("never set (-want +got):\n%s", d)
	}
	if d := cmp.Diff([2]any{"resend", "reject"}, settings(op("PATCH", "/admin/v1/workspaces/ws_a", `{"outside_window":"reject"}`))); d != "" {
		t.Errorf("PATCH of outside_window alone (-want +got):\n%s", d)
	}
	if d := cmp.Diff([2]any{"fail", "reject"}, settings(op("PATCH", "/admin/v1/workspaces/ws_a", `{"unconfirmed_sends":"fail"}`))); d != "" {
		t.Errorf("PATCH fail (-want +got):\n%s", d)
	}
	if d := cmp.Diff([2]any{"fail", "reject"}, settings(op("GET", "/admin/v1/workspaces/ws_a", ""))); d != "" {
		t.Errorf("GET after PATCH fail (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"ws_a": "fail", "ws_b": "resend"}, listed()); d != "" {
		t.Errorf("listed after PATCH fail (-want +got):\n%s", d)
	}

	for _, body := range []string{`{"unconfirmed_sends":"sometimes"}`, `{"unconfirmed_sends":"FAIL","outside_window":"provider"}`} {
		r := op("PATCH", "/admin/v1/workspaces/ws_a", body)
		expect(t, r, 400, "validation_error", "unconfirmed_sends")
		if !strings.Contains(r.env.Error.Message, "must be resend or fail") {
			t.Errorf("%s: message %q does not give the allowed values", body, r.env.Error.Message)
		}
		if d := cmp.Diff([2]any{"fail", "reject"}, settings(op("GET", "/admin/v1/workspaces/ws_a", ""))); d != "" {
			t.Errorf("%s stored something (-want +got):\n%s", body, d)
		}
	}
	r := op("PATCH", "/admin/v1/workspaces/ws_a", `{}`)
	expect(t, r, 400, "validation_error", "body")
	if !strings.Contains(r.env.Error.Message, "unconfirmed_sends") {
		t.Errorf("empty PATCH: message %q does not name unconfirmed_sends", r.env.Error.Message)
	}

	if d := cmp.Diff([2]any{"resend", "reject"}, settings(op("PATCH", "/admin/v1/workspaces/ws_a", `{"unconfirmed_sends":"resend"}`))); d != "" {
		t.Errorf("PATCH resend (-want +got):\n%s", d)
	}
	if d := cmp.Diff([2]any{"fail", "provider"}, settings(op("POST", "/admin/v1/workspaces", `{"id":"ws_c","unconfirmed_sends":"fail"}`))); d != "" {
		t.Errorf("created with fail (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"ws_a": "resend", "ws_b": "resend", "ws_c": "fail"}, listed()); d != "" {
		t.Errorf("listed at the end (-want +got):\n%s", d)
	}
	expect(t, op("POST", "/admin/v1/workspaces", `{"id":"ws_d","unconfirmed_sends":"twice"}`), 400, "validation_error", "unconfirmed_sends")
	expect(t, op("GET", "/admin/v1/workspaces/ws_d", ""), 404, "not_found", "")
}
