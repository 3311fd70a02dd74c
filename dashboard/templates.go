package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// Settings -> Templates: the list of every template in every review
// state, a template's page (its chat-bubble preview, send_example,
// submit, delete, send a test), and the form authoring a draft, whose
// rules are the library's (messaging.CheckTemplate) on save and as the
// author types (templateCheck).

// maxFormButtons is the most button rows of the authoring form: the
// spec's 3 quick replies and 2 calls to action, and the library's one
// copy-code button, so that no draft loses a button when edited. The
// form shows only the rows in use; "Add a button" adds one.
const maxFormButtons = record.MaxQuickReplies + record.MaxCallToActions + 1

// templatesData is the templates list page.
type templatesData struct {
	Templates []*messaging.Template
	// Status is the status filter ("" for every state).
	Status   string
	Statuses []string
	// Pending is set when a template awaits review: the list refreshes.
	Pending bool
	// Self is the list's URL, for the refresh.
	Self string
}

func (h *Handler) templates(w http.ResponseWriter, r *http.Request, req *request) error {
	status := r.URL.Query().Get("status")
	filter := status
	if filter == "" {
		filter = record.TemplateStatusAny
	}
	p := &page{Title: "Templates", Nav: "templates"}
	p.fill(h, req)
	list, err := req.svc.Templates.List(req.ctx, &messaging.TemplateFilter{Status: filter})
	if err != nil {
		e := asError(err)
		if e == nil || e.Code != messaging.CodeValidation {
			return err
		}
		// A bad status filter: show every template, and say why.
		p.Problem, status = e.Message, ""
		if list, err = req.svc.Templates.List(req.ctx, &messaging.TemplateFilter{Status: record.TemplateStatusAny}); err != nil {
			return err
		}
	}
	d := &templatesData{Templates: list, Status: status, Statuses: messaging.TemplateStatuses(), Self: r.URL.RequestURI()}
	for _, t := range list {
		if t.Status == record.TemplatePending {
			d.Pending = true
		}
	}
	return h.renderData(w, r, http.StatusOK, "templates", p, d)
}

// templateData is a template's page.
type templateData struct {
	T       *messaging.Template
	Preview *bubble
	// Example is the template's send_example as JSON.
	Example string
	// Test is the "send a test" form (approved templates only).
	Test []testParam
}

// testParam is one parameter of the "send a test" form: a parameter of
// the send_example, by its place in it.
type testParam struct {
	Name, Label, Value string
	// Field is where the parameter is in the send
	// (components[i].parameters[j].text), as the library's errors name it.
	Field messaging.Path
}

func (h *Handler) template(w http.ResponseWriter, r *http.Request, req *request) error {
	return showByID(w, r, req, req.svc.Templates.Get, h.renderTemplate)
}

func (h *Handler) renderTemplate(w http.ResponseWriter, r *http.Request, req *request, p *page, t *messaging.Template, status int) error {
	p.Title, p.Nav = "Template "+t.Name, "templates"
	p.fill(h, req)
	ex, err := json.MarshalIndent(t.SendExample, "", "  ")
	if err != nil {
		return err
	}
	d := &templateData{T: t, Preview: previewOf(t.Components, exampleTexts(t.SendExample)), Example: string(ex)}
	if t.Status == record.TemplateApproved {
		d.Test = testParams(t.SendExample, p.Form)
		if p.Form == nil {
			p.Form = url.Values{"to": {t.SendExample.To}}
		}
	}
	return h.renderData(w, r, status, "template", p, d)
}

// exampleTexts returns the text parameters of a send example by
// component type ("header", "body"): the values the preview shows in
// place of the variables.
func exampleTexts(ex *messaging.SendTemplateParams) map[string][]string {
	out := map[string][]string{}
	if ex == nil {
		return out
	}
	for _, c := range ex.Components {
		if c.Type != "header" && c.Type != "body" {
			continue
		}
		for _, p := range c.Parameters {
			if p.Type == "text" {
				out[c.Type] = append(out[c.Type], p.Text)
			}
		}
	}
	return out
}

