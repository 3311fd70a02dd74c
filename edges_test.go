package messaging_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/webhooksig"
)

// TestDispatchDefaults: the defaults DispatchOptions documents.
func TestDispatchDefaults(t *testing.T) {
	t.Parallel()
	got := messaging.DispatchDefaults(messaging.DispatchOptions{})
	want := messaging.DispatchOptions{Workers: 8, BatchSize: 32, SendTimeout: 30 * time.Second, Lease: 60 * time.Second,
		PollInterval: 200 * time.Millisecond, MaxAttempts: 10, MaxAge: 24 * time.Hour, InitialBackoff: time.Second,
		MaxBackoff: 10 * time.Minute, PerSenderRate: 80, SenderInFlight: 7, SenderBusyDelay: time.Second, ConfirmWindow: 5 * time.Minute}
	if d := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".PerSenderBurst" }, cmp.Ignore())); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	// The batch follows the workers; a lease shorter than a send grows.
	got = messaging.DispatchDefaults(messaging.DispatchOptions{Workers: 3, Lease: 10 * time.Second, SendTimeout: 30 * time.Second})
	if got.BatchSize != 12 || got.Lease != 40*time.Second {
		t.Errorf("Workers 3, Lease 10s, SendTimeout 30s: BatchSize %d, Lease %v; want 12 and 40s", got.BatchSize, got.Lease)
	}
	got = messaging.DispatchDefaults(messaging.DispatchOptions{Lease: 30 * time.Second, SendTimeout: 30 * time.Second})
	if got.Lease != 40*time.Second {
		t.Errorf("a lease equal to the send timeout: %v, want 40s", got.Lease)
	}
}

// TestDispatchMaxAgeIsExclusive: an attempt exactly MaxAge after the
// message was accepted is too late: the message fails instead of being
// retried.
func TestDispatchMaxAgeIsExclusive(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{MaxAge: time.Hour, InitialBackoff: time.Second, MaxBackoff: time.Second})
	f.prov.script["+254712345678"] = []error{errors.New("connection reset"), errors.New("connection reset")}
	id := f.send(t, "+254712345678")
	f.dispatch(t) // attempt 1 at t0: retry in about 1 s
	f.clock.Advance(time.Hour)
	f.dispatch(t) // attempt 2 at exactly MaxAge: failed
	if m := f.get(t, id); m.Status != "failed" {
		t.Fatalf("status %q after an attempt at exactly MaxAge, want failed", m.Status)
	}
}

// TestConnectLimits: the edges of the credential rules.
func TestConnectLimits(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	digits := func(n int) string { return strings.Repeat("7", n) }
	for _, tc := range []struct {
		name  string
		p     *connectParams
		field string // "" = accepted
	}{
		{"32-digit ids", waConnect("acme", digits(32), digits(31)+"1", "EAAGtoken1"), ""},
		{"33-digit phone-number id", waConnect("acme", digits(33), "99", "EAAGtoken1"), "phone_number_id"},
		{"33-digit WABA id", waConnect("acme", "12", digits(33), "EAAGtoken1"), "waba_id"},
		{"8-character token", waConnect("acme", "13", "98", "EAAG1234"), ""},
		{"7-character token", waConnect("acme", "14", "97", "EAAG123"), "access_token"},
		{"longest token", waConnect("acme", "15", "96", "E"+strings.Repeat("x", record.MaxAccessToken-1)), ""},
		{"token one too long", waConnect("acme", "16", "95", "E"+strings.Repeat("x", record.MaxAccessToken)), "access_token"},
		{"token with DEL", waConnect("acme", "17", "94", "EAAG\x7ftoken"), "access_token"},
		{"token with ~", waConnect("acme", "18", "93", "EAAG~token"), ""},
		{"token with !", waConnect("acme", "19", "92", "EAAG!token"), ""},
	} {
		_, err := connect(f.ctx, f.svc, tc.p)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.name, err)
			}
			continue
		}
		wantError(t, err, messaging.CodeValidation, tc.field)
	}
}

