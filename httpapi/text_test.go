package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
)

// stringPaths returns the path of every string value of the decoded JSON
// v, in the form of validation errors' fields: "a.b", "a[0].b".
func stringPaths(v any, path string) []string {
	switch x := v.(type) {
	case string:
		return []string{path}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out = append(out, stringPaths(x[k], p)...)
		}
		return out
	case []any:
		var out []string
		for i, c := range x {
			out = append(out, stringPaths(c, path+"["+strconv.Itoa(i)+"]")...)
		}
		return out
	}
	return nil
}

// withNUL returns a copy of the decoded JSON v with a NUL character put
// into the string at target.
func withNUL(v any, path, target string) any {
	switch x := v.(type) {
	case string:
		if path == target {
			return x[:min(1, len(x))] + "\x00" + x[min(1, len(x)):]
		}
		return x
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out[k] = withNUL(c, p, target)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = withNUL(c, path+"["+strconv.Itoa(i)+"]", target)
		}
		return out
	}
	return v
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test body %s: %v", s, err)
	}
	return v
}

// nulSweep puts a NUL character into every string value, one at a time, of
// a request that every body-decoding route of /v1 and /sms/v1 accepts,
// with every text field they take set: each such request is refused with
// the validation error naming that field (400 validation_error on /v1,
// 1009 on /sms/v1, and on a bulk for that item alone), never a 5xx, and
// nothing is stored or debited. The requests without NUL are then
// accepted. It runs on the store under the handler e.h.
func nulSweep(t *testing.T, e *env, smsSvc *sms.SMS, do func(method, path, body string) (int, []byte)) {
	ctx := context.Background()
	contact := e.A.Contact.ID
	v1 := []struct{ method, path, body string }{
		{"POST", "/v1/messages", `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hello","idempotency_key":"nul-sweep-1"}`},
		{"POST", "/v1/messages", `{"channel":"instagram","to":"ig_user_1","type":"image","media_url":"https://example.com/a.jpg","caption":"Look"}`},
		{"POST", "/v1/messages", `{"channel":"messenger","to":"+254712345678","type":"document","media_url":"https://example.com/a.pdf","filename":"invoice.pdf"}`},
		{"POST", "/v1/messages/templates", `{"to":"+254712345678","template_name":"coupon_nul","language":"en","idempotency_key":"nul-sweep-2","components":[
			{"type":"body","parameters":[{"type":"text","text":"Amina"}]},
			{"type":"button","sub_type":"url","index":0,"parameters":[{"type":"text","text":"A-42"}]},
			{"type":"button","sub_type":"quick_reply","index":1,"parameters":[{"type":"payload","payload":"STOP"}]},
			{"type":"button","sub_type":"copy_code","index":2,"parameters":[{"type":"coupon_code","coupon_code":"SAVE10"}]}]}`},
		{"POST", "/v1/messages/templates", `{"to":"+254712345678","template_name":"invoice_nul","language":"en","components":[
			{"type":"header","parameters":[{"type":"document","link":"https://example.com/inv.pdf","filename":"inv.pdf"}]},
			{"type":"body","parameters":[{"type":"text","text":"INV-1"}]}]}`},
		{"POST", "/v1/contacts", `{"firstName":"Nuru","lastName":"Wanjiru","phone":"+254733123456","email":"nuru@example.com","company":"Acme",
			"jobTitle":"CEO","website":"https://acme.example.com","notes":"met at expo","tags":["vip","nairobi"],"lifecycle":"lead"}`},
		{"PATCH", "/v1/contacts/" + contact, `{"firstName":"Amina","lastName":"O","phone":"+254712345678","email":"amina@example.com","company":"Acme",
			"jobTitle":"CTO","website":"https://acme.example.com","notes":"n","tags":["a"],"lifecycle":"customer"}`},
	}
	for _, rq := range v1 {
		doc := decodeJSON(t, rq.body)
		for _, field := range stringPaths(doc, "") {
			msgs, contacts := e.store.messages.Load(), e.store.contacts.Load()
			before, err := e.svc.Workspace(e.A.ID).Contacts.Get(ctx, contact)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(withNUL(doc, "", field))
			status, body := do(rq.method, rq.path, string(b))
			var env envelope
			_ = json.Unmarshal(body, &env)
			if status != 400 || env.Error.Code != "validation_error" || env.Error.Field != field {
				t.Errorf("%s %s with NUL in %s: %d %s; want 400 validation_error naming %s", rq.method, rq.path, field, status, body, field)
			}
			after, err := e.svc.Workspace(e.A.ID).Contacts.Get(ctx, contact)
			if err != nil {
				t.Fatal(err)
			}
			if e.store.messages.Load() != msgs || e.store.contacts.Load() != contacts || after.Version != before.Version {
				t.Errorf("%s %s with NUL in %s: refused but stored something", rq.method, rq.path, field)
			}
		}
		if status, body := do(rq.method, rq.path, rq.body); status != 200 && status != 201 {
			t.Errorf("%s %s without NUL: %d %s; want it accepted", rq.method, rq.path, status, body)
		}
	}

	credit := func() sms.Credit {
		a, err := smsSvc.GetAccount(ctx, smsPartner)
		if err != nil {
			t.Fatal(err)
		}
		return a.Credit
	}
	item := `{"partnerID":"1234","apikey":"` + smsKey + `","pass_type":"plain","clientsmsid":"ref-1","mobile":"254712345678","message":"hi","shortcode":"ACME","timeToSend":"2026-12-01 10:00"}`
	single := []struct{ path, body string }{
		{"/sms/v1/messages", `{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345678","message":"hi","shortcode":"ACME","timeToSend":"2026-12-01 10:00","pass_type":"plain"}`},
		{"/sms/v1/account/balance", `{"apikey":"` + smsKey + `","partnerID":"1234"}`},
		{"/sms/v1/messages/delivery-report", `{"apikey":"` + smsKey + `","partnerID":"1234","messageID":"1"}`},
	}
	for _, rq := range single {
		doc := decodeJSON(t, rq.body)
		for _, field := range stringPaths(doc, "") {
			was := credit()
			b, _ := json.Marshal(withNUL(doc, "", field))
			status, body := do("POST", rq.path, string(b))
			var flat struct {
				Code int    `json:"response-code"`
				Desc string `json:"response-description"`
			}
			_ = json.Unmarshal(body, &flat)
			if status != 400 || flat.Code != 1009 || !strings.HasPrefix(flat.Desc, "Unsupported data type: "+field+": ") {
				t.Errorf("POST %s with NUL in %s: %d %s; want 400, 1009 naming %s", rq.path, field, status, body, field)
			}
			if credit() != was {
				t.Errorf("POST %s with NUL in %s: refused but debited", rq.path, field)
			}
		}
		if status, body := do("POST", rq.path, rq.body); status != 200 {
			t.Errorf("POST %s without NUL: %d %s; want it accepted", rq.path, status, body)
		}
	}
	itemDoc := decodeJSON(t, item)
	for _, field := range stringPaths(itemDoc, "") {
		was := credit()
		bad, _ := json.Marshal(withNUL(itemDoc, "", field))
		status, body := do("POST", "/sms/v1/messages/bulk", fmt.Sprintf(`{"count":2,"smslist":[%s,%s]}`, bad, item))
		var out struct {
			Responses []struct {
				Code int    `json:"response-code"`
				Desc string `json:"response-description"`
			} `json:"responses"`
		}
		_ = json.Unmarshal(body, &out)
		if status != 200 || len(out.Responses) != 2 || out.Responses[0].Code != 1009 || out.Responses[1].Code != 200 ||
			!strings.HasPrefix(out.Responses[0].Desc, "Unsupported data type: "+field+": ") {
			t.Errorf("bulk with NUL in item 0's %s: %d %s; want item 0 refused with 1009 naming %s, item 1 accepted", field, status, body, field)
		}
		if got := was - credit(); got != sms.Credits(1) {
			t.Errorf("bulk with NUL in item 0's %s: debited %s, want 1.00 for item 1 alone", field, got)
		}
	}
}

// TestNULInEveryStringField runs nulSweep on memstore (TestHostileInputs
// and TestHostileInputsPostgres run it on SQLite and PostgreSQL).
func TestNULInEveryStringField(t *testing.T) {
	t.Parallel()
	e, smsSvc := hostileEnv(t, memstore.New())
	nulSweep(t, e, smsSvc, func(method, path, body string) (int, []byte) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("X-API-Key", e.A.Full)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Errorf("%s %s %s: %d %s", method, path, body, w.Code, w.Body)
		}
		return w.Code, w.Body.Bytes()
	})
}
