package httpapi_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/testclock"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// The fuzz targets of the REST surface. Each drives the real handler, as
// a client would, and checks the answer against the documented contract:
// never a 500 or a panic, every refusal the documented error, every
// acceptance really stored. Their seed corpora are in testdata/fuzz/<name>;
// CI runs each for a few seconds (.ci/fuzz).

// unlimited sets every rate limit so high that a fuzz run never reaches
// it, keeping the X-RateLimit headers that checkInvariants expects.
func unlimited(o *httpapi.Options) {
	o.RateLimits = map[string]int{"unauthenticated": math.MaxInt32}
	for _, rt := range httpapi.Routes() {
		o.RateLimits[rt.Name()] = math.MaxInt32
	}
}

// fuzzBodyRoutes are the /v1 routes that decode a body, with the statuses
// each may answer to an arbitrary body.
var fuzzBodyRoutes = []struct {
	method, path string
	statuses     []int
}{
	{"POST", "/v1/messages", []int{201, 400, 409, 413}},
	{"POST", "/v1/messages/templates", []int{201, 400, 404, 409, 413}},
	{"POST", "/v1/contacts", []int{201, 400, 409, 413}},
	{"PATCH", "/v1/contacts/<A.contact>", []int{200, 400, 409, 413}},
}

// jsonHasNUL reports whether the JSON text b holds a NUL character in a
// member name or string value (b that is not JSON holds none).
func jsonHasNUL(b []byte) bool {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return strings.ContainsRune(x, 0)
		case map[string]any:
			for k, c := range x {
				if strings.ContainsRune(k, 0) || walk(c) {
					return true
				}
			}
		case []any:
			for _, c := range x {
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// FuzzV1Body sends an arbitrary body to every /v1 route that decodes one
// (route picks it). Beyond the invariants of every response (checked by
// do: the envelope, its code matching the status, request_id, no 500), the
// status is one the route documents, a 404 is only template_not_found, a
// refusal stores nothing, and a 201 created a record that GET returns. A
// body that is not valid UTF-8 or holds a NUL character in any string is
// never accepted: 400 validation_error (or 413 when too large).
func FuzzV1Body(f *testing.F) {
	f.Add(uint8(0), []byte(okText)) // more seeds in testdata/fuzz/FuzzV1Body
	f.Add(uint8(1), []byte(okTemplate))
	f.Add(uint8(2), []byte(okContact))
	f.Add(uint8(3), []byte(`{"company":"Acme","lastName":null,"tags":[]}`))
	e := setup(f, unlimited)
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := fuzzBodyRoutes[int(route)%len(fuzzBodyRoutes)]
		msgs, contacts := e.store.messages.Load(), e.store.contacts.Load()
		before, err := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
		if err != nil {
			t.Fatal(err)
		}
		r := e.do(t, request{method: rt.method, path: rt.path, key: e.A.Full, body: body})
		what := fmt.Sprintf("%s %s %q", rt.method, rt.path, body)
		if !slices.Contains(rt.statuses, r.status) {
			t.Fatalf("%s: status %d, want one of %v: %s", what, r.status, rt.statuses, r.body)
		}
		if r.status == 404 && r.env.Error.Code != "template_not_found" {
			t.Fatalf("%s: 404 %s", what, r.body)
		}
		if (!utf8.Valid(body) || jsonHasNUL(body)) && r.status != 400 && r.status != 413 {
			t.Fatalf("%s: a body with invalid UTF-8 or NUL answered %d, want 400: %s", what, r.status, r.body)
		}
		if r.status >= 400 {
			after, err := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
			if err != nil {
				t.Fatal(err)
			}
			if e.store.messages.Load() != msgs || e.store.contacts.Load() != contacts || after.Version != before.Version {
				t.Fatalf("%s: refused with %d but stored something", what, r.status)
			}
			return
		}
		obj := r.object(t)
		switch rt.path {
		case "/v1/messages", "/v1/messages/templates":
			id, _ := obj["message_id"].(string)
			if g := e.do(t, request{method: "GET", path: "/v1/messages/" + url.PathEscape(id), key: e.A.Full}); g.status != 200 {
				t.Fatalf("%s: accepted as %s, which GET answers %d", what, id, g.status)
			}
		case "/v1/contacts":
			id, _ := obj["id"].(string)
			if g := e.do(t, request{method: "GET", path: "/v1/contacts/" + url.PathEscape(id), key: e.A.Full}); g.status != 200 {
				t.Fatalf("%s: created %s, which GET answers %d", what, id, g.status)
			}
		}
	})
}