// TestSendLimitsAreInclusive: every limit of a template send accepts its
// exact maximum (the send then only misses its template) and refuses one
// more, naming the field.
func TestSendLimitsAreInclusive(t *testing.T) {
	t.Parallel()
	f := setup(t)
	text := func(n int) []messaging.SendParameter {
		ps := make([]messaging.SendParameter, n)
		for i := range ps {
			ps[i] = messaging.SendParameter{Type: "text", Text: "x"}
		}
		return ps
	}
	body := func(n int) messaging.SendComponent { return messaging.SendComponent{Type: "body", Parameters: text(n)} }
	button := func(idx int, ps ...messaging.SendParameter) messaging.SendComponent {
		return messaging.SendComponent{Type: "button", SubType: "url", Index: &idx, Parameters: ps}
	}
	many := func(n int) []messaging.SendComponent {
		cs := make([]messaging.SendComponent, n)
		for i := range cs {
			cs[i] = body(1)
		}
		return cs
	}
	for _, tc := range []struct {
		name  string
		comps []messaging.SendComponent
		key   string
		field string // "" = valid (template_not_found follows)
	}{
		{"20 components", many(20), "", ""},
		{"21 components", many(21), "", "components"},
		{"100 parameters", []messaging.SendComponent{body(100)}, "", ""},
		{"101 parameters", []messaging.SendComponent{body(101)}, "", "components[0].parameters"},
		{"button index 9", []messaging.SendComponent{button(9, text(1)...)}, "", ""},
		{"button index 10", []messaging.SendComponent{button(10, text(1)...)}, "", "components[0].index"},
		{"coupon of 15", []messaging.SendComponent{{Type: "button", SubType: "copy_code", Index: ptr(0), Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: strings.Repeat("C", 15)}}}}, "", ""},
		{"coupon of 16", []messaging.SendComponent{{Type: "button", SubType: "copy_code", Index: ptr(0), Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: strings.Repeat("C", 16)}}}}, "", "components[0].parameters[0].coupon_code"},
		{"a bad text after a good one", []messaging.SendComponent{{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "ok"}, {Type: "text", Text: strings.Repeat("x", record.MaxParamText+1)}}}}, "", "components[0].parameters[1].text"},
		{"a bad payload after a good one", []messaging.SendComponent{{Type: "button", SubType: "quick_reply", Index: ptr(0), Parameters: []messaging.SendParameter{{Type: "payload", Payload: "ok"}, {Type: "payload", Payload: strings.Repeat("p", 129)}}}}, "", "components[0].parameters[1].payload"},
		{"idempotency key with ~", nil, "key~1", ""},
		{"idempotency key with DEL", nil, "key\x7f1", "idempotency_key"},
	} {
		_, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712345678", TemplateName: "nope", Language: "en",
			Components: tc.comps, IdempotencyKey: tc.key})
		if tc.field == "" {
			if messaging.ErrorCode(err) != messaging.CodeTemplateNotFound {
				t.Errorf("%s: %v, want it valid (template_not_found)", tc.name, err)
			}
			continue
		}
		wantError(t, err, messaging.CodeValidation, tc.field)
	}
}

// TestContactLimitsAreInclusive: MaxTags tags and page MaxPage are
// accepted; one more is refused.
func TestContactLimitsAreInclusive(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tags := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "t" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		}
		return out
	}
	if _, err := f.acme.Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: "Tag", Phone: "+254712345001", Tags: tags(record.MaxTags)}); err != nil {
		t.Errorf("%d tags: %v", record.MaxTags, err)
	}
	_, err := f.acme.Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: "Tag", Phone: "+254712345002", Tags: tags(record.MaxTags + 1)})
	wantError(t, err, messaging.CodeValidation, "tags")
	if _, err := f.acme.Contacts.List(f.ctx, &messaging.ContactQuery{Page: record.MaxPage}); err != nil {
		t.Errorf("page %d: %v", record.MaxPage, err)
	}
	_, err = f.acme.Contacts.List(f.ctx, &messaging.ContactQuery{Page: record.MaxPage + 1})
	wantError(t, err, messaging.CodeValidation, "page")
}