// testParams lists the parameters of ex as form fields, filled from form
// when the viewer sent it, else with the example's values.
func testParams(ex *messaging.SendTemplateParams, form url.Values) []testParam {
	var out []testParam
	for ci, c := range ex.Components {
		for pi, prm := range c.Parameters {
			at := record.FieldPath("components").Index(ci).Member("parameters").Index(pi)
			tp := testParam{Name: fmt.Sprintf("p_%d_%d", ci, pi)}
			what := c.Type
			if what != "" {
				what = strings.ToUpper(what[:1]) + what[1:]
			}
			if c.SubType != "" && c.Index != nil {
				what = fmt.Sprintf("Button %d (%s)", *c.Index+1, strings.ReplaceAll(c.SubType, "_", " "))
			}
			switch prm.Type {
			case "text":
				tp.Value = prm.Text
				tp.Label = fmt.Sprintf("%s variable {{%d}}", what, pi+1)
				tp.Field = at.Member("text")
			case "coupon_code":
				tp.Value, tp.Label = prm.CouponCode, what+" code"
				tp.Field = at.Member("coupon_code")
			case "image", "video", "document":
				tp.Value, tp.Label = prm.Link, what+" "+prm.Type+" link"
				tp.Field = at.Member("link")
			default:
				continue
			}
			if form != nil {
				tp.Value = form.Get(tp.Name)
			}
			out = append(out, tp)
		}
	}
	return out
}

// sendTest sends an approved template to a recipient through
// Messages.SendTemplate (as POST /v1/messages/templates does), with the
// parameters of the form in the places of the send_example's, and opens
// the message's page.
func (h *Handler) sendTest(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := postedTo(r, req, req.svc.Templates.Get)
	if err != nil {
		return err
	}
	ex := t.SendExample
	params := &messaging.SendTemplateParams{To: strings.TrimSpace(r.PostForm.Get("to")), TemplateName: ex.TemplateName, Language: ex.Language}
	for ci, c := range ex.Components {
		nc := c
		nc.Parameters = slices.Clone(c.Parameters)
		for pi := range nc.Parameters {
			v := r.PostForm.Get(fmt.Sprintf("p_%d_%d", ci, pi))
			switch prm := &nc.Parameters[pi]; prm.Type {
			case "text":
				prm.Text = v
			case "coupon_code":
				prm.CouponCode = v
			case "image", "video", "document":
				prm.Link = v
			}
		}
		params.Components = append(params.Components, nc)
	}
	res, err := req.svc.Messages.SendTemplate(req.ctx, params)
	if err != nil {
		p := &page{Form: r.PostForm}
		if !sendProblem(p, err, testParams(ex, nil)) {
			return err
		}
		return h.renderTemplate(w, r, req, p, t, http.StatusUnprocessableEntity)
	}
	h.flash(w, "Test message sent to "+res.To+" (status "+res.Status+").")
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/messages/"+url.PathEscape(res.MessageID), http.StatusSeeOther)
	return nil
}

// sendProblem records a refused test send on p: a field error next to
// its input (the library names send fields "to" and
// "components[i].parameters[j].text"), any other refusal of the library
// (template not approved, channel unavailable, ...) above the form. It
// reports whether err was the library's.
func sendProblem(p *page, err error, fields []testParam) bool {
	var e *messaging.Error
	if !errors.As(err, &e) || e.Code == messaging.CodeInternal {
		return false
	}
	field := ""
	switch {
	case e.Path.String() == "to":
		field = "to"
	case len(e.Path) > 0:
		// The parameter named, or the first of the component or list
		// named ("components[0].parameters").
		for _, f := range fields {
			if f.Field.HasPrefix(e.Path) {
				field = f.Name
				break
			}
		}
	}
	if field == "" {
		p.Problem = e.Message
		return true
	}
	p.Errors = map[string]string{field: e.Message}
	return true
}

