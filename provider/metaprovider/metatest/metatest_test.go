package metatest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

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
