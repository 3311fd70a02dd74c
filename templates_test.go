package messaging_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

func header(text string) messaging.TemplateComponent {
	return messaging.TemplateComponent{Type: "HEADER", Format: "TEXT", Text: text}
}

func mediaHeader(format string) messaging.TemplateComponent {
	return messaging.TemplateComponent{Type: "HEADER", Format: format}
}

func footer(text string) messaging.TemplateComponent {
	return messaging.TemplateComponent{Type: "FOOTER", Text: text}
}

func buttons(bs ...messaging.TemplateButton) messaging.TemplateComponent {
	return messaging.TemplateComponent{Type: "BUTTONS", Buttons: bs}
}

func quickReply(text string) messaging.TemplateButton {
	return messaging.TemplateButton{Type: "QUICK_REPLY", Text: text}
}

func urlButton(url string) messaging.TemplateButton {
	return messaging.TemplateButton{Type: "URL", Text: "Open", URL: url}
}

func textParams(texts ...string) []messaging.SendParameter {
	ps := make([]messaging.SendParameter, len(texts))
	for i, s := range texts {
		ps[i] = messaging.SendParameter{Type: "text", Text: s}
	}
	return ps
}

func TestTemplateCreateBadInputs(t *testing.T) {
	t.Parallel()
	okBody := body("Hello {{1}}")
	tests := []struct {
		name  string
		p     *messaging.TemplateCreateParams
		field string
	}{
		{"nil params", nil, "body"},
		{"missing name", &messaging.TemplateCreateParams{Category: "UTILITY", Language: "en", Components: []messaging.TemplateComponent{okBody}}, "name"},
		{"name with uppercase", approved("Order_Update", okBody), "name"},
		{"name with dash", approved("order-update", okBody), "name"},
		{"name with space", approved("order update", okBody), "name"},
		{"name with accent", approved("commandé", okBody), "name"},
		{"name too long", approved(strings.Repeat("a", record.MaxTemplateName+1), okBody), "name"},
		{"missing category", &messaging.TemplateCreateParams{Name: "x", Language: "en", Components: []messaging.TemplateComponent{okBody}}, "category"},
		{"lowercase category", &messaging.TemplateCreateParams{Name: "x", Category: "marketing", Language: "en", Components: []messaging.TemplateComponent{okBody}}, "category"},
		{"unknown category", &messaging.TemplateCreateParams{Name: "x", Category: "PROMO", Language: "en", Components: []messaging.TemplateComponent{okBody}}, "category"},
		{"missing language", &messaging.TemplateCreateParams{Name: "x", Category: "UTILITY", Components: []messaging.TemplateComponent{okBody}}, "language"},
		{"language word", &messaging.TemplateCreateParams{Name: "x", Category: "UTILITY", Language: "english", Components: []messaging.TemplateComponent{okBody}}, "language"},
		{"language with dash", &messaging.TemplateCreateParams{Name: "x", Category: "UTILITY", Language: "en-US", Components: []messaging.TemplateComponent{okBody}}, "language"},
		{"two languages", &messaging.TemplateCreateParams{Name: "x", Category: "UTILITY", Language: "en,sw", Components: []messaging.TemplateComponent{okBody}}, "language"},
		{"unknown status", &messaging.TemplateCreateParams{Name: "x", Category: "UTILITY", Language: "en", Status: "live", Components: []messaging.TemplateComponent{okBody}}, "status"},
		{"no components", approved("x"), "components"},
		{"no BODY", approved("x", header("Hi"), footer("Bye")), "components"},
		{"empty body", approved("x", body("")), "components[0].text"},
		{"blank body", approved("x", body("   ")), "components[0].text"},
		{"body 1025 chars", approved("x", body(runes('é', record.MaxTemplateBody+1))), "components[0].text"},
		{"variables with gaps", approved("x", body("Hi {{1}}, order {{3}}")), "components[0].text"},
		{"variables not from 1", approved("x", body("Hi {{2}}")), "components[0].text"},
		{"malformed variable x", approved("x", body("Hi {{x}}")), "components[0].text"},
		{"variable zero", approved("x", body("Hi {{0}}")), "components[0].text"},
		{"variable leading zero", approved("x", body("Hi {{01}}")), "components[0].text"},
		{"variable with spaces", approved("x", body("Hi {{ 1 }}")), "components[0].text"},
		{"unbalanced braces", approved("x", body("Hi {{1}")), "components[0].text"},
		{"header 61 chars", approved("x", header(strings.Repeat("h", record.MaxTemplateHeader+1)), okBody), "components[0].text"},
		{"header without text", approved("x", header(""), okBody), "components[0].text"},
		{"header with two variables", approved("x", header("{{1}} and {{2}}"), okBody), "components[0].text"},
		{"header unknown format", approved("x", mediaHeader("GIF"), okBody), "components[0].format"},
		{"image header with text", approved("x", messaging.TemplateComponent{Type: "HEADER", Format: "IMAGE", Text: "hi"}, okBody), "components[0].text"},
		{"footer 61 chars", approved("x", okBody, footer(strings.Repeat("f", record.MaxTemplateFooter+1))), "components[1].text"},
		{"empty footer", approved("x", okBody, footer("")), "components[1].text"},
		{"footer with variable", approved("x", okBody, footer("Ref {{1}}")), "components[1].text"},
		{"format on body", approved("x", messaging.TemplateComponent{Type: "BODY", Format: "TEXT", Text: "Hi"}), "components[0].format"},
		{"two bodies", approved("x", okBody, body("again")), "components[1].type"},
		{"unknown component", approved("x", okBody, messaging.TemplateComponent{Type: "CAROUSEL"}), "components[1].type"},
		{"lowercase component type", approved("x", messaging.TemplateComponent{Type: "body", Text: "Hi"}), "components[0].type"},
		{"buttons on body", approved("x", messaging.TemplateComponent{Type: "BODY", Text: "Hi", Buttons: []messaging.TemplateButton{quickReply("Yes")}}), "components[0].buttons"},
		{"buttons component empty", approved("x", okBody, buttons()), "components[1].buttons"},
		{"4 quick replies", approved("x", okBody, buttons(quickReply("a"), quickReply("b"), quickReply("c"), quickReply("d"))), "components[1].buttons"},
		{"3 URL buttons", approved("x", okBody, buttons(urlButton("https://a.example"), urlButton("https://b.example"), urlButton("https://c.example"))), "components[1].buttons"},
		{"URL and 2 phone buttons", approved("x", okBody, buttons(urlButton("https://a.example"),
			messaging.TemplateButton{Type: "PHONE_NUMBER", Text: "Call", PhoneNumber: kenya},
			messaging.TemplateButton{Type: "PHONE_NUMBER", Text: "Call 2", PhoneNumber: kenya2})), "components[1].buttons"},
		{"2 copy code buttons", approved("x", okBody, buttons(
			messaging.TemplateButton{Type: "COPY_CODE", Example: "A1"}, messaging.TemplateButton{Type: "COPY_CODE", Example: "B2"})), "components[1].buttons"},
		{"button without text", approved("x", okBody, buttons(quickReply(""))), "components[1].buttons[0].text"},
		{"button text 26 chars", approved("x", okBody, buttons(quickReply(strings.Repeat("b", record.MaxButtonText+1)))), "components[1].buttons[0].text"},
		{"unknown button type", approved("x", okBody, buttons(messaging.TemplateButton{Type: "FLOW", Text: "Go"})), "components[1].buttons[0].type"},
		{"URL button not a URL", approved("x", okBody, buttons(urlButton("example.com/track"))), "components[1].buttons[0].url"},
		{"URL button variable in the middle", approved("x", okBody, buttons(urlButton("https://example.com/{{1}}/track"))), "components[1].buttons[0].url"},
		{"URL button variable 2", approved("x", okBody, buttons(urlButton("https://example.com/{{2}}"))), "components[1].buttons[0].url"},
		{"phone button bad number", approved("x", okBody, buttons(messaging.TemplateButton{Type: "PHONE_NUMBER", Text: "Call", PhoneNumber: "0712345678"})), "components[1].buttons[0].phone_number"},
		{"copy code without example", approved("x", okBody, buttons(messaging.TemplateButton{Type: "COPY_CODE"})), "components[1].buttons[0].example"},
		{"examples on a footer", approved("x", okBody, messaging.TemplateComponent{Type: "FOOTER", Text: "Bye", Examples: []string{"a"}}), "components[1].examples"},
		{"examples on an image header", approved("x", messaging.TemplateComponent{Type: "HEADER", Format: "IMAGE", Examples: []string{"a"}}, okBody), "components[0].examples"},
		{"fewer examples than variables", approved("x", messaging.TemplateComponent{Type: "BODY", Text: "Hi {{1}} {{2}}", Examples: []string{"Ann"}}), "components[0].examples"},
		{"more examples than variables", approved("x", messaging.TemplateComponent{Type: "BODY", Text: "Hi {{1}}", Examples: []string{"Ann", "Bob"}}), "components[0].examples"},
		{"examples without variables", approved("x", messaging.TemplateComponent{Type: "BODY", Text: "Hi", Examples: []string{"Ann"}}), "components[0].examples"},
		{"blank example", approved("x", messaging.TemplateComponent{Type: "BODY", Text: "Hi {{1}} {{2}}", Examples: []string{"Ann", " "}}), "components[0].examples[1]"},
		{"example too long", approved("x", header("Hi {{1}}"), messaging.TemplateComponent{Type: "BODY", Text: "Hi {{1}}", Examples: []string{strings.Repeat("e", record.MaxParamText+1)}}), "components[1].examples[0]"},
		{"copy code example 16 chars", approved("x", okBody, buttons(messaging.TemplateButton{Type: "COPY_CODE", Example: strings.Repeat("C", 16)})), "components[1].buttons[0].example"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			tpl, err := f.acme.Templates.Create(f.ctx, tc.p)
			if tpl != nil {
				t.Errorf("Create returned %+v with an error", tpl)
			}
			wantError(t, err, messaging.CodeValidation, tc.field)
			if c := f.store.counts(); c.Templates != 0 {
				t.Errorf("templates stored = %d, want 0", c.Templates)
			}
			// CheckTemplate is the rule Create runs: the same error.
			if check := messaging.CheckTemplate(tc.p); check == nil || err == nil || check.Error() != err.Error() {
				t.Errorf("CheckTemplate = %v; want Create's %v", check, err)
			}
		})
	}
}