// TestErrorIsComparesMessages: errors.Is with a target that has a message
// matches only that message; without one, any of the code.
func TestErrorIsComparesMessages(t *testing.T) {
	t.Parallel()
	err := error(&messaging.Error{Code: messaging.CodeConflict, Message: "name: taken"})
	if !errors.Is(err, &messaging.Error{Code: messaging.CodeConflict}) {
		t.Error("a target without message does not match its code")
	}
	if !errors.Is(err, &messaging.Error{Code: messaging.CodeConflict, Message: "name: taken"}) {
		t.Error("a target with the same message does not match")
	}
	if errors.Is(err, &messaging.Error{Code: messaging.CodeConflict, Message: "other"}) {
		t.Error("a target with another message matches")
	}
	if errors.Is(err, &messaging.Error{Code: messaging.CodeNotFound}) {
		t.Error("a target of another code matches")
	}
}

// TestTemplateEventChangesOnlyTheReasonOrID: an event that changes only
// the reason, or only the provider's id, is stored.
func TestTemplateEventChangesOnlyTheReasonOrID(t *testing.T) {
	t.Parallel()
	f := connectedFixture(t, &tokenRefuser{})
	tpl, err := f.svc.Workspace("acme").Templates.Create(f.ctx, approved("greeting", body("Hi")))
	if err != nil {
		t.Fatal(err)
	}
	apply := func(ev messaging.TemplateEvent) *messaging.Template {
		t.Helper()
		ev.OwnerID, ev.Name, ev.Language = "5555", "greeting", "en"
		if _, err := f.svc.ApplyTemplateEvent(f.ctx, &ev); err != nil {
			t.Fatal(err)
		}
		got, err := f.svc.Workspace("acme").Templates.Get(f.ctx, tpl.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	apply(messaging.TemplateEvent{Event: "PAUSED", Reason: "LOW_QUALITY", ProviderTemplateID: "77"})
	if got := apply(messaging.TemplateEvent{Event: "PAUSED", Reason: "FIRST_PAUSE", ProviderTemplateID: "77"}); got.StatusReason != "FIRST_PAUSE" {
		t.Errorf("a new reason in the same state: %q, want FIRST_PAUSE", got.StatusReason)
	}
	// A template listed by name gets the provider's id from a later event.
	tpl2, err := f.svc.Workspace("acme").Templates.Create(f.ctx, approved("second", body("Hi")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "5555", Name: "second", Language: "en", Event: "APPROVED", ProviderTemplateID: "88"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.svc.Workspace("acme").Templates.Get(f.ctx, tpl2.ID); got.ProviderTemplateID != "88" {
		t.Errorf("provider id after an event that only brings it: %q, want 88", got.ProviderTemplateID)
	}
}

// TestTemplateAuthoringEdges: braces at the very start, the longest name
// and sample code, and an edit that would leave the draft state.
func TestTemplateAuthoringEdges(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ts := f.acme.Templates
	create := func(name, text string, comps ...messaging.TemplateComponent) error {
		_, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: name, Category: "UTILITY", Language: "en", Status: "draft",
			Components: append([]messaging.TemplateComponent{body(text)}, comps...)})
		return err
	}
	for _, text := range []string{"}}x", "}}{{1}}", "{{}}"} {
		if err := create("braces", text); messaging.ErrorCode(err) != messaging.CodeValidation {
			t.Errorf("body %q: %v, want a validation_error", text, err)
		} else if e := wantError(t, err, messaging.CodeValidation, "components[0].text"); e != nil && text != "{{}}" && !strings.Contains(e.Message, "unbalanced") {
			t.Errorf("body %q: %q, want it called unbalanced", text, e.Message)
		}
	}
	if err := create(strings.Repeat("n", record.MaxTemplateName), "Hi"); err != nil {
		t.Errorf("a name of %d characters: %v", record.MaxTemplateName, err)
	}
	code := func(example string) messaging.TemplateComponent {
		return messaging.TemplateComponent{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "COPY_CODE", Example: example}}}
	}
	if err := create("code_15", "Hi", code(strings.Repeat("C", 15))); err != nil {
		t.Errorf("a sample code of 15: %v", err)
	}
	wantError(t, create("code_16", "Hi", code(strings.Repeat("C", 16))), messaging.CodeValidation, "components[1].buttons[0].example")
	d, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "edit_me", Category: "UTILITY", Language: "en", Status: "draft",
		Components: []messaging.TemplateComponent{body("Hi")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.Update(f.ctx, d.ID, &messaging.TemplateCreateParams{Name: "edit_me", Category: "UTILITY", Language: "en", Status: "approved",
		Components: []messaging.TemplateComponent{body("Hi")}})
	wantError(t, err, messaging.CodeValidation, "status")
	if _, err := ts.Update(f.ctx, d.ID, &messaging.TemplateCreateParams{Name: "edit_me", Category: "UTILITY", Language: "en", Status: "draft",
		Components: []messaging.TemplateComponent{body("Hello")}}); err != nil {
		t.Errorf("an edit that says draft: %v", err)
	}
}

// TestTemplateSyncDefaults: zero means the documented defaults; a negative
// interval (at start only) and a given one are kept.
func TestTemplateSyncDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want messaging.TemplateSyncOptions }{
		{messaging.TemplateSyncOptions{}, messaging.TemplateSyncOptions{Every: time.Hour, Lease: 5 * time.Minute, ResubmitAfter: time.Minute}},
		{messaging.TemplateSyncOptions{Every: -1, Lease: time.Second, ResubmitAfter: time.Second}, messaging.TemplateSyncOptions{Every: -1, Lease: time.Second, ResubmitAfter: time.Second}},
		{messaging.TemplateSyncOptions{Every: 5 * time.Minute}, messaging.TemplateSyncOptions{Every: 5 * time.Minute, Lease: 5 * time.Minute, ResubmitAfter: time.Minute}},
	} {
		svc, err := messaging.New(memstore.New(), fakeprovider.New(), &messaging.Options{TemplateSync: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		if got := messaging.TemplateSyncOptionsOf(svc); got != tc.want {
			t.Errorf("TemplateSync %+v: runs with %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestMediaURLOfMaxLength: a media link of exactly MaxURL bytes is
// accepted, one more is refused.
func TestMediaURLOfMaxLength(t *testing.T) {
	t.Parallel()
	f := setup(t)
	link := func(n int) string {
		const head = "https://example.com/"
		return head + strings.Repeat("a", n-len(head))
	}
	if _, err := f.acme.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "image", MediaURL: link(record.MaxURL)}); err != nil {
		t.Errorf("a link of %d bytes: %v", record.MaxURL, err)
	}
	_, err := f.acme.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "image", MediaURL: link(record.MaxURL + 1)})
	wantError(t, err, messaging.CodeValidation, "media_url")
}

// TestSubmissionAnswers: the provider's answer to a submission is what
// the template becomes: approved at once (with its quality), rejected
// with its reason, or pending.
func TestSubmissionAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer                  messaging.ProviderTemplate
		status, reason, quality string
	}{
		{messaging.ProviderTemplate{ID: "1", Status: "APPROVED", Quality: "GREEN"}, "approved", "", "GREEN"},
		{messaging.ProviderTemplate{ID: "2", Status: "REJECTED", Reason: "INVALID_FORMAT"}, "rejected", "INVALID_FORMAT", ""},
		{messaging.ProviderTemplate{ID: "3", Status: "PENDING"}, "pending", "", ""},
		{messaging.ProviderTemplate{ID: "4", Status: "SOMETHING_NEW"}, "pending", "", ""},
		{messaging.ProviderTemplate{ID: "5", Status: "DELETED"}, "pending", "", ""},
	} {
		f, prov := syncFixture(t)
		prov.answer = &tc.answer
		tpl, err := f.svc.Workspace("acme").Templates.Create(f.ctx, &messaging.TemplateCreateParams{Name: "t", Category: "UTILITY", Language: "en",
			Components: []messaging.TemplateComponent{body("Hi")}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := f.svc.Workspace("acme").Templates.Get(f.ctx, tpl.ID)
		if got.Status != tc.status || got.StatusReason != tc.reason || got.Quality != tc.quality || got.ProviderTemplateID != tc.answer.ID {
			t.Errorf("answer %+v: stored %s %q %q id %q; want %s %q %q id %s", tc.answer, got.Status, got.StatusReason, got.Quality, got.ProviderTemplateID,
				tc.status, tc.reason, tc.quality, tc.answer.ID)
		}
	}
}

// TestDeleteReachesTheProviderOnlyWhenSubmitted: a draft is deleted here
// only; a submitted template at the provider first.
func TestDeleteReachesTheProviderOnlyWhenSubmitted(t *testing.T) {
	t.Parallel()
	f, prov := syncFixture(t)
	ts := f.svc.Workspace("acme").Templates
	d, _ := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "draft_one", Category: "UTILITY", Language: "en", Status: "draft", Components: []messaging.TemplateComponent{body("Hi")}})
	s, _ := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "submitted_one", Category: "UTILITY", Language: "en", Components: []messaging.TemplateComponent{body("Hi")}})
	for _, id := range []string{d.ID, s.ID} {
		if err := ts.Delete(f.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(prov.deleted, []string{"submitted_one"}) {
		t.Errorf("deleted at the provider: %v, want only submitted_one", prov.deleted)
	}
}

// TestSyncMatchesAndChanges: a listed template is matched by the
// provider's id before its name; each changed field is an update; an
// empty category keeps ours; an unchanged template is left alone.
func TestSyncMatchesAndChanges(t *testing.T) {
	t.Parallel()
	base := func() *messaging.ProviderTemplate {
		return &messaging.ProviderTemplate{ID: "10", Name: "promo", Language: "en", Category: "MARKETING", Status: "APPROVED",
			Components: []messaging.TemplateComponent{body("Sale")}}
	}
	for _, tc := range []struct {
		name    string
		change  func(p *messaging.ProviderTemplate)
		updated int
		check   func(t *testing.T, got *messaging.Template)
	}{
		{"unchanged", func(*messaging.ProviderTemplate) {}, 0, nil},
		{"renamed, same id", func(p *messaging.ProviderTemplate) { p.Name = "promo_v2" }, 1,
			func(t *testing.T, got *messaging.Template) {
				if got.Name != "promo_v2" {
					t.Errorf("name %q", got.Name)
				}
			}},
		{"category", func(p *messaging.ProviderTemplate) { p.Category = "UTILITY" }, 1, nil},
		{"no category listed", func(p *messaging.ProviderTemplate) { p.Category = "" }, 0,
			func(t *testing.T, got *messaging.Template) {
				if got.Category != "MARKETING" {
					t.Errorf("category %q, want ours kept", got.Category)
				}
			}},
		{"status", func(p *messaging.ProviderTemplate) { p.Status = "PAUSED" }, 1, nil},
		{"reason", func(p *messaging.ProviderTemplate) { p.Reason = "LOW_QUALITY" }, 1, nil},
		{"quality", func(p *messaging.ProviderTemplate) { p.Quality = "RED" }, 1, nil},
		{"language", func(p *messaging.ProviderTemplate) { p.Language = "en_US" }, 1, nil},
		{"components", func(p *messaging.ProviderTemplate) { p.Components = []messaging.TemplateComponent{body("Sale today")} }, 1, nil},
		{"header format", func(p *messaging.ProviderTemplate) {
			p.Components = []messaging.TemplateComponent{{Type: "HEADER", Format: "IMAGE"}, body("Sale")}
		}, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, prov := syncFixture(t)
			prov.list = []*messaging.ProviderTemplate{base()}
			if res, err := f.svc.SyncTemplates(f.ctx, "acme"); err != nil || res.Created != 1 {
				t.Fatalf("first sync = %+v, %v", res, err)
			}
			changed := base()
			tc.change(changed)
			prov.list = []*messaging.ProviderTemplate{changed}
			f.clock.Advance(time.Minute)
			res, err := f.svc.SyncTemplates(f.ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			if res.Created != 0 || res.Removed != 0 || res.Updated != tc.updated {
				t.Errorf("second sync = %+v, want %d updated, none created or removed", res, tc.updated)
			}
			if tc.check != nil {
				all, _ := f.store.TemplateList(f.ctx, &driver.TemplateListParams{WorkspaceID: "acme"})
				if len(all) != 1 {
					t.Fatalf("%d templates", len(all))
				}
				tc.check(t, all[0])
			}
		})
	}
}

// TestSyncResubmitsAfterExactlyResubmitAfter: a pending template the
// provider never received is handed over again once ResubmitAfter has
// passed (inclusive), and counted only when the provider took it.
func TestSyncResubmitsAfterExactlyResubmitAfter(t *testing.T) {
	t.Parallel()
	f, prov := syncFixture(t)
	prov.submitErr = errors.New("connection refused")
	if _, err := f.svc.Workspace("acme").Templates.Create(f.ctx, &messaging.TemplateCreateParams{Name: "lost", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Hi")}}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute) // exactly ResubmitAfter
	res, err := f.svc.SyncTemplates(f.ctx, "acme")
	if err != nil || res.Resubmitted != 0 || len(prov.submitted) != 2 {
		t.Fatalf("sync with the provider still refusing = %+v, %v, submissions %v; want tried again, not counted", res, err, prov.submitted)
	}
	prov.submitErr = nil
	f.clock.Advance(time.Minute)
	if res, err = f.svc.SyncTemplates(f.ctx, "acme"); err != nil || res.Resubmitted != 1 {
		t.Errorf("sync with the provider back = %+v, %v; want 1 resubmitted", res, err)
	}
}

// TestDefaultWebhookSchedule: the documented retry schedule.
func TestDefaultWebhookSchedule(t *testing.T) {
	t.Parallel()
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if got := defaults.DefaultWebhookSchedule(); !slices.Equal(got, want) {
		t.Errorf("DefaultWebhookSchedule() = %v, want %v", got, want)
	}
}

// TestWebhookSecretAndToleranceEdges: secrets of 16 and 64 bytes sign,
// 15 and 65 do not; a signature exactly the tolerance old or early
// verifies, one second more does not.
func TestWebhookSecretAndToleranceEdges(t *testing.T) {
	t.Parallel()
	secret := func(n int) string { return "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, n)) }
	at := time.Unix(1_700_000_000, 0)
	for n, ok := range map[int]bool{15: false, 16: true, 64: true, 65: false} {
		if _, err := webhooksig.Sign(secret(n), "msg_1", at, []byte("{}")); (err == nil) != ok {
			t.Errorf("a secret of %d bytes: %v, want accepted %v", n, err, ok)
		}
	}
	sig, err := webhooksig.Sign(secret(32), "msg_1", at, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {strconv.FormatInt(at.Unix(), 10)}, "Webhook-Signature": {sig}}
	for _, tc := range []struct {
		now time.Time
		ok  bool
	}{
		{at.Add(5 * time.Minute), true}, {at.Add(5*time.Minute + time.Second), false},
		{at.Add(-5 * time.Minute), true}, {at.Add(-5*time.Minute - time.Second), false},
	} {
		if err := webhooksig.Verify(secret(32), h, []byte("{}"), tc.now, 5*time.Minute); (err == nil) != tc.ok {
			t.Errorf("verified at %v from the signature: %v, want ok %v", tc.now.Sub(at), err, tc.ok)
		}
	}
}

// TestValidationEdges: an email of 254 characters, phone digits 0 and 9.
func TestValidationEdges(t *testing.T) {
	t.Parallel()
	f := setup(t)
	email := strings.Repeat("a", 254-len("@example.com")) + "@example.com"
	if _, err := f.acme.Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: "Long", Email: email}); err != nil {
		t.Errorf("an email of 254 characters: %v", err)
	}
	_, err := f.acme.Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: "Long", Email: "a" + email})
	wantError(t, err, messaging.CodeValidation, "email")
	if _, digits := driver.ContactSearchQuery("+254 (0) 790-900"); digits != "2540790900" {
		t.Errorf("digits of +254 (0) 790-900 = %q, want 2540790900", digits)
	}
}

