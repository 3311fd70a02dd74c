package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServerSMSFallback: the server wires its SMS service as the
// messaging service's fallback. The operator links the SMS account to
// the workspace; a template sent with a fallback to a number the fake
// provider fails as undeliverable (131026) gets its SMS, accepted once
// by the SMS service.
func TestServerSMSFallback(t *testing.T) {
	dir := t.TempDir()
	const key = "fb_live_0123456789abcdef0123456789abcdef"
	boot := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(boot, []byte(`{"workspaces": [{"id": "fb", "name": "Fallback", "channels": ["whatsapp"],
		"api_keys": [{"key": "`+key+`", "scopes": ["write:messages", "read:messages", "read:templates"]}],
		"templates": [{"name": "hello", "category": "UTILITY", "language": "en", "status": "approved", "components": [{"type": "BODY", "text": "Hello"}]}]}],
		"sms_accounts": [{"partnerID": "fb-sms", "apikey": "sms_0123456789abcdef0123456789abcdef", "shortcodes": ["ACME"], "credit": 100, "timezone": "Africa/Nairobi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	bin := buildServer(t, t.TempDir())
	db := filepath.Join(dir, "fb.db")
	srv := startServer(t, bin, addr, "-db", db, "-bootstrap", boot, "-fake-delivered-after", "10ms")
	tok, err := os.ReadFile(db + ".admin-token")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, auth, body string) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, srv.base+path, rd)
		if strings.HasPrefix(auth, "op_") {
			req.Header.Set("Authorization", "Bearer "+auth)
		} else {
			req.Header.Set("X-API-Key", auth)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	op := strings.TrimSpace(string(tok))
	if code, v := call("PUT", "/admin/v1/workspaces/fb/sms-accounts/fb-sms", op, ""); code != 200 || v["changed"] != true {
		t.Fatalf("link: %d %v\n%s", code, v, srv.log)
	}
	code, v := call("POST", "/v1/messages/templates", key,
		`{"to":"+254712340000","template_name":"hello","fallback":{"sms":{"text":"Hello by SMS","partner_id":"fb-sms","shortcode":"ACME"}}}`)
	if code != 201 {
		t.Fatalf("send: %d %v", code, v)
	}
	id, _ := v["message_id"].(string)
	var sms map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, m := call("GET", "/v1/messages/"+id, key, "")
		fb, _ := m["fallback"].(map[string]any)
		if sms, _ = fb["sms"].(map[string]any); sms != nil && sms["sms_message_id"] != nil {
			break
		}
	}
	if sms == nil || sms["sms_message_id"] == nil || sms["status"] == "pending" {
		t.Fatalf("the fallback was not sent: %v\n%s", sms, srv.log)
	}
}