// TestCheckTemplateIsUpdatesRule: CheckTemplate accepts what Create
// accepts, and Update refuses what it refuses with the same error,
// leaving the draft unchanged.
func TestCheckTemplateIsUpdatesRule(t *testing.T) {
	f := setup(t)
	good := &messaging.TemplateCreateParams{Name: "order_update", Category: "UTILITY", Language: "en", Status: record.TemplateDraft,
		Components: []messaging.TemplateComponent{header("Order {{1}}"), body("Hi {{1}}, it ships {{2}}"), footer("Thanks"), buttons(quickReply("OK"))}}
	if err := messaging.CheckTemplate(good); err != nil {
		t.Fatalf("CheckTemplate refused a valid template: %v", err)
	}
	tpl, err := f.acme.Templates.Create(f.ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	bad := *good
	bad.Components = []messaging.TemplateComponent{body("Hi {{1}}, it ships {{3}}")}
	check := messaging.CheckTemplate(&bad)
	_, err = f.acme.Templates.Update(f.ctx, tpl.ID, &bad)
	wantError(t, err, messaging.CodeValidation, "components[0].text")
	if check == nil || err == nil || check.Error() != err.Error() {
		t.Errorf("CheckTemplate = %v; want Update's %v", check, err)
	}
	if got, _ := f.acme.Templates.Get(f.ctx, tpl.ID); len(got.Components) != 4 {
		t.Errorf("the refused update changed the draft: %+v", got.Components)
	}
	if c := f.store.counts(); c.Templates != 1 {
		t.Errorf("templates stored = %d, want 1 (CheckTemplate stores nothing)", c.Templates)
	}
}

func TestTemplateCreateLimitsAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		comps []messaging.TemplateComponent
	}{
		{"body 1024 chars", []messaging.TemplateComponent{body(runes('é', record.MaxTemplateBody))}},
		{"header and footer 60 chars", []messaging.TemplateComponent{header(runes('h', 60)), body("Hi"), footer(runes('f', 60))}},
		{"3 quick replies", []messaging.TemplateComponent{body("Hi"), buttons(quickReply("a"), quickReply("b"), quickReply("c"))}},
		{"2 call to actions", []messaging.TemplateComponent{body("Hi"), buttons(urlButton("https://a.example/{{1}}"),
			messaging.TemplateButton{Type: "PHONE_NUMBER", Text: "Call", PhoneNumber: kenya})}},
		{"repeated variable", []messaging.TemplateComponent{body("{{1}} and {{2}} and {{1}} again")}},
		{"variables out of order", []messaging.TemplateComponent{body("{{2}} then {{1}}")}},
		{"media headers", []messaging.TemplateComponent{mediaHeader("VIDEO"), body("Hi")}},
		{"components in any order", []messaging.TemplateComponent{footer("Bye"), body("Hi"), header("Hello")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.mustTemplate(t, f.acme, approved("tpl", tc.comps...))
		})
	}
}

