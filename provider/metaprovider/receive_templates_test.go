package metaprovider_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

const (
	hookWABA      = "102290129340398" // the entry id of the notifications of receive_test.go
	otherPNID     = "200000000000001"
	otherWABA     = "200000000000002"
	unknownWABA   = "300000000000003"
	hookTplName   = "order_update"
	hookTplLang   = "en_US"
	hookTplMetaID = "594425479261596"
)

// connectedSetup returns a Receiver without an Accounts map on a service
// where ws_meta's WhatsApp connection is hookPNID in hookWABA and
// ws_other's is otherPNID in otherWABA; both have a pending template
// order_update (en_US). accounts, when not nil, is the Accounts option.
func connectedSetup(t *testing.T, accounts map[string]string) *hookEnv {
	t.Helper()
	e := &hookEnv{store: &hookStore{Store: memstore.New()}, log: &testlog.Buffer{}}
	svc, err := messaging.New(e.store, fakeprovider.New(), &messaging.Options{Clock: func() time.Time { return now },
		SecretKey: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	ctx := t.Context()
	for _, c := range []struct{ ws, pnid, waba string }{{hookWS, hookPNID, hookWABA}, {"ws_other", otherPNID, otherWABA}} {
		if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: c.ws, Name: c.ws, Channels: svc.Channels()}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Workspace(c.ws).Channels.Connect(ctx, messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
			Fields: map[string]string{metaprovider.FieldPhoneNumberID: c.pnid, metaprovider.FieldWABAID: c.waba}, AccessToken: "EAAGtoken-of-" + c.ws}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Workspace(c.ws).Templates.Create(ctx, &messaging.TemplateCreateParams{Name: hookTplName, Language: hookTplLang,
			Category: record.CategoryUtility, Status: record.TemplatePending,
			Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi {{1}}, order {{2}} has shipped."}}}); err != nil {
			t.Fatal(err)
		}
	}
	e.rc = metaprovider.NewReceiver(svc, &metaprovider.ReceiverOptions{VerifyToken: hookVerify, AppSecret: hookSecret,
		Accounts: accounts, Logger: slog.New(slog.NewTextHandler(e.log, nil))})
	return e
}

// template returns ws's template order_update.
func (e *hookEnv) template(t *testing.T, ws string) *messaging.Template {
	t.Helper()
	tpl, err := e.store.TemplateGetByName(t.Context(), &driver.TemplateGetByNameParams{WorkspaceID: ws, Name: hookTplName, Language: hookTplLang})
	if err != nil {
		t.Fatalf("%s's template %s/%s: %v", ws, hookTplName, hookTplLang, err)
	}
	return tpl
}

// templateChange is a WhatsApp notification of WABA waba with one change
// of field carrying value (a JSON object).
func templateChange(waba, field, value string) string {
	return fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"time":1750263773,"changes":[{"value":%s,"field":%q}]}]}`,
		waba, value, field)
}

// statusUpdate is a message_template_status_update value; id is written
// as given (a JSON number or string).
func statusUpdate(event, id, name, lang, reason string) string {
	return fmt.Sprintf(`{"event":%q,"message_template_id":%s,"message_template_name":%q,"message_template_language":%q,"reason":%q}`,
		event, id, name, lang, reason)
}

func TestReceiverTemplateEvents(t *testing.T) {
	t.Parallel()
	e := connectedSetup(t, nil)
	steps := []struct {
		label, body                       string
		wantStatus, wantReason, wantQuali string
	}{
		{"approved, id as a number",
			templateChange(hookWABA, "message_template_status_update", statusUpdate("APPROVED", hookTplMetaID, hookTplName, hookTplLang, "NONE")),
			"approved", "", ""},
		{"quality update",
			templateChange(hookWABA, "message_template_quality_update", fmt.Sprintf(`{"previous_quality_score":"GREEN","new_quality_score":"YELLOW",
				"message_template_id":%s,"message_template_name":%q,"message_template_language":%q}`, hookTplMetaID, hookTplName, hookTplLang)),
			"approved", "", "YELLOW"},
		{"paused, id as a string, the reason in other_info",
			templateChange(hookWABA, "message_template_status_update", `{"event":"PAUSED","message_template_id":"`+hookTplMetaID+
				`","message_template_name":"renamed_at_meta","message_template_language":"en_US","reason":null,
				"other_info":{"title":"FIRST_PAUSE","description":"Your template has been paused for 3 hours."}}`),
			"paused", "FIRST_PAUSE", "YELLOW"},
		{"reinstated",
			templateChange(hookWABA, "message_template_status_update", statusUpdate("REINSTATED", `"`+hookTplMetaID+`"`, hookTplName, hookTplLang, "NONE")),
			"approved", "", "YELLOW"},
		{"disabled with its reason",
			templateChange(hookWABA, "message_template_status_update", statusUpdate("DISABLED", hookTplMetaID, hookTplName, hookTplLang, "INCORRECT_CATEGORY")),
			"disabled", "INCORRECT_CATEGORY", "YELLOW"},
	}
	for _, s := range steps {
		for range 2 { // Meta delivers at least once; applying twice is harmless
			a := e.postOK(t, s.body)
			if a.Templates != 1 || a.Ignored != 0 {
				t.Fatalf("%s: answer = %+v, want 1 template event", s.label, a)
			}
		}
		got := e.template(t, hookWS)
		if got.Status != s.wantStatus || got.StatusReason != s.wantReason || got.Quality != s.wantQuali || got.ProviderTemplateID != hookTplMetaID {
			t.Errorf("%s: template = %s %q quality %q id %q, want %s %q %q %s", s.label, got.Status, got.StatusReason, got.Quality,
				got.ProviderTemplateID, s.wantStatus, s.wantReason, s.wantQuali, hookTplMetaID)
		}
	}
	if other := e.template(t, "ws_other"); other.Status != record.TemplatePending || other.ProviderTemplateID != "" {
		t.Errorf("ws_other's template = %s %q; another WABA's events must not move it", other.Status, other.ProviderTemplateID)
	}
}

