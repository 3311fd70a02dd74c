package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// contact creates a contact in acme through the library.
func (f *fixture) contact(first, last, phone, email string) *messaging.Contact {
	f.t.Helper()
	c, err := f.svc.Workspace("acme").Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: first, LastName: last, Phone: phone, Email: email})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

var contactLinkRe = regexp.MustCompile(`href="/dashboard/w/acme/contacts/(ct_[0-9a-f]+)"`)

func contactIDs(body string) []string {
	var ids []string
	for _, m := range contactLinkRe.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestContactsSearch: the page finds what GET /v1/contacts finds (the
// library's Contacts.List with Search): name and email prefixes, phone
// digits however they are typed.
func TestContactsSearch(t *testing.T) {
	f := setup(t)
	jane := f.contact("Jane", "Doe", "+254712345678", "jane@example.com")
	john := f.contact("John", "Smith", "+254733000111", "")
	amy := f.contact("Amy", "Janeway", "", "amy@starfleet.example")
	for _, tc := range []struct {
		search string
		want   []string
	}{
		{"", []string{amy.ID, john.ID, jane.ID}},
		{"ja", []string{amy.ID, jane.ID}}, // Jane, and Janeway's last name
		{"jane doe", []string{jane.ID}},
		{"  JOHN  ", []string{john.ID}},
		{"+2547", []string{john.ID, jane.ID}},
		{"254 71", []string{jane.ID}},
		{"(254) 733-000", []string{john.ID}},
		{"amy@", []string{amy.ID}},
		{"nobody", nil},
	} {
		r := f.get("/w/acme/contacts?search=" + url.QueryEscape(tc.search))
		if r.status != http.StatusOK {
			t.Errorf("search %q answered %d", tc.search, r.status)
			continue
		}
		if d := cmp.Diff(tc.want, contactIDs(r.body)); d != "" {
			t.Errorf("search %q (-want +got):\n%s", tc.search, d)
		}
		lib, err := f.svc.Workspace("acme").Contacts.List(f.ctx, &messaging.ContactQuery{Search: tc.search})
		if err != nil || len(lib.Items) != len(tc.want) {
			t.Errorf("the library finds %d for %q (%v); the page %d", len(lib.Items), tc.search, err, len(tc.want))
		}
	}
	r := f.get("/w/acme/contacts?search=" + strings.Repeat("a", 101))
	if r.status != http.StatusBadRequest {
		t.Errorf("a too long search answered %d; want 400", r.status)
	}
	r.wantContains(t, `id="c-search-err"`, "search: must be at most 100 characters")
}

// TestContactsPaging: the pages list every contact once, and the links
// keep the search.
func TestContactsPaging(t *testing.T) {
	f := setup(t)
	want := map[string]bool{}
	for i := range 30 {
		c := f.contact("Pat"+strconv.Itoa(i), "", "+2547123400"+strconv.Itoa(10+i), "")
		want[c.ID] = true
	}
	f.contact("Zed", "", "+254799999999", "")
	got := map[string]bool{}
	r := f.get("/w/acme/contacts?search=pat")
	r.wantContains(t, "30 contacts", "page 1 of 2")
	for _, id := range contactIDs(r.body) {
		got[id] = true
	}
	next := nextLink(r.body)
	if next != "w/acme/contacts?page=2&search=pat" {
		t.Fatalf("Next link = %q", next)
	}
	r = f.get(next)
	r.wantContains(t, "page 2 of 2", `rel="prev"`)
	for _, id := range contactIDs(r.body) {
		if got[id] {
			t.Errorf("contact %s is on both pages", id)
		}
		got[id] = true
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("contacts over the pages (-want +got):\n%s", d)
	}
	if r := f.get("/w/acme/contacts?page=0"); r.status != http.StatusBadRequest || !strings.Contains(r.body, "page: must be an integer from 1 to") {
		t.Errorf("page=0 answered %d", r.status)
	}
}

func contactFormValues(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// TestCreateContact: a bad field is shown next to it with the library's
// message and nothing is stored; a good form creates the contact.
func TestCreateContact(t *testing.T) {
	f := setup(t)
	if r := f.get("/w/acme/contacts/new"); r.status != http.StatusOK {
		t.Fatalf("new contact form answered %d", r.status)
	}
	for _, tc := range []struct {
		form  url.Values
		field string
		msg   string
	}{
		{contactFormValues("firstName", "Jane", "phone", "0712 345"), "phone", "phone: must be in E.164 format"},
		{contactFormValues("firstName", "", "phone", "+254712345678"), "firstName", "firstName: is required"},
		{contactFormValues("firstName", "Jane"), "phone", "phone: at least one of phone or email is required"},
		{contactFormValues("firstName", "Jane", "email", "jane@"), "email", "email: must be a valid email address"},
		{contactFormValues("firstName", "Jane", "email", "j@example.com", "website", "ftp://x"), "website", "website: must be an absolute http or https URL"},
		{contactFormValues("firstName", "Jane", "email", "j@example.com", "lifecycle", "vip"), "lifecycle", "lifecycle: must be one of"},
		{contactFormValues("firstName", "Jane", "email", "j@example.com", "company", strings.Repeat("x", 201)), "company", "company: must be at most 200 characters"},
	} {
		r := f.post("/w/acme/contacts", tc.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%v answered %d; want 422", tc.form, r.status)
		}
		r.wantContains(t, `<p class="error" id="c-`+tc.field+`-err">`+tc.msg)
		if !regexp.MustCompile(`id="c-` + tc.field + `"[^>]*aria-describedby="[^"]*c-` + tc.field + `-err"`).MatchString(r.body) {
			t.Errorf("the %s input is not described by its error", tc.field)
		}
		if tc.form.Get("firstName") != "" {
			r.wantContains(t, `value="`+tc.form.Get("firstName")+`"`) // what was typed stays
		}
	}
	if page, err := f.svc.Workspace("acme").Contacts.List(f.ctx, nil); err != nil || page.Total != 0 {
		t.Fatalf("after refused forms: %d contacts stored (%v); want 0", page.Total, err)
	}

	r := f.post("/w/acme/contacts", contactFormValues("firstName", "Jane", "lastName", "Doe", "phone", "+254712345678",
		"tags", "vip, nairobi,", "lifecycle", "lead", "notes", "met at a fair"))
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/dashboard/w/acme/contacts/ct_") {
		t.Fatalf("create answered %d to %q:\n%s", r.status, r.location, r.body)
	}
	c, err := f.svc.Workspace("acme").Contacts.Get(f.ctx, strings.TrimPrefix(r.location, "/dashboard/w/acme/contacts/"))
	if err != nil {
		t.Fatal(err)
	}
	if c.FullName != "Jane Doe" || c.Phone != "+254712345678" || c.Lifecycle != "lead" || !cmp.Equal(c.Tags, []string{"vip", "nairobi"}) {
		t.Errorf("created contact = %+v", c)
	}
	r = f.post("/w/acme/contacts", contactFormValues("firstName", "Janet", "phone", "+254712345678"))
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("a duplicate phone answered %d; want 422", r.status)
	}
	r.wantContains(t, `id="c-phone-err">phone: another contact of the workspace already has this phone`)
}

// TestEditContact: the edit form saves through Contacts.Update; a bad
// field changes nothing; a form filled before someone else's edit is a
// conflict that overwrites nothing.
func TestEditContact(t *testing.T) {
	f := setup(t)
	c := f.contact("Jane", "Doe", "+254712345678", "jane@example.com")
	path := "/w/acme/contacts/" + c.ID
	r := f.get(path)
	if r.status != http.StatusOK {
		t.Fatalf("edit form answered %d", r.status)
	}
	r.wantContains(t, `value="Jane"`, `value="jane@example.com"`, `name="version" value="1"`)

	form := contactFormValues("version", "1", "firstName", "Jane", "lastName", "Doe", "phone", "+254712345678",
		"email", "not-an-email", "company", "Acme")
	r = f.post(path, form)
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("a bad email answered %d; want 422", r.status)
	}
	r.wantContains(t, `id="c-email-err">email: must be a valid email address`)
	if got, _ := f.svc.Workspace("acme").Contacts.Get(f.ctx, c.ID); got.Version != 1 || got.Company != "" {
		t.Errorf("a refused edit changed the contact: %+v", got)
	}

	form.Set("email", "jane@acme.example")
	r = f.post(path, form)
	if r.status != http.StatusSeeOther || r.location != "/dashboard"+path {
		t.Fatalf("save answered %d to %q:\n%s", r.status, r.location, r.body)
	}
	got, _ := f.svc.Workspace("acme").Contacts.Get(f.ctx, c.ID)
	if got.Email != "jane@acme.example" || got.Company != "Acme" || got.Version != 2 {
		t.Errorf("saved contact = %+v", got)
	}

	// Someone else edits the contact while the form (version 2) is open.
	if _, err := f.svc.Workspace("acme").Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{Company: ptr("Globex")}); err != nil {
		t.Fatal(err)
	}
	form.Set("version", "2")
	form.Set("jobTitle", "CTO")
	r = f.post(path, form)
	if r.status != http.StatusConflict {
		t.Errorf("a stale form answered %d; want 409", r.status)
	}
	r.wantContains(t, "was changed by someone else", "Globex", `value="CTO"`, `name="version" value="3"`)
	if got, _ := f.svc.Workspace("acme").Contacts.Get(f.ctx, c.ID); got.Company != "Globex" || got.JobTitle != "" {
		t.Errorf("the stale form overwrote the other edit: %+v", got)
	}

	other, err := f.svc.Workspace("other").Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: "Theirs", Phone: "+254711111111"})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.get("/w/acme/contacts/" + other.ID); r.status != http.StatusNotFound {
		t.Errorf("another workspace's contact answered %d; want 404", r.status)
	}
	if r := f.post("/w/acme/contacts/"+other.ID, contactFormValues("firstName", "Mine", "phone", "+254711111111")); r.status != http.StatusNotFound {
		t.Errorf("editing another workspace's contact answered %d; want 404", r.status)
	}
	if got, _ := f.svc.Workspace("other").Contacts.Get(f.ctx, other.ID); got.FirstName != "Theirs" {
		t.Errorf("another workspace's contact was changed: %+v", got)
	}
}

func ptr[T any](v T) *T { return &v }