func TestTemplateCreate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := &messaging.TemplateCreateParams{Name: "order_update", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Order {{1}} shipped")}}
	tpl := f.mustTemplate(t, f.acme, p)
	want := &messaging.Template{
		ID: tpl.ID, WorkspaceID: "acme", Name: "order_update", Category: "UTILITY", Language: "en",
		Status: record.TemplatePending, Components: p.Components, CreatedAt: t0, UpdatedAt: t0,
		// Created without a status, it was submitted to the provider,
		// which gave it its id.
		ProviderTemplateID: "fake-tpl-1",
		SendExample: &messaging.SendTemplateParams{To: record.ExampleRecipient, TemplateName: "order_update", Language: "en",
			Components: []messaging.SendComponent{{Type: "body", Parameters: textParams("example 1")}}},
	}
	if d := cmp.Diff(want, tpl); d != "" {
		t.Errorf("Create mismatch (-want +got):\n%s", d)
	}
	got, err := f.acme.Templates.Get(f.ctx, tpl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Get mismatch (-want +got):\n%s", d)
	}

	// Duplicate name and language: conflict, whatever the state.
	dup := *p
	dup.Components = []messaging.TemplateComponent{body("Corrected")}
	_, err = f.acme.Templates.Create(f.ctx, &dup)
	wantError(t, err, messaging.CodeConflict, "name")
	// Same name in another language, or in another workspace: fine.
	sw := *p
	sw.Language = "sw"
	f.mustTemplate(t, f.acme, &sw)
	enUS := *p
	enUS.Language = "en_US"
	f.mustTemplate(t, f.acme, &enUS)
	f.mustTemplate(t, f.other, p)
	if c := f.store.counts(); c.Templates != 4 {
		t.Errorf("templates stored = %d, want 4", c.Templates)
	}

	_, err = f.svc.Workspace("ghost").Templates.Create(f.ctx, p)
	wantError(t, err, messaging.CodeNotFound, "")
}

func TestTemplateTransitions(t *testing.T) {
	t.Parallel()
	states := messaging.TemplateStatuses()
	allowed := map[[2]string]bool{
		{"pending", "approved"}:  true,
		{"pending", "rejected"}:  true,
		{"approved", "paused"}:   true,
		{"approved", "disabled"}: true,
		{"paused", "approved"}:   true,
		{"paused", "disabled"}:   true,
	}
	for _, from := range states {
		for _, to := range states {
			ok := allowed[[2]string{from, to}]
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				t.Parallel()
				f := setup(t)
				p := approved("tpl", body("Hi"))
				p.Status = from
				tpl := f.mustTemplate(t, f.acme, p)
				f.clock.Advance(3600e9)
				got, err := f.acme.Templates.SetStatus(f.ctx, tpl.ID, to, "quality")
				after, gerr := f.acme.Templates.Get(f.ctx, tpl.ID)
				if gerr != nil {
					t.Fatal(gerr)
				}
				if !ok {
					if got != nil {
						t.Errorf("SetStatus returned %+v with an error", got)
					}
					wantError(t, err, messaging.CodeConflict, "status")
					if after.Status != from || !after.UpdatedAt.Equal(t0) {
						t.Errorf("after refused move: status %s updated %v, want %s and %v", after.Status, after.UpdatedAt, from, t0)
					}
					return
				}
				if err != nil {
					t.Fatalf("SetStatus: %v", err)
				}
				if got.Status != to || got.StatusReason != "quality" || !got.UpdatedAt.Equal(t0.Add(3600e9)) || got.SendExample == nil {
					t.Errorf("SetStatus = status %s reason %q updated %v example %v; want %s, quality, %v, an example",
						got.Status, got.StatusReason, got.UpdatedAt, got.SendExample, to, t0.Add(3600e9))
				}
				if d := cmp.Diff(got, after); d != "" {
					t.Errorf("Get after SetStatus (-want +got):\n%s", d)
				}
			})
		}
	}
}

