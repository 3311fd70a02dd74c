package metatest_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
)

// call makes one request and decodes the JSON answer.
func call(t *testing.T, s *metatest.Server, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: answer %q is not a JSON object", method, path, raw)
	}
	return resp.StatusCode, out
}

func errorCode(ans map[string]any) float64 {
	e, _ := ans["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestServer(t *testing.T) {
	t.Parallel()
	s := metatest.New()
	defer s.Close()

	status, ans := call(t, s, "POST", "/v21.0/PAGE_1/messages", "tok", `{"recipient":{"id":"6543"},"message":{"text":"hi"}}`)
	if status != 200 || ans["recipient_id"] != "6543" || !strings.HasPrefix(ans["message_id"].(string), "m_mock.") {
		t.Errorf("Send API answer = %d %v", status, ans)
	}
	if status, ans := call(t, s, "POST", "/v21.0/1234/messages", "", `{"messaging_product":"whatsapp","to":"+254712345678"}`); status != 400 || errorCode(ans) != 104 {
		t.Errorf("without a token: %d %v, want error 104", status, ans)
	}
	if status, ans := call(t, s, "GET", "/21.0/1234", "tok", ""); status != 400 || errorCode(ans) != 2500 {
		t.Errorf("without a version: %d %v, want error 2500", status, ans)
	}

	create := `{"name":"hello","language":"en","category":"UTILITY","components":[{"type":"BODY","text":"Hi"}]}`
	status, ans = call(t, s, "POST", "/v21.0/55/message_templates", "tok", create)
	if status != 200 || ans["id"] == "" || ans["status"] != "PENDING" || ans["category"] != "UTILITY" {
		t.Errorf("create = %d %v", status, ans)
	}
	if status, ans := call(t, s, "POST", "/v21.0/55/message_templates", "tok", create); status != 400 || errorCode(ans) != 100 {
		t.Errorf("create twice = %d %v, want error 100", status, ans)
	}
	if status, ans := call(t, s, "POST", "/v21.0/55/message_templates", "tok", `{"name":"x","language":"en"}`); status != 400 || errorCode(ans) != 100 {
		t.Errorf("create without category = %d %v, want error 100", status, ans)
	}
	if !s.SetTemplateStatus("55", "hello", "en", "APPROVED") || s.SetTemplateStatus("55", "hello", "sw", "APPROVED") {
		t.Error("SetTemplateStatus found the wrong templates")
	}
	want := []messaging.ProviderTemplate{{ID: ans["id"].(string), Name: "hello", Language: "en", Category: "UTILITY", Status: "APPROVED",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi"}}}}
	if diff := cmp.Diff(want, s.Templates("55")); diff != "" {
		t.Errorf("Templates mismatch (-want +got):\n%s", diff)
	}

	// Pages: min(limit, page size), next until the last.
	for _, n := range []string{"b", "c", "d"} {
		s.AddTemplate("55", messaging.ProviderTemplate{Name: n, Language: "en", Category: "MARKETING"})
	}
	status, ans = call(t, s, "GET", "/v21.0/55/message_templates?limit=1", "tok", "")
	if data := ans["data"].([]any); status != 200 || len(data) != 1 {
		t.Errorf("limit=1: %d %v", status, ans)
	}
	pages, next := 0, s.URL()+"/v21.0/55/message_templates?limit=100"
	for next != "" && pages < 10 {
		_, ans = call(t, s, "GET", strings.TrimPrefix(next, s.URL()), "tok", "")
		pages++
		paging := ans["paging"].(map[string]any)
		next, _ = paging["next"].(string)
	}
	if pages != 2 {
		t.Errorf("4 templates in %d pages, want 2 of DefaultPageSize", pages)
	}

	s.ExpireToken("tok")
	if status, ans := call(t, s, "GET", "/v21.0/1234?fields=id", "tok", ""); status != 401 || errorCode(ans) != 190 {
		t.Errorf("expired token: %d %v, want 401 error 190", status, ans)
	}
	if status, ans := call(t, s, "GET", "/v21.0/1234?fields=id", "tok2", ""); status != 200 || ans["id"] != "1234" {
		t.Errorf("another token: %d %v", status, ans)
	}
	if status, ans := call(t, s, "DELETE", "/v21.0/55/message_templates?name=nope", "tok2", ""); status != 400 || errorCode(ans) != 100 {
		t.Errorf("delete unknown: %d %v, want error 100", status, ans)
	}
	if got := len(s.Requests()); got != 12 {
		t.Errorf("%d requests recorded, want 12", got)
	}
}

func TestServerConcurrentUse(t *testing.T) {
	t.Parallel()
	s := metatest.New()
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s.AddTemplate("55", messaging.ProviderTemplate{Name: "t", Language: "en", Category: "UTILITY"})
			s.SetPageSize(i + 1)
			req, _ := http.NewRequest("GET", s.URL()+"/v21.0/55/message_templates", nil)
			req.Header.Set("Authorization", "Bearer tok")
			if resp, err := s.Client().Do(req); err != nil {
				t.Error(err)
			} else {
				resp.Body.Close()
			}
			_ = s.Requests()
			_ = s.Templates("55")
		})
	}
	wg.Wait()
	if n := len(s.Templates("55")); n != 8 {
		t.Errorf("%d templates, want 8", n)
	}
}