// smsStatusOf is the HTTP status of each SMS response code (README, SMS
// API). 1010 may also be 404, 405 or 413; 1005 is never expected.
var smsStatusOf = map[int]int{200: 200, 1001: 400, 1003: 400, 1004: 402, 1006: 401, 1008: 200, 1009: 400,
	1010: 400, 1012: 400, 4091: 401, 4092: 401, 4093: 404, 4094: 409, 4095: 429}

// FuzzSMSBody sends an arbitrary body to every SMS route (route picks
// it). The answer is always a flat JSON object whose response-code is
// documented, with the documented HTTP status and a description starting
// with the code's standard text; never 1005 or a 500. A bulk answer holds
// one documented entry per item. A body with invalid UTF-8 is refused
// whole; a string holding NUL is never accepted: the request is refused,
// or, in a bulk item, that item.
//
// A route of 128 or more sends the body with an Idempotency-Key derived
// from it, twice: the repeat is answered with the same status and bytes,
// and takes no credit.
func FuzzSMSBody(f *testing.F) {
	f.Add(uint8(0), []byte(sendBody())) // more seeds in testdata/fuzz/FuzzSMSBody
	e := smsSetup(f)
	if _, err := e.svc.TopUp(context.Background(), smsPartner, sms.Credits(1_000_000)); err != nil {
		f.Fatal(err)
	}
	routes := httpapi.SMSRoutes()
	credit := func(t *testing.T) sms.Credit {
		a, err := e.svc.GetAccount(context.Background(), smsPartner)
		if err != nil {
			t.Fatal(err)
		}
		return a.Credit
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := routes[int(route)%len(routes)]
		var r *smsResp
		if route < 128 {
			r = e.post(t, path, string(body))
		} else {
			sum := sha256.Sum256(body)
			key := "fuzz-" + hex.EncodeToString(sum[:16])
			r = e.postKeyed(t, path, string(body), key)
			before := credit(t)
			again := e.postKeyed(t, path, string(body), key)
			if again.status != r.status || again.raw != r.raw {
				t.Fatalf("POST %s %q with key %s: repeat answered %d %s, first %d %s", path, body, key, again.status, again.raw, r.status, r.raw)
			}
			if after := credit(t); after != before {
				t.Fatalf("POST %s %q with key %s: the repeat took credit from %s to %s", path, body, key, before, after)
			}
			if v := again.header.Get("Idempotent-Replayed"); v != "" && (v != "true" || (r.status != 200 && r.status != 402)) {
				t.Fatalf("POST %s %q: repeat %d with Idempotent-Replayed %q", path, body, again.status, v)
			}
		}
		code := r.code()
		what := fmt.Sprintf("POST %s %q", path, body)
		_, bulk := r.body["responses"]
		if bulk && path == "/sms/v1/messages/bulk" && r.status == 200 && code == 0 {
			code = 200 // a bulk answer is {"responses": [...]} only
			r.body["response-description"] = sms.CodeText(200)
		}
		want, ok := smsStatusOf[code]
		if code == 1010 && (r.status == 413) {
			want = 413
		}
		if !ok || r.status != want {
			t.Fatalf("%s: status %d response-code %v: want a documented code with its status: %s", what, r.status, r.body["response-code"], r.raw)
		}
		if desc := r.str("response-description"); !strings.HasPrefix(desc, sms.CodeText(code)) {
			t.Fatalf("%s: response-description %q does not start with %q", what, desc, sms.CodeText(code))
		}
		if !utf8.Valid(body) && code == 200 {
			t.Fatalf("%s: a body with invalid UTF-8 was accepted: %s", what, r.raw)
		}
		if path != "/sms/v1/messages/bulk" || code != 200 {
			if code == 200 && jsonHasNUL(body) {
				t.Fatalf("%s: a body with NUL in a string was accepted: %s", what, r.raw)
			}
			return
		}
		var req struct{ SMSList []json.RawMessage }
		_ = json.Unmarshal(body, &req)
		entries, _ := r.body["responses"].([]any)
		if len(entries) != len(req.SMSList) {
			t.Fatalf("%s: %d entries for %d items", what, len(entries), len(req.SMSList))
		}
		for i, x := range entries {
			en, _ := x.(map[string]any)
			c, _ := en["response-code"].(float64)
			desc, _ := en["response-description"].(string)
			if _, ok := smsStatusOf[int(c)]; !ok || c == 1008 || c == 1012 || c == 4093 || !strings.HasPrefix(desc, sms.CodeText(int(c))) {
				t.Fatalf("%s: entry %d is %v", what, i, en)
			}
			if _, has := en["messageid"]; has != (c == 200) {
				t.Fatalf("%s: entry %d has messageid %v with code %v", what, i, en["messageid"], c)
			}
			if c == 200 && jsonHasNUL(req.SMSList[i]) {
				t.Fatalf("%s: entry %d holds NUL in a string but was accepted", what, i)
			}
		}
	})
}

