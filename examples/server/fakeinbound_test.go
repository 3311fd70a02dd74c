package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestFakeInboundRoute: with the operator token, the route records a
// message from a contact (once per id); without it, nothing happens.
func TestFakeInboundRoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := fakeprovider.New()
	svc, err := messaging.New(memstore.New(), fake, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake.SetSink(svc)
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "demo", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	h := fakeInboundHandler(fake, "op_secret")
	post := func(token, body string) (int, map[string]string) {
		req := httptest.NewRequest("POST", fakeInboundPath, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out map[string]string
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	body := `{"workspace_id":"demo","from":"+254712345678","text":"STOP","id":"wamid.local.1"}`
	for _, c := range []struct {
		name, token, body string
		status            int
	}{
		{"no token", "", body, 401},
		{"wrong token", "op_other", body, 401},
		{"unknown field", "op_secret", `{"workspace_id":"demo","from":"+254712345678","txt":"hi"}`, 400},
		{"bad sender", "op_secret", `{"workspace_id":"demo","from":"hello","text":"hi"}`, 400},
	} {
		if st, out := post(c.token, c.body); st != c.status {
			t.Errorf("%s: status %d %v, want %d", c.name, st, out, c.status)
		}
	}
	page, _ := svc.Workspace("demo").Messages.List(ctx, nil)
	if len(page.Items) != 0 {
		t.Fatalf("refused requests recorded %d messages", len(page.Items))
	}
	st, first := post("op_secret", body)
	if st != http.StatusCreated || first["message_id"] == "" {
		t.Fatalf("status %d %v, want 201 with a message id", st, first)
	}
	if _, again := post("op_secret", body); again["message_id"] != first["message_id"] {
		t.Errorf("repeated id recorded %v, want %v", again, first)
	}
	m, err := svc.Workspace("demo").Messages.Get(ctx, first["message_id"])
	if err != nil || m.Direction != record.DirectionInbound || m.Text != "STOP" {
		t.Errorf("recorded %+v, %v", m, err)
	}
}