// TestReceiverTemplateEventsThatCannotApplyAreAcknowledged: unknown events,
// accounts and templates are ignored and logged, never a 500, and never
// applied to another workspace.
func TestReceiverTemplateEventsThatCannotApplyAreAcknowledged(t *testing.T) {
	t.Parallel()
	e := connectedSetup(t, nil)
	if _, err := e.svc.Workspace(hookWS).Templates.Create(t.Context(), &messaging.TemplateCreateParams{Name: "still_a_draft", Language: "en",
		Category: record.CategoryUtility, Status: record.TemplateDraft, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Draft"}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ label, body, log string }{
		{"unknown event", templateChange(hookWABA, "message_template_status_update", statusUpdate("EXPLODED", hookTplMetaID, hookTplName, hookTplLang, "NONE")), "EXPLODED"},
		{"unknown WABA", templateChange(unknownWABA, "message_template_status_update", statusUpdate("APPROVED", "1", hookTplName, hookTplLang, "NONE")), unknownWABA},
		{"the phone-number id is not a WABA id", templateChange(hookPNID, "message_template_status_update", statusUpdate("APPROVED", "1", hookTplName, hookTplLang, "NONE")), hookPNID},
		{"unknown template", templateChange(hookWABA, "message_template_status_update", statusUpdate("APPROVED", "42", "no_such_template", "en", "NONE")), "no_such_template"},
		{"a draft", templateChange(hookWABA, "message_template_status_update", statusUpdate("APPROVED", "43", "still_a_draft", "en", "NONE")), "still_a_draft"},
		{"quality of an unknown template", templateChange(hookWABA, "message_template_quality_update", `{"new_quality_score":"RED","message_template_id":44,"message_template_name":"gone","message_template_language":"en"}`), "gone"},
		{"a template event on a page", strings.Replace(templateChange(hookWABA, "message_template_status_update", statusUpdate("APPROVED", "1", hookTplName, hookTplLang, "NONE")),
			"whatsapp_business_account", "page", 1), "message_template_status_update"},
	} {
		w := e.post(t, c.body)
		if w.Code != 200 {
			t.Errorf("%s: answer %d %s, want 200", c.label, w.Code, w.Body)
			continue
		}
		a := e.postOK(t, c.body)
		if a.Templates != 0 || a.Ignored != 1 {
			t.Errorf("%s: answer = %+v, want ignored", c.label, a)
		}
		if !strings.Contains(e.log.String(), c.log) {
			t.Errorf("%s: %q was not logged:\n%s", c.label, c.log, e.log)
		}
	}
	for _, ws := range []string{hookWS, "ws_other"} {
		if got := e.template(t, ws); got.Status != record.TemplatePending {
			t.Errorf("%s's template moved to %s", ws, got.Status)
		}
	}
}

func TestReceiverInboundRoutedByConnection(t *testing.T) {
	t.Parallel()
	text := func(id string) string {
		return waInbound("254712345678", id, `{"from":"FROM","id":"ID","type":"text","text":{"body":"hi"}}`)
	}
	e := connectedSetup(t, nil)
	if a := e.postOK(t, text("wamid.ROUTED")); a.Messages != 1 {
		t.Fatalf("answer = %+v, want 1 message", a)
	}
	in, err := e.store.MessageGetByProviderID(t.Context(), "wamid.ROUTED")
	if err != nil {
		t.Fatal(err)
	}
	if in.WorkspaceID != hookWS {
		t.Errorf("recorded in %s, want %s (the connection of %s)", in.WorkspaceID, hookWS, hookPNID)
	}

	// An account no connection has is ignored and logged.
	unknown := strings.Replace(text("wamid.UNKNOWN"), hookPNID, "400000000000004", 1)
	if a := e.postOK(t, unknown); a.Messages != 0 || a.Ignored != 1 {
		t.Errorf("unknown account: answer = %+v, want ignored", a)
	}
	if _, err := e.store.MessageGetByProviderID(t.Context(), "wamid.UNKNOWN"); err == nil {
		t.Error("a message to an unknown account was recorded")
	}
	if !strings.Contains(e.log.String(), "400000000000004") {
		t.Errorf("the unknown account was not logged:\n%s", e.log)
	}
	// The WABA id is not a receiving account.
	byWABA := strings.Replace(text("wamid.WABA"), hookPNID, hookWABA, 1)
	if a := e.postOK(t, byWABA); a.Messages != 0 || a.Ignored != 1 {
		t.Errorf("WABA id as account: answer = %+v, want ignored", a)
	}

	// Accounts stays an override.
	o := connectedSetup(t, map[string]string{hookPNID: "ws_other"})
	if a := o.postOK(t, text("wamid.OVERRIDE")); a.Messages != 1 {
		t.Fatalf("answer = %+v, want 1 message", a)
	}
	if in, err := o.store.MessageGetByProviderID(t.Context(), "wamid.OVERRIDE"); err != nil || in.WorkspaceID != "ws_other" {
		t.Errorf("with Accounts: recorded %+v, %v; want in ws_other", in, err)
	}
}
