package providertest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ujumbe/messaging"
)

// ManagedTemplates returns the templates RunTemplateManager submits: valid
// under the service's authoring rules, with every component and button
// type (their HEADER formats written out, as providers list them).
func ManagedTemplates() []*messaging.Template {
	return []*messaging.Template{
		{Name: "providertest_shipping", Language: "en_US", Category: record.CategoryUtility, Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "TEXT", Text: "Order {{1}}"},
			{Type: "BODY", Text: "Hi {{1}}, your order {{2}} ships on {{3}}."},
			{Type: "FOOTER", Text: "Reply STOP to opt out"},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{
				{Type: "QUICK_REPLY", Text: "Thanks"},
				{Type: "URL", Text: "Track", URL: "https://example.com/track/{{1}}"},
				{Type: "PHONE_NUMBER", Text: "Call us", PhoneNumber: "+254712345678"},
			}},
		}},
		{Name: "providertest_code", Language: "sw", Category: record.CategoryAuthentication, Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "DOCUMENT"},
			{Type: "BODY", Text: "{{1}} ni nambari yako."},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "COPY_CODE", Example: "123456"}}},
		}},
	}
}

// RunTemplateManager proves the messaging.TemplateManager capability of
// the providers newProvider returns, with the sender (a WhatsApp
// connection; nil for a provider that needs none) that it returns
// alongside. When the provider is a messaging.TemplateSampleUploader, the
// sample of each media header is uploaded first (see SampleUpload) and
// its handle set as the header's ExampleHandle, as the service does.
// Each template of ManagedTemplates is submitted and must get a
// non-empty id and a status that messaging.TemplateEventState knows; when
// the provider is also a messaging.TemplateLister, it must list the
// template with the same id, name, language, category and components.
// The first template is then deleted by its provider id, the second by
// name only; neither may be listed afterwards, and deleting either again
// is not an error.
func RunTemplateManager(t *testing.T, newProvider func(t *testing.T) (messaging.Provider, *messaging.ChannelSender)) {
	t.Helper()
	p, s := newProvider(t)
	tm, ok := p.(messaging.TemplateManager)
	if !ok {
		t.Fatalf("providertest: %T does not implement messaging.TemplateManager", p)
	}
	lister, _ := p.(messaging.TemplateLister)
	ctx := t.Context()
	list := func() map[string]*messaging.ProviderTemplate {
		t.Helper()
		all, err := lister.ListTemplates(ctx, s)
		if err != nil {
			t.Fatalf("ListTemplates: %v", err)
		}
		byKey := map[string]*messaging.ProviderTemplate{}
		for _, pt := range all {
			byKey[pt.Name+"/"+pt.Language] = pt
		}
		return byKey
	}

	tpls := ManagedTemplates()
	if up, ok := p.(messaging.TemplateSampleUploader); ok {
		uploadSamples(t, up, s, tpls)
	}
	for _, tpl := range tpls {
		got, err := tm.SubmitTemplate(ctx, s, tpl)
		if err != nil {
			t.Fatalf("SubmitTemplate(%s): %v", tpl.Name, err)
		}
		if got == nil || got.ID == "" {
			t.Fatalf("SubmitTemplate(%s) = %+v, want a provider template with an id", tpl.Name, got)
		}
		if _, ok := messaging.TemplateEventState(got.Status); !ok {
			t.Errorf("SubmitTemplate(%s).Status = %q, which messaging.TemplateEventState does not know", tpl.Name, got.Status)
		}
		tpl.ProviderTemplateID = got.ID
	}
	if lister != nil {
		listed := list()
		for _, tpl := range tpls {
			got := listed[tpl.Name+"/"+tpl.Language]
			if got == nil {
				t.Errorf("ListTemplates does not list the submitted %s/%s", tpl.Name, tpl.Language)
				continue
			}
			want := &messaging.ProviderTemplate{ID: tpl.ProviderTemplateID, Name: tpl.Name, Language: tpl.Language,
				Category: tpl.Category, Components: tpl.Components}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(messaging.ProviderTemplate{}, "Status", "Reason", "Quality"),
				cmpopts.IgnoreFields(messaging.TemplateComponent{}, "ExampleHandle")); diff != "" {
				t.Errorf("ListTemplates: %s/%s mismatch (-want +got):\n%s", tpl.Name, tpl.Language, diff)
			}
		}
	}

	byName := *tpls[1]
	byName.ProviderTemplateID = ""
	deletes := []*messaging.Template{tpls[0], &byName}
	for _, d := range deletes {
		if err := tm.DeleteTemplate(ctx, s, d); err != nil {
			t.Fatalf("DeleteTemplate(%s, id %q): %v", d.Name, d.ProviderTemplateID, err)
		}
	}
	if lister != nil {
		listed := list()
		for _, tpl := range tpls {
			if got := listed[tpl.Name+"/"+tpl.Language]; got != nil {
				t.Errorf("ListTemplates still lists %s/%s after DeleteTemplate: %+v", tpl.Name, tpl.Language, got)
			}
		}
	}
	for _, d := range deletes {
		if err := tm.DeleteTemplate(ctx, s, d); err != nil {
			t.Errorf("DeleteTemplate(%s, id %q) of a deleted template = %v, want nil", d.Name, d.ProviderTemplateID, err)
		}
	}
}

// SampleUpload returns a small upload of kind (image, video or document)
// whose first bytes are of its MIME type (PNG, MP4, PDF), as the service
// checks them.
func SampleUpload(kind string) *messaging.MediaUpload {
	var mime, name string
	var b []byte
	switch kind {
	case record.MediaImage:
		mime, name, b = "image/png", "sample.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	case record.MediaVideo:
		mime, name, b = "video/mp4", "sample.mp4", []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
	default:
		mime, name, b = "application/pdf", "sample.pdf", []byte("%PDF-1.4\n%providertest sample\n")
	}
	return &messaging.MediaUpload{Kind: kind, MimeType: mime, Filename: name, Size: int64(len(b)), Body: bytes.NewReader(b)}
}

// uploadSamples uploads a sample of each media header of tpls and sets its
// handle as the header's ExampleHandle.
func uploadSamples(t *testing.T, up messaging.TemplateSampleUploader, s *messaging.ChannelSender, tpls []*messaging.Template) {
	t.Helper()
	for _, tpl := range tpls {
		for i, c := range tpl.Components {
			kind := strings.ToLower(c.Format)
			if c.Type != "HEADER" || (kind != record.MediaImage && kind != record.MediaVideo && kind != record.MediaDocument) {
				continue
			}
			r, err := up.UploadTemplateSample(t.Context(), s, SampleUpload(kind))
			if err != nil {
				t.Fatalf("UploadTemplateSample(%s header of %s): %v", kind, tpl.Name, err)
			}
			if r == nil || r.ProviderMediaID == "" {
				t.Fatalf("UploadTemplateSample(%s header of %s) = %+v, want a handle", kind, tpl.Name, r)
			}
			tpl.Components[i].ExampleHandle = r.ProviderMediaID
		}
	}
}