func TestTemplateSetStatusBadInputs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tpl := f.mustTemplate(t, f.acme, &messaging.TemplateCreateParams{Name: "tpl", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Hi")}})
	tests := []struct {
		name   string
		id     string
		status string
		code   messaging.Code
		field  string
	}{
		{"unknown status", tpl.ID, "live", messaging.CodeValidation, "status"},
		{"empty status", tpl.ID, "", messaging.CodeValidation, "status"},
		{"status wrong case", tpl.ID, "APPROVED", messaging.CodeValidation, "status"},
		{"unknown id", "tpl_missing", "approved", messaging.CodeNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.acme.Templates.SetStatus(f.ctx, tc.id, tc.status, "")
			wantError(t, err, tc.code, tc.field)
		})
	}
	got, err := f.acme.Templates.Get(f.ctx, tpl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != record.TemplatePending {
		t.Errorf("status = %s, want pending", got.Status)
	}
}

func TestTemplateList(t *testing.T) {
	t.Parallel()
	f := setup(t)
	mk := func(name, category, language, status string) {
		f.mustTemplate(t, f.acme, &messaging.TemplateCreateParams{Name: name, Category: category, Language: language,
			Status: status, Components: []messaging.TemplateComponent{body("Hi")}})
	}
	mk("promo", "MARKETING", "en", "approved")
	mk("promo", "MARKETING", "sw", "approved")
	mk("otp", "AUTHENTICATION", "en", "approved")
	mk("receipt", "UTILITY", "en", "approved")
	mk("draft", "UTILITY", "en", "pending")
	mk("bad", "UTILITY", "en", "rejected")
	mk("tired", "MARKETING", "en", "paused")
	mk("dead", "MARKETING", "en", "disabled")
	f.mustTemplate(t, f.other, approved("others_only", body("Hi")))

	type item struct{ Name, Language, Status string }
	tests := []struct {
		name   string
		filter *messaging.TemplateFilter
		want   []item
	}{
		{"all approved", nil, []item{{"otp", "en", "approved"}, {"promo", "en", "approved"}, {"promo", "sw", "approved"}, {"receipt", "en", "approved"}}},
		{"empty filter", &messaging.TemplateFilter{}, []item{{"otp", "en", "approved"}, {"promo", "en", "approved"}, {"promo", "sw", "approved"}, {"receipt", "en", "approved"}}},
		{"marketing", &messaging.TemplateFilter{Category: "MARKETING"}, []item{{"promo", "en", "approved"}, {"promo", "sw", "approved"}}},
		{"swahili", &messaging.TemplateFilter{Language: "sw"}, []item{{"promo", "sw", "approved"}}},
		{"utility english", &messaging.TemplateFilter{Category: "UTILITY", Language: "en"}, []item{{"receipt", "en", "approved"}}},
		{"no match", &messaging.TemplateFilter{Language: "fr"}, []item{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, err := f.acme.Templates.List(f.ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if list == nil {
				t.Fatal("List returned nil, want a non-nil slice")
			}
			got := []item{}
			for _, tpl := range list {
				got = append(got, item{tpl.Name, tpl.Language, tpl.Status})
				if tpl.SendExample == nil || tpl.SendExample.TemplateName != tpl.Name || tpl.SendExample.Language != tpl.Language {
					t.Errorf("%s/%s: SendExample = %+v", tpl.Name, tpl.Language, tpl.SendExample)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("List mismatch (-want +got):\n%s", d)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		filter *messaging.TemplateFilter
		field  string
	}{
		{"lowercase category", &messaging.TemplateFilter{Category: "marketing"}, "category"},
		{"bad language", &messaging.TemplateFilter{Language: "english"}, "language"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.acme.Templates.List(f.ctx, tc.filter)
			wantError(t, err, messaging.CodeValidation, tc.field)
		})
	}
}

func TestTemplateSendExample(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    *messaging.TemplateCreateParams
		want *messaging.SendTemplateParams
	}{
		{
			name: "text header, body variables, dynamic URL and copy code buttons",
			p: approved("order_shipped",
				header("Order {{1}}"),
				body("Hi {{1}}, your order {{2}} has shipped."),
				footer("Reply STOP to opt out"),
				buttons(
					urlButton("https://shop.example.com/track/{{1}}"),
					urlButton("https://shop.example.com/help"),
					messaging.TemplateButton{Type: "COPY_CODE", Example: "SAVE10"},
				)),
			want: &messaging.SendTemplateParams{
				To: record.ExampleRecipient, TemplateName: "order_shipped", Language: "en",
				Components: []messaging.SendComponent{
					{Type: "header", Parameters: textParams("example header")},
					{Type: "body", Parameters: textParams("example 1", "example 2")},
					{Type: "button", SubType: "url", Index: intPtr(0), Parameters: textParams("example-suffix")},
					{Type: "button", SubType: "copy_code", Index: intPtr(2), Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: "SAVE10"}}},
				},
			},
		},
		{
			name: "document header",
			p:    approved("invoice_ready", mediaHeader("DOCUMENT"), body("Invoice {{1}} is attached.")),
			want: &messaging.SendTemplateParams{
				To: record.ExampleRecipient, TemplateName: "invoice_ready", Language: "en",
				Components: []messaging.SendComponent{
					{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://example.com/sample.pdf"}}},
					{Type: "body", Parameters: textParams("example 1")},
				},
			},
		},
		{
			name: "image header without variables",
			p:    approved("promo_image", mediaHeader("IMAGE"), body("New arrivals!")),
			want: &messaging.SendTemplateParams{
				To: record.ExampleRecipient, TemplateName: "promo_image", Language: "en",
				Components: []messaging.SendComponent{
					{Type: "header", Parameters: []messaging.SendParameter{{Type: "image", Link: "https://example.com/sample.jpg"}}},
				},
			},
		},
		{
			name: "the components' own examples",
			p: approved("order_own", messaging.TemplateComponent{Type: "HEADER", Format: "TEXT", Text: "Order {{1}}", Examples: []string{"#42"}},
				messaging.TemplateComponent{Type: "BODY", Text: "Hi {{1}}, it ships {{2}}.", Examples: []string{"Ann", "Monday"}}),
			want: &messaging.SendTemplateParams{
				To: record.ExampleRecipient, TemplateName: "order_own", Language: "en",
				Components: []messaging.SendComponent{
					{Type: "header", Parameters: textParams("#42")},
					{Type: "body", Parameters: textParams("Ann", "Monday")},
				},
			},
		},
		{
			name: "no variables",
			p:    approved("thanks", header("Thanks"), body("Thank you!"), buttons(quickReply("Yes"), urlButton("https://example.com"))),
			want: &messaging.SendTemplateParams{To: record.ExampleRecipient, TemplateName: "thanks", Language: "en"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			created := f.mustTemplate(t, f.acme, tc.p)
			got, err := f.acme.Templates.Get(f.ctx, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got.SendExample); d != "" {
				t.Errorf("send_example mismatch (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.want, messaging.SendExample(got)); d != "" {
				t.Errorf("SendExample() mismatch (-want +got):\n%s", d)
			}
			// The example is ready to use: sending it is accepted.
			ex := *got.SendExample
			res, err := f.acme.Messages.SendTemplate(f.ctx, &ex)
			if err != nil {
				t.Fatalf("sending the send_example: %v", err)
			}
			m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want.Components, m.Components); d != "" {
				t.Errorf("stored components (-want +got):\n%s", d)
			}
		})
	}
}

func TestSendTemplateBadInputs(t *testing.T) {
	t.Parallel()
	type tcase struct {
		name  string
		p     *messaging.SendTemplateParams
		code  messaging.Code
		field string
	}
	bodyComp := []messaging.SendComponent{{Type: "body", Parameters: textParams("Jane")}}
	// appt sends appointment_reminder (two body variables, a dynamic URL
	// button and a quick reply) with cs.
	appt := func(cs ...messaging.SendComponent) *messaging.SendTemplateParams {
		return &messaging.SendTemplateParams{To: kenya, TemplateName: "appointment_reminder", Components: cs}
	}
	apptBody := messaging.SendComponent{Type: "body", Parameters: textParams("Amina", "Monday")}
	tests := []tcase{
		{"nil params", nil, messaging.CodeValidation, "body"},
		{"missing to", &messaging.SendTemplateParams{TemplateName: "plain"}, messaging.CodeValidation, "to"},
		{"local number", &messaging.SendTemplateParams{To: "0712345678", TemplateName: "plain"}, messaging.CodeValidation, "to"},
		{"no plus", &messaging.SendTemplateParams{To: "254712345678", TemplateName: "plain"}, messaging.CodeValidation, "to"},
		{"invalid number", &messaging.SendTemplateParams{To: "+10000000000", TemplateName: "plain"}, messaging.CodeValidation, "to"},
		{"scoped id", &messaging.SendTemplateParams{To: "psid_1", TemplateName: "plain"}, messaging.CodeValidation, "to"},
		{"missing template_name", &messaging.SendTemplateParams{To: kenya}, messaging.CodeValidation, "template_name"},
		{"bad language", &messaging.SendTemplateParams{To: kenya, TemplateName: "plain", Language: "english"}, messaging.CodeValidation, "language"},
		{"component without type", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name",
			Components: []messaging.SendComponent{{Parameters: textParams("x")}}}, messaging.CodeValidation, "components[0].type"},
		{"component unknown type", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name",
			Components: []messaging.SendComponent{{Type: "footer", Parameters: textParams("x")}}}, messaging.CodeValidation, "components[0].type"},
		{"button without sub_type", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name",
			Components: []messaging.SendComponent{{Type: "button", Index: intPtr(0), Parameters: textParams("x")}}}, messaging.CodeValidation, "components[0].sub_type"},
		{"button without index", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name",
			Components: []messaging.SendComponent{{Type: "button", SubType: "url", Parameters: textParams("x")}}}, messaging.CodeValidation, "components[0].index"},
		{"index on body", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name",
			Components: []messaging.SendComponent{{Type: "body", Index: intPtr(0), Parameters: textParams("x")}}}, messaging.CodeValidation, "components[0].sub_type"},
		{"empty text parameter", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name",
			Components: []messaging.SendComponent{{Type: "body", Parameters: textParams("")}}}, messaging.CodeValidation, "components[0].parameters[0].text"},
		{"unknown parameter type", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name",
			Components: []messaging.SendComponent{{Type: "body", Parameters: []messaging.SendParameter{{Type: "currency"}}}}}, messaging.CodeValidation, "components[0].parameters[0].type"},
		{"document link not http", &messaging.SendTemplateParams{To: kenya, TemplateName: "invoice",
			Components: []messaging.SendComponent{{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "file:///a.pdf"}}}}}, messaging.CodeValidation, "components[0].parameters[0].link"},
		{"document in body", &messaging.SendTemplateParams{To: kenya, TemplateName: "invoice",
			Components: []messaging.SendComponent{{Type: "body", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://example.com/a.pdf"}}}}}, messaging.CodeValidation, "components[0].parameters[0].type"},
		{"idempotency_key 256 chars", &messaging.SendTemplateParams{To: kenya, TemplateName: "plain", IdempotencyKey: strings.Repeat("k", 256)}, messaging.CodeValidation, "idempotency_key"},
		{"unknown name", &messaging.SendTemplateParams{To: kenya, TemplateName: "nope"}, messaging.CodeTemplateNotFound, "template_name"},
		{"name with uppercase", &messaging.SendTemplateParams{To: kenya, TemplateName: "Plain"}, messaging.CodeTemplateNotFound, "template_name"},
		{"name with dash", &messaging.SendTemplateParams{To: kenya, TemplateName: "pla-in"}, messaging.CodeTemplateNotFound, "template_name"},
		{"pending template", &messaging.SendTemplateParams{To: kenya, TemplateName: "draft"}, messaging.CodeTemplateNotFound, "template_name"},
		{"rejected template", &messaging.SendTemplateParams{To: kenya, TemplateName: "refused"}, messaging.CodeTemplateNotFound, "template_name"},
		{"paused template", &messaging.SendTemplateParams{To: kenya, TemplateName: "tired"}, messaging.CodeTemplateNotFound, "template_name"},
		{"disabled template", &messaging.SendTemplateParams{To: kenya, TemplateName: "dead"}, messaging.CodeTemplateNotFound, "template_name"},
		{"en requested, template is en_US", &messaging.SendTemplateParams{To: kenya, TemplateName: "us_only", Language: "en"}, messaging.CodeTemplateNotFound, "template_name"},
		{"default en, template is en_US", &messaging.SendTemplateParams{To: kenya, TemplateName: "us_only"}, messaging.CodeTemplateNotFound, "template_name"},
		{"en_US requested, template is en", &messaging.SendTemplateParams{To: kenya, TemplateName: "plain", Language: "en_US"}, messaging.CodeTemplateNotFound, "template_name"},
		{"wrong language", &messaging.SendTemplateParams{To: kenya, TemplateName: "plain", Language: "sw"}, messaging.CodeTemplateNotFound, "template_name"},
		{"other workspace's template", &messaging.SendTemplateParams{To: kenya, TemplateName: "others_only"}, messaging.CodeTemplateNotFound, "template_name"},
		{"body variables without components", &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name"}, messaging.CodeValidation, "components"},
		{"header variable without components", &messaging.SendTemplateParams{To: kenya, TemplateName: "header_var"}, messaging.CodeValidation, "components"},
		{"document header without components", &messaging.SendTemplateParams{To: kenya, TemplateName: "invoice"}, messaging.CodeValidation, "components"},
		{"document header with body only", &messaging.SendTemplateParams{To: kenya, TemplateName: "invoice", Components: bodyComp}, messaging.CodeValidation, "components"},
		{"document header with empty header", &messaging.SendTemplateParams{To: kenya, TemplateName: "invoice",
			Components: append([]messaging.SendComponent{{Type: "header", Parameters: []messaging.SendParameter{}}}, bodyComp...)}, messaging.CodeValidation, "components[0].parameters"},
		// Parameter counts against the template's variables (issue 33).
		{"one parameter for two variables", appt(messaging.SendComponent{Type: "body", Parameters: textParams("Amina")}), messaging.CodeValidation, "components[0].parameters"},
		{"three parameters for two variables", appt(messaging.SendComponent{Type: "body", Parameters: textParams("Amina", "Monday", "extra")}), messaging.CodeValidation, "components[0].parameters"},
		{"empty body for two variables", appt(messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{}}), messaging.CodeValidation, "components[0].parameters"},
		{"header only, body has variables", appt(messaging.SendComponent{Type: "header", Parameters: []messaging.SendParameter{}}), messaging.CodeValidation, "components"},
		{"header parameter, template has no header", appt(messaging.SendComponent{Type: "header", Parameters: textParams("x")}, apptBody), messaging.CodeValidation, "components[0].parameters"},
		{"body parameter, body has no variable", &messaging.SendTemplateParams{To: kenya, TemplateName: "plain", Components: bodyComp}, messaging.CodeValidation, "components[0].parameters"},
		{"header variable, body parameter too", &messaging.SendTemplateParams{To: kenya, TemplateName: "header_var", Components: []messaging.SendComponent{
			{Type: "header", Parameters: textParams("A-1")}, {Type: "body", Parameters: textParams("x")}}}, messaging.CodeValidation, "components[1].parameters"},
		{"two body components", appt(apptBody, apptBody), messaging.CodeValidation, "components[1]"},
		{"dynamic URL button without its parameter", appt(apptBody, messaging.SendComponent{Type: "button", SubType: "url", Index: intPtr(0), Parameters: []messaging.SendParameter{}}), messaging.CodeValidation, "components[1].parameters"},
		{"URL button with two parameters", appt(apptBody, messaging.SendComponent{Type: "button", SubType: "url", Index: intPtr(0), Parameters: textParams("a", "b")}), messaging.CodeValidation, "components[1].parameters"},
		{"quick reply with two payloads", appt(apptBody, messaging.SendComponent{Type: "button", SubType: "quick_reply", Index: intPtr(1),
			Parameters: []messaging.SendParameter{{Type: "payload", Payload: "a"}, {Type: "payload", Payload: "b"}}}), messaging.CodeValidation, "components[1].parameters"},
		{"button the template lacks", appt(apptBody, messaging.SendComponent{Type: "button", SubType: "quick_reply", Index: intPtr(2)}), messaging.CodeValidation, "components[1].index"},
		{"button of another kind", appt(apptBody, messaging.SendComponent{Type: "button", SubType: "copy_code", Index: intPtr(0),
			Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: "SAVE10"}}}), messaging.CodeValidation, "components[1].sub_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.mustTemplate(t, f.acme, approved("plain", body("Your order has shipped.")))
			f.mustTemplate(t, f.acme, approved("hello_name", body("Hello {{1}}")))
			f.mustTemplate(t, f.acme, approved("header_var", header("Order {{1}}"), body("Shipped.")))
			f.mustTemplate(t, f.acme, approved("invoice", mediaHeader("DOCUMENT"), body("Invoice {{1}}")))
			f.mustTemplate(t, f.acme, apptTemplate())
			us := approved("us_only", body("Howdy"))
			us.Language = "en_US"
			f.mustTemplate(t, f.acme, us)
			for name, status := range map[string]string{"draft": "pending", "refused": "rejected", "tired": "paused", "dead": "disabled"} {
				p := approved(name, body("Hi"))
				p.Status = status
				f.mustTemplate(t, f.acme, p)
			}
			f.mustTemplate(t, f.other, approved("others_only", body("Hi")))

			res, err := f.acme.Messages.SendTemplate(f.ctx, tc.p)
			if res != nil {
				t.Errorf("SendTemplate returned %+v with an error", res)
			}
			wantError(t, err, tc.code, tc.field)
			if c := f.store.counts(); c.Messages != 0 {
				t.Errorf("messages stored = %d, want 0", c.Messages)
			}
		})
	}
}