// TestWellFormedKeyEdges: '~' is a visible character of a key, DEL and
// space are not.
func TestWellFormedKeyEdges(t *testing.T) {
	t.Parallel()
	for key, ok := range map[string]bool{
		"mk_" + strings.Repeat("a", 16) + "~":    true,
		"mk_" + strings.Repeat("a", 16) + "!":    true,
		"mk_" + strings.Repeat("a", 16) + "\x7f": false,
		"mk_" + strings.Repeat("a", 16) + " ":    false,
	} {
		if messaging.WellFormedKey(key) != ok {
			t.Errorf("WellFormedKey(%q) = %v, want %v", key, !ok, ok)
		}
	}
}

// TestSyncTakesTheProvidersNewID: a template matched by name whose
// provider id changed (deleted and created again at the provider) takes
// the new id.
func TestSyncTakesTheProvidersNewID(t *testing.T) {
	t.Parallel()
	f, prov := syncFixture(t)
	prov.list = []*messaging.ProviderTemplate{{ID: "10", Name: "promo", Language: "en", Category: "MARKETING", Status: "APPROVED",
		Components: []messaging.TemplateComponent{body("Sale")}}}
	if _, err := f.svc.SyncTemplates(f.ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	prov.list[0].ID = "11"
	f.clock.Advance(time.Minute)
	res, err := f.svc.SyncTemplates(f.ctx, "acme")
	if err != nil || res.Updated != 1 || res.Created != 0 {
		t.Fatalf("sync after the id changed = %+v, %v; want 1 updated", res, err)
	}
	all, _ := f.store.TemplateList(f.ctx, &driver.TemplateListParams{WorkspaceID: "acme"})
	if len(all) != 1 || all[0].ProviderTemplateID != "11" {
		t.Errorf("templates = %+v, want promo with id 11", all)
	}
}

// staleStore refuses every contact update as stale, counting them.
type staleStore struct {
	driver.Store
	updates int
}

func (s *staleStore) ContactUpdate(context.Context, *driver.ContactReplaceParams) error {
	s.updates++
	return driver.ErrStale
}

// TestContactUpdateGivesUpOnEndlessRaces: an update that always loses the
// race stops after a bounded number of attempts with a conflict.
func TestContactUpdateGivesUpOnEndlessRaces(t *testing.T) {
	t.Parallel()
	st := &staleStore{Store: memstore.New()}
	svc, err := messaging.New(st, fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	c, err := svc.Workspace("acme").Contacts.Create(ctx, &messaging.ContactCreateParams{FirstName: "Amina", Phone: "+254712345678"})
	if err != nil {
		t.Fatal(err)
	}
	name := "Zawadi"
	_, err = svc.Workspace("acme").Contacts.Update(ctx, c.ID, &messaging.ContactUpdateParams{FirstName: &name})
	wantError(t, err, messaging.CodeConflict, "")
	if st.updates < 2 || st.updates > 1001 {
		t.Errorf("%d update attempts, want a retry and a bound", st.updates)
	}
}
