package dashboard_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// buttonRowRe matches a button row of the authoring form (not the
// pattern row, numbered 0, that the page's script copies).
var buttonRowRe = regexp.MustCompile(`data-row="([1-9])"`)

// buttonRows returns the numbers of the form's button rows, in order.
func buttonRows(body string) []string {
	var out []string
	for _, m := range buttonRowRe.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestTemplateFormNoButtons: a new template's form shows no button row,
// only the "Add a button" control, which posts the form (no JavaScript
// needed).
func TestTemplateFormNoButtons(t *testing.T) {
	f := setup(t)
	r := f.get("/w/acme/templates/new")
	if rows := buttonRows(r.body); len(rows) != 0 {
		t.Errorf("the new form shows button rows %v; want none", rows)
	}
	if strings.Contains(r.body, `name="button_type_1"`) {
		t.Error("the new form has an input of button 1")
	}
	r.wantContains(t, `<button type="submit" class="button" name="add_button" value="1" id="add-button" >Add a button</button>`)
	// Enter in a field submits with the form's first submit button: it
	// must save, not add a button.
	form := r.body[strings.Index(r.body, `id="tpl-form"`):]
	first := form[strings.Index(form, `<button type="submit"`):]
	if first = first[:strings.Index(first, ">")]; strings.Contains(first, "name=") {
		t.Errorf("the form's default button is %s; want one that saves", first)
	}
}

// TestTemplateFormAddButton: "Add another button" without JavaScript
// re-renders the form with one more empty row, keeping every value
// typed, and stores nothing; "Remove" drops its row and numbers the
// others again.
func TestTemplateFormAddButton(t *testing.T) {
	f := setup(t)
	form := draftForm("order_update")
	form.Set("add_button", "1")
	r := f.post("/w/acme/templates/new", form)
	if r.status != http.StatusOK {
		t.Fatalf("add_button answered %d; want 200", r.status)
	}
	if got := strings.Join(buttonRows(r.body), ","); got != "1,2,3" {
		t.Errorf("after add_button the rows are %q; want 1,2,3", got)
	}
	r.wantContains(t, `name="button_text_1" value="Thanks"`, `name="button_text_2" value="Track"`,
		`name="button_value_2" value="https://shop.example/track/{{1}}"`, `<option value="URL" selected>`,
		`name="button_text_3" value=""`, `name="button_value_3" value=""`, `value="order_update"`,
		"Hi {{1}}, your order ships on {{2}}.", `value="Monday"`, ">Add another button</button>")
	if f.templateByName("order_update") != nil {
		t.Error("add_button stored the template")
	}

	form = draftForm("order_update")
	form.Set("remove_button", "1")
	r = f.post("/w/acme/templates/new", form)
	if r.status != http.StatusOK {
		t.Fatalf("remove_button answered %d; want 200", r.status)
	}
	if got := strings.Join(buttonRows(r.body), ","); got != "1" {
		t.Errorf("after removing button 1 the rows are %q; want 1", got)
	}
	r.wantContains(t, `name="button_text_1" value="Track"`, `name="button_value_1" value="https://shop.example/track/{{1}}"`)
	if strings.Contains(r.body, "Thanks") {
		t.Error("the removed button's text is still in the form")
	}
	if f.templateByName("order_update") != nil {
		t.Error("remove_button stored the template")
	}
}

// TestTemplateFormEditButtons: a draft with three quick replies opens in
// the editor with three filled rows; a row added after them offers no
// fourth quick reply (the library's limit), and a save refused for a
// button shows the error in that row.
func TestTemplateFormEditButtons(t *testing.T) {
	f := setup(t)
	form := draftForm("order_update")
	for _, n := range []string{"2", "3"} {
		form.Set("button_type_"+n, "QUICK_REPLY")
		form.Set("button_text_"+n, "Reply "+n)
		form.Del("button_value_" + n)
	}
	if r := f.post("/w/acme/templates/new", form); r.status != http.StatusSeeOther {
		t.Fatalf("saving three quick replies answered %d: %s", r.status, r.body)
	}
	tpl := f.templateByName("order_update")
	r := f.get("/w/acme/templates/" + tpl.ID + "/edit")
	if got := strings.Join(buttonRows(r.body), ","); got != "1,2,3" {
		t.Errorf("the draft's editor shows rows %q; want 1,2,3", got)
	}
	r.wantContains(t, `name="button_text_1" value="Thanks"`, `name="button_text_2" value="Reply 2"`, `name="button_text_3" value="Reply 3"`)

	form.Set("add_button", "1")
	r = f.post("/w/acme/templates/"+tpl.ID+"/edit", form)
	if got := strings.Join(buttonRows(r.body), ","); got != "1,2,3,4" {
		t.Errorf("after add_button the rows are %q; want 1,2,3,4", got)
	}
	row4 := r.body[strings.Index(r.body, `data-row="4"`):]
	row4 = row4[:strings.Index(row4, "</select>")]
	if !strings.Contains(row4, `<option value="QUICK_REPLY" disabled>`) || !strings.Contains(row4, `<option value="URL" >`) {
		t.Errorf("row 4 offers a fourth quick reply or no URL:\n%s", row4)
	}

	form.Del("add_button")
	form.Set("button_text_3", "")
	r = f.post("/w/acme/templates/"+tpl.ID+"/edit", form)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("an empty button text answered %d; want 422", r.status)
	}
	r.wantContains(t, `<p class="error" id="err-button_text_3" >components[3].buttons[2].text: is required</p>`)
}