// apptTemplate is appointment_reminder: two body variables, a URL button
// with a dynamic suffix and a quick reply.
func apptTemplate() *messaging.TemplateCreateParams {
	return approved("appointment_reminder", body("Hi {{1}}, your appointment is on {{2}}."),
		buttons(urlButton("https://clinic.example.com/visit/{{1}}"), quickReply("Cancel")))
}

// TestSendTemplateParameterCounts: sends whose components hold as many
// parameters as the template's parts take are accepted, a quick reply with
// or without its payload; a missing button component is left to the
// provider (spec: 131008 in failure_reason), so it is accepted too.
func TestSendTemplateParameterCounts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustTemplate(t, f.acme, apptTemplate())
	f.mustTemplate(t, f.acme, approved("invoice", mediaHeader("DOCUMENT"), body("Invoice {{1}}")))
	body := messaging.SendComponent{Type: "body", Parameters: textParams("Amina", "Monday")}
	url := messaging.SendComponent{Type: "button", SubType: "url", Index: intPtr(0), Parameters: textParams("V-7")}
	for name, p := range map[string]*messaging.SendTemplateParams{
		"body and URL button": {TemplateName: "appointment_reminder", Components: []messaging.SendComponent{body, url}},
		"quick reply with its payload": {TemplateName: "appointment_reminder", Components: []messaging.SendComponent{body, url,
			{Type: "button", SubType: "quick_reply", Index: intPtr(1), Parameters: []messaging.SendParameter{{Type: "payload", Payload: "cancel-7"}}}}},
		"quick reply without payload": {TemplateName: "appointment_reminder", Components: []messaging.SendComponent{body, url,
			{Type: "button", SubType: "quick_reply", Index: intPtr(1)}}},
		"URL button component missing": {TemplateName: "appointment_reminder", Components: []messaging.SendComponent{body}},
		"document header and body": {TemplateName: "invoice", Components: []messaging.SendComponent{
			{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://example.com/i.pdf"}}},
			{Type: "body", Parameters: textParams("INV-1")}}},
	} {
		p.To = kenya
		if _, err := f.acme.Messages.SendTemplate(f.ctx, p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSendTemplate(t *testing.T) {
	t.Parallel()

	t.Run("approved template with variables", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.mustTemplate(t, f.acme, approved("hello_name", body("Hello {{1}}, order {{2}}")))
		comps := []messaging.SendComponent{{Type: "body", Parameters: textParams("Jane", "A-42")}}
		res, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name", Language: "en", Components: comps})
		if err != nil {
			t.Fatal(err)
		}
		wantRes := &messaging.SendResult{MessageID: res.MessageID, ConversationID: record.ConversationID("acme", "whatsapp", kenya),
			Status: "queued", Channel: "whatsapp", To: kenya}
		if d := cmp.Diff(wantRes, res); d != "" {
			t.Errorf("SendResult (-want +got):\n%s", d)
		}
		got, err := f.acme.Messages.Get(f.ctx, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		want := &msgView{ID: res.MessageID, WorkspaceID: "acme", ConversationID: res.ConversationID,
			Channel: "whatsapp", To: kenya, Direction: "outbound", Status: "queued", Type: record.TypeTemplate,
			TemplateName: "hello_name", Language: "en", Components: comps, CreatedAt: t0, UpdatedAt: t0}
		if d := cmp.Diff(want, viewOf(got)); d != "" {
			t.Errorf("Get (-want +got):\n%s", d)
		}
		// A template message shares the conversation of text messages to
		// the same recipient on whatsapp.
		if r := f.mustSend(t, f.acme, textMsg(kenya)); r.ConversationID != res.ConversationID {
			t.Errorf("text conversation %s, template conversation %s", r.ConversationID, res.ConversationID)
		}
	})

	t.Run("language defaults to en", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.mustTemplate(t, f.acme, approved("plain", body("Shipped.")))
		res, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: "plain"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Language != "en" || m.Type != "template" || m.TemplateName != "plain" {
			t.Errorf("message language %q type %q template %q, want en, template, plain", m.Language, m.Type, m.TemplateName)
		}
	})

	t.Run("exact non-default language", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		p := approved("plain", body("Howdy"))
		p.Language = "en_US"
		f.mustTemplate(t, f.acme, p)
		if _, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: "plain", Language: "en_US"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("template approved after pending can be sent", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		p := approved("later", body("Hi"))
		p.Status = ""
		tpl := f.mustTemplate(t, f.acme, p)
		sp := &messaging.SendTemplateParams{To: kenya, TemplateName: "later"}
		_, err := f.acme.Messages.SendTemplate(f.ctx, sp)
		wantError(t, err, messaging.CodeTemplateNotFound, "template_name")
		if _, err := f.acme.Templates.SetStatus(f.ctx, tpl.ID, "approved", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.acme.Messages.SendTemplate(f.ctx, sp); err != nil {
			t.Fatalf("after approval: %v", err)
		}
		if _, err := f.acme.Templates.SetStatus(f.ctx, tpl.ID, "paused", "low quality"); err != nil {
			t.Fatal(err)
		}
		_, err = f.acme.Messages.SendTemplate(f.ctx, sp)
		wantError(t, err, messaging.CodeTemplateNotFound, "template_name")
	})

	t.Run("variable only in URL button needs no components", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.mustTemplate(t, f.acme, approved("track", body("Your parcel is on its way."), buttons(urlButton("https://example.com/t/{{1}}"))))
		res, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: "track"})
		if err != nil {
			t.Fatalf("SendTemplate: %v", err)
		}
		if res.Status != "queued" {
			t.Errorf("status = %s, want queued", res.Status)
		}
		// The provider reports the missing button parameter later.
		changed, err := f.svc.UpdateStatus(f.ctx, &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: res.MessageID,
			Status: "failed", ProviderCode: "131008", ProviderText: "Required parameter is missing"})
		if err != nil || !changed {
			t.Fatalf("UpdateStatus = %v, %v", changed, err)
		}
		m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != "failed" || m.FailureReason != "[131008] Required parameter is missing" {
			t.Errorf("status %q reason %q", m.Status, m.FailureReason)
		}
	})

	t.Run("media header with header component", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.mustTemplate(t, f.acme, approved("invoice", mediaHeader("DOCUMENT"), body("Invoice attached.")))
		_, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: "invoice",
			Components: []messaging.SendComponent{{Type: "header", Parameters: []messaging.SendParameter{
				{Type: "document", Link: "https://example.com/inv.pdf", Filename: "invoice.pdf"}}}}})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestTemplateListStatus: List lists approved templates by default, one
