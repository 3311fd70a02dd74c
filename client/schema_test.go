package client_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/client"
)

// jsonMembers returns the JSON member names of struct type t (embedded
// structs flattened, "-" skipped) and whether each may hold null.
func jsonMembers(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			for k, v := range jsonMembers(f.Type) {
				out[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			out[name] = true
		default:
			out[name] = false
		}
	}
	return out
}

// schemaMembers returns the properties of a schema of the OpenAPI
// document (allOf flattened) and whether each may be null.
func schemaMembers(t *testing.T, schemas map[string]json.RawMessage, name string) map[string]bool {
	t.Helper()
	var s struct {
		Properties map[string]struct {
			Type  any    `json:"type"`
			Ref   string `json:"$ref"`
			OneOf []any  `json:"oneOf"`
			AnyOf []any  `json:"anyOf"`
		} `json:"properties"`
		AllOf []struct {
			Ref string `json:"$ref"`
		} `json:"allOf"`
	}
	raw, ok := schemas[name]
	if !ok {
		t.Fatalf("no schema %s", name)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, a := range s.AllOf {
		if a.Ref != "" {
			for k, v := range schemaMembers(t, schemas, strings.TrimPrefix(a.Ref, "#/components/schemas/")) {
				out[k] = v
			}
		}
	}
	for k, p := range s.Properties {
		null := false
		if ts, ok := p.Type.([]any); ok {
			null = slices.Contains(ts, any("null"))
		}
		for _, alt := range append(p.OneOf, p.AnyOf...) {
			if m, ok := alt.(map[string]any); ok && m["type"] == "null" {
				null = true
			}
		}
		out[k] = null
	}
	return out
}

// TestSchemas: each client type has exactly the members of its schema in
// httpapi/openapi.json, and a Go type that can hold null wherever the
// schema allows null.
func TestSchemas(t *testing.T) {
	b, err := os.ReadFile("../httpapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		schema string
		v      any
		// nullOK: members the Go type may hold as null though the
		// schema does not say so (omitted when empty instead).
		nullOK []string
	}{
		{"Message", client.Message{}, []string{"media", "location", "contacts", "interactive", "reaction", "context", "window_expires_at", "send_at", "fallback"}},
		{"InboundMedia", client.InboundMedia{}, nil},
		{"Location", client.Location{}, nil},
		{"SharedContact", client.SharedContact{}, []string{"phones", "emails"}},
		{"InteractiveReply", client.InteractiveReply{}, nil},
		{"Reaction", client.Reaction{}, nil},
		{"ReplyContext", client.ReplyContext{}, nil},
		{"MessagePage", client.MessagePage{}, []string{"data"}},
		{"Conversation", client.Conversation{}, nil},
		{"ConversationPage", client.ConversationPage{}, []string{"data"}},
		{"ContactListItem", client.ContactListItem{}, []string{"tags"}},
		{"Contact", client.Contact{}, []string{"tags", "opted_out"}},
		{"ContactPage", client.ContactPage{}, []string{"items"}},
		{"Template", client.Template{}, []string{"components", "send_example"}},
		{"Deleted", client.Deleted{}, nil},
		{"Channel", client.Channel{}, nil},
		{"APIKey", client.APIKey{}, []string{"scopes"}},
		{"APIKeyCreated", client.APIKeyCreated{}, []string{"scopes"}},
		{"APIKeyCreate", client.APIKeyCreateParams{}, []string{"scopes"}},
		{"AuditEvent", client.AuditEvent{}, nil},
		{"AuditPage", client.AuditPage{}, []string{"data"}},
		{"Webhook", client.Webhook{}, []string{"events"}},
		{"WebhookCreated", client.WebhookCreated{}, []string{"events"}},
		{"WebhookCreate", client.WebhookCreateParams{}, []string{"events"}},
		{"WebhookPatch", client.WebhookUpdateParams{}, []string{"url", "events", "description", "enabled"}},
		{"WebhookSecret", client.WebhookSecret{}, []string{"previous_secret_expires_at"}},
		{"WebhookTestResult", client.WebhookTestResult{}, nil},
		{"WebhookDelivery", client.WebhookDelivery{}, nil},
		{"WebhookDeliveryPage", client.WebhookDeliveryPage{}, []string{"data"}},
		{"Workspace", client.Workspace{}, []string{"channels", "opt_out_keywords", "opt_in_keywords"}},
		{"WorkspaceCreate", client.WorkspaceCreateParams{}, []string{"opt_out_keywords", "opt_in_keywords"}},
		{"WorkspaceUpdate", client.WorkspaceUpdateParams{}, []string{"opt_out_keywords", "opt_in_keywords"}},
		{"WorkspacePage", client.WorkspacePage{}, []string{"data"}},
		{"OptIn", client.OptInParams{}, nil},
		{"OptInResult", client.OptInResult{}, nil},
		{"SMSAccountCreate", client.SMSAccountCreateParams{}, []string{"shortcodes"}},
		{"SMSAccount", client.SMSAccount{}, []string{"shortcodes"}},
		{"LedgerEntry", client.LedgerEntry{}, nil},
		{"SMSCallbackSet", client.SMSCallbackParams{}, nil},
		{"SMSCallback", client.SMSCallback{}, nil},
		{"LedgerPage", client.LedgerPage{}, []string{"data"}},
		{"SendRequest", client.SendParams{}, []string{"interactive", "location", "contacts", "reaction", "context", "send_at"}},
		{"SendTemplateRequest", client.SendTemplateParams{}, []string{"components", "send_at", "fallback"}},
		{"Fallback", client.Fallback{}, []string{"sms"}},
		{"SMSFallbackRequest", client.SMSFallback{}, nil},
		{"MessageFallback", client.MessageFallback{}, nil},
		{"SMSAccountLink", client.SMSAccountLink{}, nil},
		{"SMSAccountLinks", client.SMSAccountLinks{}, []string{"sms_accounts"}},
		{"SendResponse", client.SendResult{}, nil},
		{"SendComponent", client.SendComponent{}, []string{"index", "parameters"}},
		{"SendParameter", client.SendParameter{}, nil},
		{"TemplateComponent", client.TemplateComponent{}, []string{"buttons", "examples"}},
		{"TemplateButton", client.TemplateButton{}, nil},
		{"TemplateCreate", client.TemplateCreateParams{}, []string{"components"}},
		{"ContactCreate", client.ContactCreateParams{}, []string{"tags"}},
		{"TemplatePatch", client.TemplatePatch{}, []string{"name", "category", "language", "components"}},
		{"TemplateSyncResult", client.TemplateSyncResult{}, nil},
		{"ChannelCredentials", client.ChannelCredentials{}, nil},
		{"Interactive", client.Interactive{}, []string{"header", "buttons", "list", "cta_url"}},
		{"InteractiveHeader", client.InteractiveHeader{}, nil},
		{"SendLocation", client.SendLocation{}, nil},
		{"SendContact", client.SharedContact{}, []string{"phones", "emails"}},
		{"SentReaction", client.SentReaction{}, nil},
		{"SentContext", client.SentContext{}, nil},
		{"Media", client.UploadedMedia{}, nil},
	} {
		t.Run(tt.schema, func(t *testing.T) {
			want := schemaMembers(t, doc.Components.Schemas, tt.schema)
			got := jsonMembers(reflect.TypeOf(tt.v))
			for _, m := range tt.nullOK {
				if got[m] && !want[m] {
					got[m] = false
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("members and nullability (-schema +Go type %T):\n%s", tt.v, diff)
			}
		})
	}
}
