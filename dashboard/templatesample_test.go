package dashboard_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// sampleFile is the file of a multipart post: its name, type and bytes.
type sampleFile struct {
	name, mimeType string
	body           []byte
}

// postMultipart sends form as the browser sends the authoring form
// (multipart/form-data, fields in order, then the sample file when set).
func (f *fixture) postMultipart(path string, form url.Values, order []string, file *sampleFile) response {
	f.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	seen := map[string]bool{}
	write := func(k string) {
		for _, v := range form[k] {
			if err := mw.WriteField(k, v); err != nil {
				f.t.Fatal(err)
			}
		}
		seen[k] = true
	}
	for _, k := range order {
		write(k)
	}
	if file != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="header_sample"; filename="`+file.name+`"`)
		h.Set("Content-Type", file.mimeType)
		w, err := mw.CreatePart(h)
		if err != nil {
			f.t.Fatal(err)
		}
		w.Write(file.body)
	}
	for k := range form {
		if !seen[k] {
			write(k)
		}
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/dashboard/"+strings.TrimPrefix(path, "/"), &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return f.do(req)
}

// mediaForm is an authoring form with a media header of format.
func mediaForm(name, format string) url.Values {
	return url.Values{"name": {name}, "language": {"en"}, "category": {"MARKETING"}, "header_format": {format},
		"body": {"New in store this week"}, "footer": {"Reply STOP to opt out"}}
}

// headerFirst is the order of the form's fields up to the sample input,
// as the browser sends them.
var headerFirst = []string{"name", "language", "category", "header_format", "header_text", "header_example"}

// sampleError is the message at the sample's field of a form page.
var sampleErrorRe = regexp.MustCompile(`<p class="error" id="err-header_sample" >([^<]*)</p>`)

// TestTemplateSampleUpload: the editor of a media header offers a file
// input for its sample on a multipart form; the file is uploaded as a
// template sample and becomes the header's example_media; the template is
// submitted and the fake provider approves it. The edit form keeps the
// sample.
func TestTemplateSampleUpload(t *testing.T) {
	f := setup(t)
	f.get("/w/acme/templates/new").wantContains(t, `enctype="multipart/form-data"`,
		`<input type="file" id="f-header_sample" name="header_sample"`, "No sample uploaded yet.")
	r := f.postMultipart("/w/acme/templates/new", mediaForm("spring_sale", "IMAGE"), headerFirst,
		&sampleFile{"sale.png", "image/png", pngBytes})
	tpl := f.templateByName("spring_sale")
	if r.status != http.StatusSeeOther || tpl == nil {
		t.Fatalf("the form answered %d and stored %v:\n%s", r.status, tpl, r.body)
	}
	sample := tpl.Components[0].ExampleMedia
	if tpl.Components[0].Format != "IMAGE" || !strings.HasPrefix(sample, "med_") {
		t.Fatalf("header = %+v; want an IMAGE header with an uploaded sample", tpl.Components[0])
	}
	if ups := f.prov.Uploads(); len(ups) != 1 || ups[0].MimeType != "image/png" || ups[0].Kind != "image" || ups[0].Purpose != record.MediaForTemplateSample {
		t.Errorf("the provider got uploads %+v; want one image/png template sample", ups)
	}
	f.get("/w/acme/templates/"+tpl.ID+"/edit").wantContains(t, `<input type="hidden" name="header_sample_id" value="`+sample+`">`,
		`Current sample: <code id="sample-id">`+sample+`</code>`)
	// Saving the draft again without a new file keeps the sample.
	form := mediaForm("spring_sale", "IMAGE")
	form.Set("header_sample_id", sample)
	form.Set("body", "New in store: shoes")
	if r := f.postMultipart("/w/acme/templates/"+tpl.ID+"/edit", form, headerFirst, &sampleFile{"", "application/octet-stream", nil}); r.status != http.StatusSeeOther {
		t.Fatalf("the edit answered %d:\n%s", r.status, r.body)
	}
	if got := f.templateByName("spring_sale").Components[0].ExampleMedia; got != sample {
		t.Errorf("after the edit the sample is %q; want %q", got, sample)
	}
	if r := f.post("/w/acme/templates/"+tpl.ID+"/submit", nil); r.status != http.StatusSeeOther {
		t.Fatalf("submit answered %d:\n%s", r.status, r.body)
	}
	f.review()
	if got := f.templateByName("spring_sale"); got.Status != record.TemplateApproved {
		t.Errorf("after the review the template is %s (%s); want approved", got.Status, got.StatusReason)
	}
}

// TestTemplateSampleRefused: a PNG given as the sample of a VIDEO header
// is refused by the library; its message is shown at the sample's field
// (422), and nothing is stored.
func TestTemplateSampleRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		file *sampleFile
		msg  string
	}{
		{"png type", &sampleFile{"sale.png", "image/png", pngBytes}, "kind: is video but the file is image/png"},
		{"png bytes", &sampleFile{"sale.mp4", "video/mp4", pngBytes}, "file: is not video/mp4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			r := f.postMultipart("/w/acme/templates/new", mediaForm("spring_sale", "VIDEO"), headerFirst, tc.file)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("answered %d; want 422:\n%s", r.status, r.body)
			}
			m := sampleErrorRe.FindStringSubmatch(r.body)
			if m == nil || !strings.Contains(htmlUnescape(m[1]), tc.msg) {
				t.Errorf("no error %q at the sample's field; page:\n%s", tc.msg, r.body)
			}
			r.wantContains(t, `value="spring_sale"`, `<option value="VIDEO" selected>`)
			if f.templateByName("spring_sale") != nil {
				t.Error("a refused sample stored the template")
			}
			if n := len(f.prov.Uploads()); n != 0 {
				t.Errorf("the provider got %d uploads", n)
			}
		})
	}
}

// TestTemplateSampleRequired: submitting a media-header draft without a
// sample opens the editor with the library's message about
// components[0].example_media at the sample's field; the template stays
// a draft.
func TestTemplateSampleRequired(t *testing.T) {
	f := setup(t)
	if r := f.post("/w/acme/templates/new", mediaForm("spring_sale", "DOCUMENT")); r.status != http.StatusSeeOther {
		t.Fatalf("saving the draft answered %d:\n%s", r.status, r.body)
	}
	tpl := f.templateByName("spring_sale")
	r := f.post("/w/acme/templates/"+tpl.ID+"/submit", nil)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("submit answered %d; want 422:\n%s", r.status, r.body)
	}
	_, libErr := f.svc.Workspace("acme").Templates.Submit(f.ctx, tpl.ID)
	e := &messaging.Error{}
	if !asErr(libErr, &e) || e.Path.String() != "components[0].example_media" {
		t.Fatalf("the library's refusal is %v; want one naming components[0].example_media", libErr)
	}
	m := sampleErrorRe.FindStringSubmatch(r.body)
	if m == nil || htmlUnescape(m[1]) != e.Message {
		t.Errorf("the editor lacks %q at the sample's field:\n%s", e.Message, r.body)
	}
	r.wantContains(t, `action="/dashboard/w/acme/templates/`+tpl.ID+`/edit"`, `<option value="DOCUMENT" selected>`)
	if got := f.templateByName("spring_sale").Status; got != record.TemplateDraft {
		t.Errorf("the template is %s; want still a draft", got)
	}
	// A form refused for another field keeps the uploaded sample.
	form := mediaForm("Bad Name", "IMAGE")
	r = f.postMultipart("/w/acme/templates/new", form, headerFirst, &sampleFile{"sale.png", "image/png", pngBytes})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad name answered %d", r.status)
	}
	r.wantContains(t, `<input type="hidden" name="header_sample_id" value="med_`)
}