// TestServerSendsAndWebhooks: a send is accepted with its correlation
// even when its answer never comes, and the notifications about it carry
// the correlation.
func TestServerSendsAndWebhooks(t *testing.T) {
	t.Parallel()
	s := metatest.New()
	defer s.Close()
	s.AddPhoneNumber("55", "1234", "+1 555-010-0100", "tok")
	s.AddInstagramAccount("IG_1", "tok")
	s.SetSendDelay(metatest.NoAnswer)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/v21.0/1234/messages",
		strings.NewReader(`{"messaging_product":"whatsapp","to":"+254712345678","type":"text","text":{"body":"hi"},"biz_opaque_callback_data":"msg_A"}`))
	req.Header.Set("Authorization", "Bearer tok")
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("NoAnswer answered %d", resp.StatusCode)
	}
	s.SetSendDelay(0)
	if status, ans := call(t, s, "POST", "/v21.0/PAGE_1/messages", "tok", `{"recipient":{"id":"6543"},"message":{"text":"hi","metadata":"msg_B"}}`); status != 200 || ans["message_id"] != "m_mock.2" {
		t.Fatalf("Send API answer = %d %v", status, ans)
	}
	if status, _ := call(t, s, "POST", "/v21.0/IG_1/messages", "tok", `{"recipient":{"id":"IGSID"},"message":{"text":"yo"}}`); status != 200 {
		t.Fatalf("Instagram answer = %d", status)
	}
	want := []metatest.Send{
		{WhatsApp: true, AccountID: "1234", To: "+254712345678", ProviderMessageID: "wamid.mock.1", Correlation: "msg_A"},
		{AccountID: "PAGE_1", To: "6543", ProviderMessageID: "m_mock.2", Correlation: "msg_B", Text: "hi"},
		{AccountID: "IG_1", To: "IGSID", ProviderMessageID: "m_mock.3", Text: "yo"},
	}
	if diff := cmp.Diff(want, s.Sends()); diff != "" {
		t.Errorf("Sends (-want +got):\n%s", diff)
	}

	status, err := s.StatusWebhook("wamid.mock.1", "delivered")
	if err != nil {
		t.Fatal(err)
	}
	var wa struct {
		Object string `json:"object"`
		Entry  []struct {
			ID      string `json:"id"`
			Changes []struct {
				Field string `json:"field"`
				Value struct {
					Metadata struct {
						PhoneNumberID string `json:"phone_number_id"`
					} `json:"metadata"`
					Statuses []map[string]any `json:"statuses"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(status, &wa); err != nil || wa.Object != "whatsapp_business_account" || len(wa.Entry) != 1 || wa.Entry[0].ID != "55" ||
		len(wa.Entry[0].Changes) != 1 || wa.Entry[0].Changes[0].Value.Metadata.PhoneNumberID != "1234" {
		t.Fatalf("StatusWebhook = %s (%v)", status, err)
	}
	st := wa.Entry[0].Changes[0].Value.Statuses
	if len(st) != 1 || st[0]["id"] != "wamid.mock.1" || st[0]["status"] != "delivered" || st[0]["biz_opaque_callback_data"] != "msg_A" {
		t.Errorf("statuses = %v", st)
	}

	for pid, object := range map[string]string{"m_mock.2": "page", "m_mock.3": "instagram"} {
		echo, err := s.EchoWebhook(pid)
		if err != nil {
			t.Fatal(err)
		}
		var fb struct {
			Object string `json:"object"`
			Entry  []struct {
				Messaging []struct {
					Sender  struct{ ID string }
					Message map[string]any `json:"message"`
				} `json:"messaging"`
			} `json:"entry"`
		}
		if err := json.Unmarshal(echo, &fb); err != nil || fb.Object != object || len(fb.Entry) != 1 || len(fb.Entry[0].Messaging) != 1 {
			t.Fatalf("EchoWebhook(%s) = %s (%v)", pid, echo, err)
		}
		m := fb.Entry[0].Messaging[0].Message
		if m["mid"] != pid || m["is_echo"] != true {
			t.Errorf("echo of %s = %v", pid, m)
		}
		if md, has := m["metadata"]; (pid == "m_mock.2") != has || (has && md != "msg_B") {
			t.Errorf("echo of %s: metadata = %v", pid, md)
		}
	}
	if _, err := s.StatusWebhook("m_mock.2", "delivered"); err == nil {
		t.Error("StatusWebhook of a Send API message succeeded")
	}
	if _, err := s.EchoWebhook("wamid.mock.1"); err == nil {
		t.Error("EchoWebhook of a WhatsApp message succeeded")
	}
	if _, err := s.StatusWebhook("wamid.nope", "sent"); err == nil {
		t.Error("StatusWebhook of an unknown send succeeded")
	}

	// PostWebhook signs as Meta does.
	var gotSig string
	var gotBody []byte
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotSig, gotBody = r.Header.Get("X-Hub-Signature-256"), must(io.ReadAll(r.Body))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer rcv.Close()
	code, _, err := metatest.PostWebhook(t.Context(), rcv.URL, "secret", status)
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write(status)
	if err != nil || code != http.StatusAccepted || string(gotBody) != string(status) || gotSig != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("PostWebhook = %d, %v; signature %q", code, err, gotSig)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