// FuzzMetaSignature posts an arbitrary body with an arbitrary
// X-Hub-Signature-256 to the Meta receiver: it is refused with 401 (and
// nothing applied) unless the header is sha256= and the HMAC-SHA256 of the
// body under the app secret; the right signature, in either hex case, is
// never refused. A refusal never depends on the body's content.
func FuzzMetaSignature(f *testing.F) {
	f.Add("sha256=00", []byte(`{}`)) // more seeds in testdata/fuzz/FuzzMetaSignature
	e := metaSetup(f, nil, func(o *httpapi.Options) { o.DisableRateLimits = true })
	m := e.sent(f, "whatsapp", metaCustomer, "wamid.SIG")
	f.Fuzz(func(t *testing.T, sig string, body []byte) {
		before, created := e.get(t, m.ID), e.store.created.Load()
		mac := hmac.New(sha256.New, []byte(metaSecret))
		mac.Write(body)
		good := mac.Sum(nil)
		valid := false
		if h, ok := strings.CutPrefix(strings.TrimSpace(sig), "sha256="); ok {
			got, err := hex.DecodeString(h)
			valid = err == nil && hmac.Equal(got, good)
		}
		w := e.post(t, "/webhooks/meta", string(body), sig)
		if valid != (w.Code != 401) {
			t.Fatalf("signature %q on %q: status %d, valid %v", sig, body, w.Code, valid)
		}
		if after := e.get(t, m.ID); w.Code == 401 && (after.Status != before.Status || e.store.created.Load() != created) {
			t.Fatalf("a refused notification changed a message or recorded one: %s", body)
		}
		for _, h := range []string{"sha256=" + hex.EncodeToString(good), "sha256=" + strings.ToUpper(hex.EncodeToString(good))} {
			if w := e.post(t, "/webhooks/meta", string(body), h); w.Code == 401 || w.Code >= 500 {
				t.Fatalf("the right signature %s on %q: status %d %s", h, body, w.Code, w.Body)
			}
		}
	})
}

