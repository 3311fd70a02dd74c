package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
)

// The meta tests run the server binary with -provider meta against
// metatest's mock Graph API, served by this test process.

const (
	metaSecret  = "app-secret-for-tests"
	metaPhoneID = "1234567890"
	metaWABA    = "9876543210"
	metaToken   = "EAAGmetaTestToken1234"
	metaKey     = "mk_meta_0123456789abcdefghijk"
)

func metaBootstrap() string {
	return fmt.Sprintf(`{"workspaces":[{"id":"shop","name":"Shop",
  "channels":[{"channel":"whatsapp","phone_number_id":%q,"waba_id":%q,"access_token":%q,"display_phone_number":"+254700000000"}],
  "api_keys":[{"key":%q,"scopes":["read:messages","write:messages","read:templates"]}],
  "templates":[{"name":"shipped_update","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Order {{1}} shipped"}]}]}]}`,
		metaPhoneID, metaWABA, metaToken, metaKey)
}

// apiGet GETs path with the test key and decodes the JSON answer.
func apiGet(t *testing.T, base, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("X-API-Key", metaKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %d %q", path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// signedPost posts a Meta notification signed with the app secret.
func signedPost(t *testing.T, url, body string) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(metaSecret))
	mac.Write([]byte(body))
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
}

// eventually polls cond every 20 ms until it holds or 20 s pass (the
// server is another process; nothing here measures time).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
	}
}

func templateNames(t *testing.T, base string) []string {
	var list []messaging.Template
	apiGet(t, base, "/v1/templates", &list)
	var names []string
	for _, tp := range list {
		names = append(names, tp.Name)
	}
	return names
}

func TestServerOnMeta(t *testing.T) {
	graph := metatest.New()
	t.Cleanup(graph.Close)
	// The bootstrap's credentials control the number: Connect verifies
	// them with the Graph API.
	graph.AddPhoneNumber(metaWABA, metaPhoneID, "+254 700 000000", metaToken)
	graph.AddTemplate(metaWABA, messaging.ProviderTemplate{Name: "made_in_manager", Language: "en", Category: "MARKETING", Status: "APPROVED",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Big sale"}}})
	dir := t.TempDir()
	boot := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(boot, []byte(metaBootstrap()), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("MESSAGING_META_APP_SECRET", metaSecret)
	bin := buildServer(t, t.TempDir())
	srv := startServer(t, bin, addr, "-db", filepath.Join(dir, "meta.db"), "-bootstrap", boot, "-rate-limits", "off",
		"-provider", "meta", "-meta-base-url", graph.URL())
	defer srv.stop(t)

	// The start-up sync brings the template made in WhatsApp Manager.
	eventually(t, "made_in_manager listed after the start-up sync", func() bool {
		return slices.Contains(templateNames(t, srv.base), "made_in_manager")
	})
	// The bootstrap's template was submitted to Meta with the token.
	var submitted bool
	for _, r := range graph.Requests() {
		if r.Method == "POST" && r.Path == "/v21.0/"+metaWABA+"/message_templates" && r.Authorization == "Bearer "+metaToken {
			submitted = true
		}
	}
	if !submitted {
		t.Fatalf("shipped_update was not submitted to the WABA with the token: %+v", graph.Requests())
	}
	if slices.Contains(templateNames(t, srv.base), "shipped_update") {
		t.Fatal("shipped_update listed before Meta approved it")
	}
	// Meta's review arrives through the webhook.
	signedPost(t, srv.base+"/webhooks/meta", fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"message_template_status_update",
		"value":{"event":"APPROVED","message_template_name":"shipped_update","message_template_language":"en","reason":"NONE"}}]}]}`, metaWABA))
	eventually(t, "shipped_update approved by the webhook", func() bool {
		return slices.Contains(templateNames(t, srv.base), "shipped_update")
	})

	// A send reaches Meta with the connection's token and phone-number id.
	status, out := postKey(t, srv.base+"/v1/messages", `{"channel":"whatsapp","to":"+14155550123","type":"text","text":"Hello from the test"}`)
	if status != 201 {
		t.Fatalf("send: %d %v", status, out)
	}
	id := fmt.Sprint(out["message_id"])
	var wamid string
	eventually(t, "the send reaching the mock", func() bool {
		for i, r := range graph.Requests() {
			if r.Method == "POST" && r.Path == "/v21.0/"+metaPhoneID+"/messages" {
				if r.Authorization != "Bearer "+metaToken {
					t.Fatalf("send authorized with %q", r.Authorization)
				}
				wamid = fmt.Sprintf("wamid.mock.%d", countSends(graph.Requests()[:i+1]))
				return true
			}
		}
		return false
	})
	var msg map[string]any
	eventually(t, "the message sent", func() bool {
		apiGet(t, srv.base, "/v1/messages/"+id, &msg)
		return msg["status"] == "sent"
	})
	signedPost(t, srv.base+"/webhooks/meta", fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"messages",
		"value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":%q},"statuses":[{"id":%q,"status":"delivered","timestamp":"1700000000","recipient_id":"14155550123"}]}}]}]}`,
		metaWABA, metaPhoneID, wamid))
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", srv.log)
		}
	}()
	eventually(t, "the message delivered by the status webhook", func() bool {
		apiGet(t, srv.base, "/v1/messages/"+id, &msg)
		return msg["status"] == "delivered"
	})
	if strings.Contains(srv.log.String(), metaToken) || strings.Contains(srv.log.String(), metaToken[4:]) {
		t.Errorf("the server logged the access token:\n%s", srv.log)
	}
}

// countSends counts the WhatsApp sends among rs.
func countSends(rs []metatest.Request) int {
	n := 0
	for _, r := range rs {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/"+metaPhoneID+"/messages") {
			n++
		}
	}
	return n
}

// postKey posts body with the test key.
func postKey(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("X-API-Key", metaKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func TestServerOnMetaNeedsTheAppSecret(t *testing.T) {
	bin := buildServer(t, t.TempDir())
	cmd := exec.Command(bin, "-provider", "meta", "-db", filepath.Join(t.TempDir(), "x.db"), "-addr", "127.0.0.1:0")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "MESSAGING_META_APP_SECRET=") })
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "MESSAGING_META_APP_SECRET") {
		t.Errorf("start without the app secret: %v\n%s; want a refusal naming MESSAGING_META_APP_SECRET", err, out)
	}
	cmd = exec.Command(bin, "-provider", "twilio", "-db", filepath.Join(t.TempDir(), "x.db"), "-addr", "127.0.0.1:0")
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-provider") {
		t.Errorf("an unknown provider: %v\n%s; want a refusal naming -provider", err, out)
	}
}