// review state or every state ("any"); a status that is no state is a
// validation error; a Caller needs manage:templates for any other state
// than approved.
func TestTemplateListStatus(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ts := f.acme.Templates
	mk := func(name, status string) {
		t.Helper()
		if _, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: name, Category: record.CategoryUtility, Language: "en",
			Status: status, Components: []messaging.TemplateComponent{body("Hi")}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("a_draft", record.TemplateDraft)
	mk("b_approved", record.TemplateApproved)
	mk("c_rejected", record.TemplateRejected)
	if _, err := f.other.Templates.Create(f.ctx, approved("other_approved", body("Hi"))); err != nil {
		t.Fatal(err)
	}
	names := func(filt *messaging.TemplateFilter) []string {
		t.Helper()
		list, err := ts.List(f.ctx, filt)
		if err != nil {
			t.Fatalf("List(%+v): %v", filt, err)
		}
		var out []string
		for _, tp := range list {
			out = append(out, tp.Name)
		}
		return out
	}
	reader := &messaging.Principal{WorkspaceID: "acme", Scopes: []string{record.ScopeReadTemplates}}
	manager := &messaging.Principal{WorkspaceID: "acme", Scopes: []string{record.ScopeReadTemplates, record.ScopeManageTemplates}}
	for _, c := range []struct {
		filt *messaging.TemplateFilter
		want []string
	}{
		{nil, []string{"b_approved"}},
		{&messaging.TemplateFilter{Caller: reader}, []string{"b_approved"}},
		{&messaging.TemplateFilter{Status: "approved", Caller: reader}, []string{"b_approved"}},
		{&messaging.TemplateFilter{Status: "draft", Caller: manager}, []string{"a_draft"}},
		{&messaging.TemplateFilter{Status: "rejected"}, []string{"c_rejected"}},
		{&messaging.TemplateFilter{Status: "any", Caller: manager}, []string{"a_draft", "b_approved", "c_rejected"}},
		{&messaging.TemplateFilter{Status: "paused", Caller: manager}, nil},
	} {
		if d := cmp.Diff(c.want, names(c.filt)); d != "" {
			t.Errorf("List(%+v) (-want +got):\n%s", c.filt, d)
		}
	}
	for _, st := range []string{"any", "draft", "pending"} {
		_, err := ts.List(f.ctx, &messaging.TemplateFilter{Status: st, Caller: reader})
		e := wantError(t, err, messaging.CodeForbidden, "")
		if !strings.Contains(e.Message, record.ScopeManageTemplates) {
			t.Errorf("status %s: %q does not name %s", st, e.Message, record.ScopeManageTemplates)
		}
	}
	for _, st := range []string{"APPROVED", "all", "archived", " approved"} {
		_, err := ts.List(f.ctx, &messaging.TemplateFilter{Status: st, Caller: manager})
		wantError(t, err, messaging.CodeValidation, "status")
	}
	// A bad status is a validation error before the scope check.
	_, err := ts.List(f.ctx, &messaging.TemplateFilter{Status: "archived", Caller: reader})
	wantError(t, err, messaging.CodeValidation, "status")
}

// TestTemplatePatch: Patch changes only the fields it sets, checks the
// authoring rules on the result, and refuses a template that is no longer
// a draft with a conflict naming its state.
func TestTemplatePatch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ts := f.acme.Templates
	d, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "promo", Category: record.CategoryUtility, Language: "en",
		Status: record.TemplateDraft, Components: []messaging.TemplateComponent{body("Hi {{1}}")}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ts.Patch(f.ctx, d.ID, &messaging.TemplatePatch{Category: ptr(record.CategoryMarketing)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "promo" || got.Language != "en" || got.Category != record.CategoryMarketing || got.Status != record.TemplateDraft ||
		len(got.Components) != 1 || got.Components[0].Text != "Hi {{1}}" {
		t.Errorf("after a category patch: %+v", got)
	}
	got, err = ts.Patch(f.ctx, d.ID, &messaging.TemplatePatch{Name: ptr("promo_v2"), Components: &[]messaging.TemplateComponent{body("Hello {{1}} {{2}}")}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "promo_v2" || got.Category != record.CategoryMarketing || got.Components[0].Text != "Hello {{1}} {{2}}" {
		t.Errorf("after a name and components patch: %+v", got)
	}
	_, err = ts.Patch(f.ctx, d.ID, &messaging.TemplatePatch{})
	wantError(t, err, messaging.CodeValidation, "body")
	_, err = ts.Patch(f.ctx, d.ID, nil)
	wantError(t, err, messaging.CodeValidation, "body")
	_, err = ts.Patch(f.ctx, d.ID, &messaging.TemplatePatch{Components: &[]messaging.TemplateComponent{body("Hi {{2}}")}})
	wantError(t, err, messaging.CodeValidation, "components[0].text")
	_, err = ts.Patch(f.ctx, d.ID, &messaging.TemplatePatch{Language: ptr("english")})
	wantError(t, err, messaging.CodeValidation, "language")
	_, err = ts.Patch(f.ctx, "tpl_nope", &messaging.TemplatePatch{Name: ptr("x")})
	wantError(t, err, messaging.CodeNotFound, "")
	_, err = f.other.Templates.Patch(f.ctx, d.ID, &messaging.TemplatePatch{Name: ptr("x")})
	wantError(t, err, messaging.CodeNotFound, "")
	if _, err := ts.Submit(f.ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err = ts.Patch(f.ctx, d.ID, &messaging.TemplatePatch{Category: ptr(record.CategoryUtility)})
	e := wantError(t, err, messaging.CodeConflict, "status")
	if !strings.Contains(e.Message, "pending") {
		t.Errorf("conflict %q does not name the state pending", e.Message)
	}
	after, _ := ts.Get(f.ctx, d.ID)
	if after.Category != record.CategoryMarketing || after.Name != "promo_v2" {
		t.Errorf("a refused patch changed the template: %+v", after)
	}
}