func (h *Handler) submitTemplate(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := req.svc.Templates.Submit(req.ctx, r.PathValue("id"))
	if err != nil {
		if e := asError(err); e != nil && e.Code == messaging.CodeValidation && len(e.Path) > 0 && e.Path[len(e.Path)-1].Name == "example_media" {
			// The header needs its sample: open the editor with the
			// library's message at the sample's field.
			cur, gerr := req.svc.Templates.Get(req.ctx, r.PathValue("id"))
			if gerr != nil {
				return gerr
			}
			_, fields := paramsOf(formOf(cur))
			p := &page{Form: formOf(cur)}
			formError(p, err, fields)
			return h.renderForm(w, r, req, p, cur, http.StatusUnprocessableEntity)
		}
		return h.templateRefused(w, r, req, err)
	}
	h.flash(w, "Template "+t.Name+" submitted for review: "+t.Status+".")
	http.Redirect(w, r, h.templateURL(req, t.ID), http.StatusSeeOther)
	return nil
}

func (h *Handler) deleteTemplate(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := req.svc.Templates.Get(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := req.svc.Templates.Delete(req.ctx, t.ID); err != nil {
		return h.templateRefused(w, r, req, err)
	}
	h.flash(w, "Template "+t.Name+" deleted.")
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/templates", http.StatusSeeOther)
	return nil
}

// templateRefused shows the template's page with the library's refusal
// of an action (a conflict: it is no longer a draft; the provider
// refused the deletion) above it, status 409.
func (h *Handler) templateRefused(w http.ResponseWriter, r *http.Request, req *request, err error) error {
	var e *messaging.Error
	if !errors.As(err, &e) || (e.Code != messaging.CodeConflict && e.Code != messaging.CodeServiceUnavailable && e.Code != messaging.CodeValidation) {
		return err
	}
	t, gerr := req.svc.Templates.Get(req.ctx, r.PathValue("id"))
	if gerr != nil {
		return gerr
	}
	return h.renderTemplate(w, r, req, &page{Problem: e.Message}, t, http.StatusConflict)
}

func (h *Handler) templateURL(req *request, id string) string {
	return h.prefix + "w/" + req.ws.ID + "/templates/" + url.PathEscape(id)
}

// formData is the authoring form's page.
type formData struct {
	// T is the draft edited; nil for a new one.
	T          *messaging.Template
	Categories []string
	// Buttons are the button rows shown: the form's, none for a new
	// template; MaxButtons is the most the form takes.
	Buttons    []formButton
	MaxButtons int
	// Blank is an empty row, the pattern of the rows the page's script
	// adds.
	Blank []formButton
	// Vars are the variables of the body and the header, for their
	// example inputs.
	BodyVars   []int
	HeaderVars []int
	Preview    *bubble
	Action     string
	// Fields are the form's text inputs, by name.
	Fields map[string]formField
}

// formField is a text input of the authoring form.
type formField struct {
	Name, Label, Hint, Value, Error string
}

// formInputs are the authoring form's text inputs: name, label, hint.
var formInputs = [][3]string{
	{"name", "Name", "Lowercase letters, digits and underscores, for example order_update."},
	{"language", "Language", "One language code, for example en, sw or en_US."},
	{"header_text", "Header text", "Text headers only: at most 60 characters, at most one variable {{1}}."},
	{"header_example", "Example of the header's {{1}}", "Optional: shown in the preview and to the provider's reviewers."},
	{"footer", "Footer text", "At most 60 characters, no variables."},
}

// formButton is one button row of the form.
type formButton struct {
	N                 int
	Type, Text, Value string
	// TypeError, TextError and ValueError are the library's messages
	// about the row's fields.
	TypeError, TextError, ValueError string
	// NoQuickReply, NoCallToAction and NoCopyCode are set when the other
	// rows already hold as many buttons of that kind as the library
	// allows: the row's type choices say so.
	NoQuickReply, NoCallToAction, NoCopyCode bool
}

// ValueLabel is the label of the row's second input, as its type needs.
func (b formButton) ValueLabel() string {
	switch b.Type {
	case "URL":
		return "URL"
	case "PHONE_NUMBER":
		return "Phone number"
	case "COPY_CODE":
		return "Example code"
	}
	return "URL, phone number or example code"
}

// buttonRowNumbers returns the form's button rows in order: each n in
// 1..maxFormButtons for which the form holds a button_type_n,
// button_text_n or button_value_n (a posted row, blank or not).
func buttonRowNumbers(f url.Values) []int {
	var out []int
	for i := 1; i <= maxFormButtons; i++ {
		n := strconv.Itoa(i)
		if _, ok := f["button_type_"+n]; ok {
			out = append(out, i)
		} else if _, ok := f["button_text_"+n]; ok {
			out = append(out, i)
		} else if _, ok := f["button_value_"+n]; ok {
			out = append(out, i)
		}
	}
	return out
}

// editButtons applies the form's button controls without JavaScript
// (remove_button=<n> drops row n, add_button adds an empty row after the
// others, at most maxFormButtons) and numbers the rows 1, 2, ... again,
// keeping every value typed. It reports whether the viewer asked for one
// of them, which re-renders the form without saving.
func editButtons(f url.Values) bool {
	_, add := f["add_button"]
	remove, _ := strconv.Atoi(f.Get("remove_button"))
	_, removing := f["remove_button"]
	delete(f, "add_button")
	delete(f, "remove_button")
	type row struct{ typ, text, val string }
	var rows []row
	for _, i := range buttonRowNumbers(f) {
		n := strconv.Itoa(i)
		if i != remove {
			rows = append(rows, row{f.Get("button_type_" + n), f.Get("button_text_" + n), f.Get("button_value_" + n)})
		}
		delete(f, "button_type_"+n)
		delete(f, "button_text_"+n)
		delete(f, "button_value_"+n)
	}
	if add && len(rows) < maxFormButtons {
		rows = append(rows, row{})
	}
	for i, b := range rows {
		n := strconv.Itoa(i + 1)
		f.Set("button_type_"+n, b.typ)
		f.Set("button_text_"+n, b.text)
		f.Set("button_value_"+n, b.val)
	}
	return add || removing
}

// formButtons returns the form's button rows with their errors.
func formButtons(f url.Values, errs map[string]string) []formButton {
	var out []formButton
	kinds := map[string]int{}
	kind := func(typ string) string {
		if typ == "URL" || typ == "PHONE_NUMBER" {
			return "cta"
		}
		return typ
	}
	for _, i := range buttonRowNumbers(f) {
		n := strconv.Itoa(i)
		b := formButton{N: i, Type: f.Get("button_type_" + n), Text: f.Get("button_text_" + n), Value: f.Get("button_value_" + n),
			TypeError: errs["button_type_"+n], TextError: errs["button_text_"+n], ValueError: errs["button_value_"+n]}
		kinds[kind(b.Type)]++
		out = append(out, b)
	}
	for i := range out {
		others := func(k string) int {
			c := kinds[k]
			if kind(out[i].Type) == k {
				c--
			}
			return c
		}
		out[i].NoQuickReply = others("QUICK_REPLY") >= record.MaxQuickReplies
		out[i].NoCallToAction = others("cta") >= record.MaxCallToActions
		out[i].NoCopyCode = others("COPY_CODE") >= 1
	}
	return out
}

func (h *Handler) newTemplate(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.renderForm(w, r, req, &page{Form: url.Values{"language": {"en"}, "category": {record.CategoryUtility}}}, nil, http.StatusOK)
}

func (h *Handler) editTemplate(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := req.svc.Templates.Get(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	p := &page{Form: formOf(t)}
	status := http.StatusOK
	if t.Status != record.TemplateDraft {
		// The library refuses the edit; say so before the viewer types.
		p.Problem = fmt.Sprintf("status: the template is %s; only a draft can be edited. A correction needs a new template with a different name.", t.Status)
		status = http.StatusConflict
	}
	return h.renderForm(w, r, req, p, t, status)
}

func (h *Handler) renderForm(w http.ResponseWriter, r *http.Request, req *request, p *page, t *messaging.Template, status int) error {
	p.Title, p.Nav = "New template", "templates"
	action := h.prefix + "w/" + req.ws.ID + "/templates/new"
	if t != nil {
		p.Title, action = "Edit template "+t.Name, h.templateURL(req, t.ID)+"/edit"
	}
	p.fill(h, req)
	params, _ := paramsOf(p.Form)
	d := &formData{T: t, Categories: []string{record.CategoryMarketing, record.CategoryUtility, record.CategoryAuthentication},
		Preview: previewOf(params.Components, formExamples(p.Form)), Action: action}
	d.BodyVars, _ = messaging.TemplateVariables("body", p.Form.Get("body"))
	if p.Form.Get("header_format") == "TEXT" {
		d.HeaderVars, _ = messaging.TemplateVariables("header", p.Form.Get("header_text"))
	}
	d.Fields = map[string]formField{}
	for _, in := range formInputs {
		d.Fields[in[0]] = formField{Name: in[0], Label: in[1], Hint: in[2], Value: p.Form.Get(in[0]), Error: p.Errors[in[0]]}
	}
	d.Buttons = formButtons(p.Form, p.Errors)
	d.MaxButtons = maxFormButtons
	d.Blank = []formButton{{N: 0}}
	return h.renderData(w, r, status, "template_form", p, d)
}

// createTemplate stores the form as a draft (Templates.Create, which
// checks every authoring rule) and opens it.
func (h *Handler) createTemplate(w http.ResponseWriter, r *http.Request, req *request) error {
	form, sampleErr, err := h.readTemplateForm(w, r, req)
	if err != nil {
		return err
	}
	if editButtons(form) {
		return h.renderForm(w, r, req, buttonsPage(form, sampleErr), nil, http.StatusOK)
	}
	if sampleErr != "" {
		return h.renderForm(w, r, req, &page{Form: form, Errors: map[string]string{"header_sample": sampleErr}}, nil, http.StatusUnprocessableEntity)
	}
	params, fields := paramsOf(form)
	t, err := req.svc.Templates.Create(req.ctx, params)
	if err != nil {
		p := &page{Form: form}
		if !formError(p, err, fields) {
			return err
		}
		return h.renderForm(w, r, req, p, nil, http.StatusUnprocessableEntity)
	}
	h.flash(w, "Draft "+t.Name+" saved. Submit it for review when it is ready.")
	http.Redirect(w, r, h.templateURL(req, t.ID), http.StatusSeeOther)
	return nil
}

// buttonsPage is the form re-rendered after a button control (add or
// remove a row, no JavaScript): nothing saved, the sample's refusal, if
// any, next to its input.
func buttonsPage(form url.Values, sampleErr string) *page {
	p := &page{Form: form}
	if sampleErr != "" {
		p.Errors = map[string]string{"header_sample": sampleErr}
	}
	return p
}

// updateTemplate replaces a draft with the form (Templates.Update: the
// same rules; a template that is not a draft is the library's conflict).
func (h *Handler) updateTemplate(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := req.svc.Templates.Get(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	form, sampleErr, err := h.readTemplateForm(w, r, req)
	if err != nil {
		return err
	}
	if editButtons(form) {
		return h.renderForm(w, r, req, buttonsPage(form, sampleErr), t, http.StatusOK)
	}
	if sampleErr != "" {
		return h.renderForm(w, r, req, &page{Form: form, Errors: map[string]string{"header_sample": sampleErr}}, t, http.StatusUnprocessableEntity)
	}
	params, fields := paramsOf(form)
	next, err := req.svc.Templates.Update(req.ctx, t.ID, params)
	if err != nil {
		p := &page{Form: form}
		if !formError(p, err, fields) {
			return err
		}
		status := http.StatusUnprocessableEntity
		if messaging.ErrorCode(err) == messaging.CodeConflict {
			status = http.StatusConflict
		}
		return h.renderForm(w, r, req, p, t, status)
	}
	h.flash(w, "Draft "+next.Name+" saved.")
	http.Redirect(w, r, h.templateURL(req, t.ID), http.StatusSeeOther)
	return nil
}

// checkResult is the answer of the check endpoint.
type checkResult struct {
	// OK is true when the form keeps every authoring rule.
	OK bool `json:"ok"`
	// Errors are the library's messages by form field.
	Errors map[string]string `json:"errors"`
	// Problem is a message about the whole form.
	Problem string `json:"problem,omitempty"`
	// Preview is the chat-bubble preview, as HTML.
	Preview string `json:"preview"`
	// BodyVars and HeaderVars are the variables of the body and header,
	// for the example inputs.
	BodyVars   []int `json:"body_vars"`
	HeaderVars []int `json:"header_vars"`
}

// templateCheck runs the library's authoring rules
// (messaging.CheckTemplate, as Create and Update do) on the form without
// storing anything, and answers JSON: the field errors and the preview.
func (h *Handler) templateCheck(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	params, fields := paramsOf(r.PostForm)
	res := checkResult{OK: true, Errors: map[string]string{}, BodyVars: []int{}, HeaderVars: []int{}}
	if err := messaging.CheckTemplate(params); err != nil {
		p := &page{}
		if !formError(p, err, fields) {
			return err
		}
		res.OK, res.Problem = false, p.Problem
		for k, v := range p.Errors {
			res.Errors[k] = v
		}
	}
	if vs, err := messaging.TemplateVariables("body", r.PostForm.Get("body")); err == nil && vs != nil {
		res.BodyVars = vs
	}
	if r.PostForm.Get("header_format") == "TEXT" {
		if vs, err := messaging.TemplateVariables("header", r.PostForm.Get("header_text")); err == nil && vs != nil {
			res.HeaderVars = vs
		}
	}
	var buf bytes.Buffer
	if err := h.pages.byName["template_form"].ExecuteTemplate(&buf, "bubble", previewOf(params.Components, formExamples(r.PostForm))); err != nil {
		return err
	}
	res.Preview = buf.String()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(res)
}

// paramsOf turns the authoring form into the library's params (a draft)
// and returns, for each component index, the form field prefix it came
// from ("header", "body", "footer", "buttons") with, for buttons, the
// form row of each button, so the library's field names map back to the
// form's.
func paramsOf(f url.Values) (*messaging.TemplateCreateParams, *formFields) {
	p := &messaging.TemplateCreateParams{
		Name: strings.TrimSpace(f.Get("name")), Language: strings.TrimSpace(f.Get("language")),
		Category: f.Get("category"), Status: record.TemplateDraft,
	}
	ff := &formFields{}
	if hf := f.Get("header_format"); hf != "" && hf != "NONE" {
		c := messaging.TemplateComponent{Type: "HEADER", Format: hf}
		if sampleFormats[hf] {
			c.ExampleMedia = strings.TrimSpace(f.Get("header_sample_id"))
		}
		if hf == "TEXT" {
			c.Text = f.Get("header_text")
			if vars, err := messaging.TemplateVariables("header", c.Text); err == nil && len(vars) > 0 {
				c.Examples = examplesOf(f, []string{"header_example"})
			}
		}
		p.Components = append(p.Components, c)
		ff.comps = append(ff.comps, "header")
	}
	bc := messaging.TemplateComponent{Type: "BODY", Text: f.Get("body")}
	if vars, err := messaging.TemplateVariables("body", bc.Text); err == nil && len(vars) > 0 {
		names := make([]string, len(vars))
		for i := range names {
			names[i] = "body_example_" + strconv.Itoa(i+1)
		}
		bc.Examples = examplesOf(f, names)
	}
	p.Components = append(p.Components, bc)
	ff.comps = append(ff.comps, "body")
	if ft := f.Get("footer"); ft != "" {
		p.Components = append(p.Components, messaging.TemplateComponent{Type: "FOOTER", Text: ft})
		ff.comps = append(ff.comps, "footer")
	}
	var bs []messaging.TemplateButton
	for i := 1; i <= maxFormButtons; i++ {
		n := strconv.Itoa(i)
		typ, text, val := f.Get("button_type_"+n), f.Get("button_text_"+n), strings.TrimSpace(f.Get("button_value_"+n))
		if typ == "" || typ == "NONE" {
			continue
		}
		b := messaging.TemplateButton{Type: typ, Text: text}
		switch typ {
		case "URL":
			b.URL = val
		case "PHONE_NUMBER":
			b.PhoneNumber = val
		case "COPY_CODE":
			b.Text, b.Example = "", val
		}
		bs = append(bs, b)
		ff.buttonRows = append(ff.buttonRows, i)
	}
	if len(bs) > 0 {
		p.Components = append(p.Components, messaging.TemplateComponent{Type: "BUTTONS", Buttons: bs})
		ff.comps = append(ff.comps, "buttons")
	}
	return p, ff
}

// examplesOf returns the form's values of the example fields names, or
// nil when every one is empty (examples are optional).
func examplesOf(f url.Values, names []string) []string {
	out := make([]string, len(names))
	given := false
	for i, n := range names {
		out[i] = f.Get(n)
		given = given || strings.TrimSpace(out[i]) != ""
	}
	if !given {
		return nil
	}
	return out
}

// formFields maps the library's component indices to the form.
type formFields struct {
	comps      []string
	buttonRows []int
}

// field returns the form field of the library's field at path.
func (ff *formFields) field(path messaging.Path) string {
	switch name := path.Name(); {
	case len(path) == 1 && (name == "name" || name == "language" || name == "category"):
		return name
	case len(path) == 1 && name == "components":
		return "body"
	case name != "components" || len(path) < 2 || len(path) > 5 || path[1].Name != "" || path[1].Index >= len(ff.comps):
		return ""
	}
	// components[ci], then a member sub, an index n and a member leaf,
	// each optional after the one before.
	if (len(path) > 2 && path[2].Name == "") || (len(path) > 3 && path[3].Name != "") || (len(path) > 4 && path[4].Name == "") {
		return ""
	}
	var sub, leaf string
	n := -1
	if len(path) > 2 {
		sub = path[2].Name
	}
	if len(path) > 3 {
		n = path[3].Index
	}
	if len(path) > 4 {
		leaf = path[4].Name
	}
	return ff.componentField(ff.comps[path[1].Index], sub, n, leaf)
}

// componentField returns the form field of the member sub of the form's
// component comp ("header", "body", "footer", "buttons"), of its element
// n (-1 for none) and that element's member leaf.
func (ff *formFields) componentField(comp, sub string, n int, leaf string) string {
	switch comp {
	case "header":
		switch sub {
		case "format":
			return "header_format"
		case "examples":
			return "header_example"
		case "example_media":
			return "header_sample"
		}
		return "header_text"
	case "body":
		if sub == "examples" {
			if n < 0 {
				return "body_examples"
			}
			return "body_example_" + strconv.Itoa(n+1)
		}
		return comp
	case "footer":
		return comp
	case "buttons":
		if n < 0 {
			return "buttons"
		}
		if n >= len(ff.buttonRows) {
			return "buttons"
		}
		row := strconv.Itoa(ff.buttonRows[n])
		switch leaf {
		case "type":
			return "button_type_" + row
		case "text":
			return "button_text_" + row
		}
		return "button_value_" + row
	}
	return ""
}

// formError records the library's refusal of the form on p: a
// validation error next to its form field, anything else the library
// said (a conflict: name taken, not a draft) above the form. It reports
// whether err was the library's.
func formError(p *page, err error, ff *formFields) bool {
	var e *messaging.Error
	if !errors.As(err, &e) {
		return false
	}
	if e.Code == messaging.CodeConflict && e.Path.String() == "name" {
		// The name is taken: that is the name field's problem.
		p.Errors = map[string]string{"name": e.Message}
		return true
	}
	if e.Code != messaging.CodeValidation {
		return p.fieldError(err)
	}
	if f := ff.field(e.Path); f != "" {
		p.Errors = map[string]string{f: e.Message}
		return true
	}
	p.Problem = e.Message
	return true
}

// formOf fills the authoring form from a template.
func formOf(t *messaging.Template) url.Values {
	f := url.Values{"name": {t.Name}, "language": {t.Language}, "category": {t.Category}, "header_format": {"NONE"}}
	for _, c := range t.Components {
		switch c.Type {
		case "HEADER":
			format := c.Format
			if format == "" {
				format = "TEXT"
			}
			f.Set("header_format", format)
			f.Set("header_text", c.Text)
			if c.ExampleMedia != "" {
				f.Set("header_sample_id", c.ExampleMedia)
			}
			if len(c.Examples) > 0 {
				f.Set("header_example", c.Examples[0])
			}
		case "BODY":
			f.Set("body", c.Text)
			for i, ex := range c.Examples {
				f.Set("body_example_"+strconv.Itoa(i+1), ex)
			}
		case "FOOTER":
			f.Set("footer", c.Text)
		case "BUTTONS":
			for i, b := range c.Buttons {
				n := strconv.Itoa(i + 1)
				f.Set("button_type_"+n, b.Type)
				f.Set("button_text_"+n, b.Text)
				switch b.Type {
				case "URL":
					f.Set("button_value_"+n, b.URL)
				case "PHONE_NUMBER":
					f.Set("button_value_"+n, b.PhoneNumber)
				case "COPY_CODE":
					f.Set("button_value_"+n, b.Example)
				}
			}
		}
	}
	return f
}

// formExamples returns the form's example values of the header's and
// body's variables ("header_example", "body_example_<n>").
func formExamples(f url.Values) map[string][]string {
	out := map[string][]string{}
	if v := f.Get("header_example"); v != "" {
		out["header"] = []string{v}
	}
	for i := 1; i <= 20; i++ {
		out["body"] = append(out["body"], f.Get("body_example_"+strconv.Itoa(i)))
	}
	return out
}

// bubble is the chat-bubble preview of a template.
type bubble struct {
	// Media is the format of a media header (IMAGE, VIDEO, DOCUMENT).
	Media   string
	Header  []piece
	Body    []piece
	Footer  string
	Buttons []bubbleButton
}

// piece is a run of text or a variable with its example.
type piece struct {
	Text string
	// Var is the variable's number; 0 for text.
	Var     int
	Example string
}

type bubbleButton struct {
	Icon, Text string
}

// previewOf lays out components as a chat bubble; examples hold the
// example values of the variables by component ("header", "body"), in
// the order of their numbers.
func previewOf(cs []messaging.TemplateComponent, examples map[string][]string) *bubble {
	b := &bubble{}
	for _, c := range cs {
		switch c.Type {
		case "HEADER":
			if c.Format != "" && c.Format != "TEXT" {
				b.Media = c.Format
				continue
			}
			b.Header = pieces(c.Text, examples["header"])
		case "BODY":
			b.Body = pieces(c.Text, examples["body"])
		case "FOOTER":
			b.Footer = c.Text
		case "BUTTONS":
			for _, x := range c.Buttons {
				bb := bubbleButton{Text: x.Text}
				switch x.Type {
				case "URL":
					bb.Icon = "↗"
				case "PHONE_NUMBER":
					bb.Icon = "✆"
				case "COPY_CODE":
					bb.Icon, bb.Text = "⧉", "Copy code"
				default:
					bb.Icon = "↩"
				}
				b.Buttons = append(b.Buttons, bb)
			}
		}
	}
	return b
}

var varRe = regexp.MustCompile(`\{\{(\d+)\}\}`)

// pieces splits text at its {{n}} variables; a variable shows its example
// when there is one.
func pieces(text string, examples []string) []piece {
	var out []piece
	last := 0
	for _, m := range varRe.FindAllStringSubmatchIndex(text, -1) {
		if m[0] > last {
			out = append(out, piece{Text: text[last:m[0]]})
		}
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		pc := piece{Text: text[m[0]:m[1]], Var: n}
		if n >= 1 && n <= len(examples) {
			pc.Example = examples[n-1]
		}
		out = append(out, pc)
		last = m[1]
	}
	if last < len(text) {
		out = append(out, piece{Text: text[last:]})
	}
	return out
}