// searchHandler serves A's contacts of the search fixture on store.
func searchHandler(t testing.TB, store driver.Store) (http.Handler, string) {
	t.Helper()
	ctx := context.Background()
	svc, err := messaging.New(store, fakeprovider.New(), &messaging.Options{Clock: testclock.New(t0).Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "ws_search", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	_, key, err := svc.Workspace("ws_search").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range searchFixture {
		p := c
		if _, err := svc.Workspace("ws_search").Contacts.Create(ctx, &p); err != nil {
			t.Fatalf("fixture %+v: %v", c, err)
		}
	}
	h := httpapi.New(svc, &httpapi.Options{DisableRateLimits: true})
	return h, key
}

// searchFixture holds names and emails full of SQL and LIKE metacharacters
// and of letters whose case folding changes their length.
var searchFixture = []messaging.ContactCreateParams{
	{FirstName: "Amina", LastName: "Odhiambo", Phone: "+254712345678", Email: "amina@example.com"},
	{FirstName: "O'Brien", LastName: "Kamau", Email: "o'brien@example.com"},
	{FirstName: "100%", LastName: "Pure", Email: "100%pure@example.com"},
	{FirstName: "_under", LastName: "score_", Email: "_u_@example.com"},
	{FirstName: "Robert'); DROP TABLE contacts;--", Email: "bobby@example.com"},
	{FirstName: "back\\slash", LastName: `"quoted"`, Email: "back.slash@example.com"},
	{FirstName: "İpek", LastName: "Ünal", Phone: "+905321234567"},
	{FirstName: "Zoë", LastName: "ΔΗΜΗΤΡΗΣ", Email: "ZOE@Example.COM"},
	{FirstName: "李", LastName: "小龙", Phone: "+8613912345678"},
	{FirstName: "Ⅻ", LastName: "ǅemal", Email: "dz@example.com"},
	{FirstName: "Straße", LastName: "Kelvin\u212a", Phone: "+4915123456789"},
	{FirstName: "Ana  Maria", LastName: "da Silva", Phone: "+5511987654321", Email: "ana.maria@example.com"},
}

// FuzzContactSearch runs one search on memstore, on SQLite and, when
// MESSAGING_TEST_POSTGRES_URL is set, on PostgreSQL (a schema of its own,
// filled once) through the handler: all answer the same status, and on 200
// exactly the fixture contacts that the documented rule selects (a folded
// name or the email starts with the query, or the phone's digits start
// with a phone-like query's digits), in the same order; '%', '_' and
// quotes are literal.
func FuzzContactSearch(f *testing.F) {
	f.Add("ami") // more seeds in testdata/fuzz/FuzzContactSearch
	type searched struct {
		name string
		h    http.Handler
		key  string
	}
	mem, memKey := searchHandler(f, memstore.New())
	st, err := sqlitestore.Open(context.Background(), filepath.Join(f.TempDir(), "search.db"), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	lite, liteKey := searchHandler(f, st)
	others := []searched{{"sqlitestore", lite, liteKey}}
	if url := os.Getenv(envPostgresURL); url != "" {
		pg, pgKey := searchHandler(f, openPostgresAt(f, url))
		others = append(others, searched{"pgstore", pg, pgKey})
	}
	get := func(t *testing.T, h http.Handler, key, q string) (int, []string) {
		t.Helper()
		r := httptest.NewRequest("GET", "/v1/contacts?"+url.Values{"search": {q}, "limit": {"100"}}.Encode(), nil)
		r.Header.Set("X-API-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			return w.Code, nil
		}
		var page struct {
			Items []struct{ FirstName, LastName string } `json:"items"`
			Total int                                    `json:"total"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || page.Total != len(page.Items) {
			t.Fatalf("search %q: %v, total %d for %d items: %s", q, err, page.Total, len(page.Items), w.Body)
		}
		var names []string
		for _, it := range page.Items {
			names = append(names, it.FirstName+"|"+it.LastName)
		}
		return w.Code, names
	}
	f.Fuzz(func(t *testing.T, q string) {
		ms, mn := get(t, mem, memKey, q)
		for _, o := range others {
			code, names := get(t, o.h, o.key, q)
			if ms != code || !slices.Equal(mn, names) {
				t.Fatalf("search %q: memstore %d %q, %s %d %q", q, ms, mn, o.name, code, names)
			}
		}
		if ms != 200 {
			if ms != 400 {
				t.Fatalf("search %q: status %d", q, ms)
			}
			return
		}
		search, digits := driver.ContactSearchQuery(q)
		var want []string
		for i := len(searchFixture) - 1; i >= 0; i-- { // newest first
			c := searchFixture[i]
			fold := driver.SearchFold
			full := strings.TrimSpace(strings.TrimSpace(c.FirstName) + " " + strings.TrimSpace(c.LastName))
			if search == "" || strings.HasPrefix(fold(c.FirstName), search) || strings.HasPrefix(fold(c.LastName), search) ||
				strings.HasPrefix(fold(full), search) || (c.Email != "" && strings.HasPrefix(strings.ToLower(c.Email), search)) ||
				(digits != "" && c.Phone != "" && strings.HasPrefix(driver.PhoneDigits(c.Phone), digits)) {
				want = append(want, strings.TrimSpace(c.FirstName)+"|"+strings.TrimSpace(c.LastName))
			}
		}
		if !slices.Equal(want, mn) {
			t.Fatalf("search %q (folded %q, digits %q): got %q, the documented rule selects %q", q, search, digits, mn, want)
		}
	})
}
