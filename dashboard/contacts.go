package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// contactsPageSize is the number of contacts on a page of the list.
const contactsPageSize = 25

// contactsData is the contact list page.
type contactsData struct {
	Page *messaging.ContactPage
	// Prev and Next are the URLs of the neighbouring pages with the same
	// search, empty when there is none.
	Prev, Next string
}

// contacts lists the workspace's contacts, searched the way GET
// /v1/contacts searches (Contacts.List with Search).
func (h *Handler) contacts(w http.ResponseWriter, r *http.Request, req *request) error {
	q := r.URL.Query()
	form := url.Values{}
	if s := q.Get("search"); s != "" {
		form.Set("search", s)
	}
	p := &page{Title: "Contacts", Nav: "contacts", Form: form}
	p.fill(h, req)
	cq := &messaging.ContactQuery{Search: q.Get("search"), Limit: contactsPageSize}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			n = -1 // the library names the field and its range
		}
		cq.Page = n
	}
	list, err := req.svc.Contacts.List(req.ctx, cq)
	if err != nil {
		if !p.fieldError(err) {
			return err
		}
		h.render(w, r, http.StatusBadRequest, "contacts", p)
		return nil
	}
	d := &contactsData{Page: list}
	base := h.prefix + "w/" + url.PathEscape(req.ws.ID) + "/contacts"
	at := func(n int) string {
		v := cloneValues(form)
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return base
		}
		return base + "?" + v.Encode()
	}
	if list.Page > 1 {
		d.Prev = at(min(list.Page-1, max(list.TotalPages, 1)))
	}
	if list.Page < list.TotalPages {
		d.Next = at(list.Page + 1)
	}
	return h.renderData(w, r, http.StatusOK, "contacts", p, d)
}

// contactFormData is the contact form page: a new contact, or the one
// being edited.
type contactFormData struct {
	// Contact is the contact being edited; nil on the creation form.
	Contact    *messaging.Contact
	Lifecycles []string
}

// contactFields are the form fields, named like the library's fields.
var contactFields = []string{"firstName", "lastName", "phone", "email", "company", "jobTitle", "website", "notes", "tags", "lifecycle"}

// contactForm fills a form's values from c.
func contactForm(c *messaging.Contact) url.Values {
	return url.Values{
		"firstName": {c.FirstName}, "lastName": {c.LastName}, "phone": {c.Phone}, "email": {c.Email},
		"company": {c.Company}, "jobTitle": {c.JobTitle}, "website": {c.Website}, "notes": {c.Notes},
		"tags": {strings.Join(c.Tags, ", ")}, "lifecycle": {c.Lifecycle},
		"version": {strconv.FormatInt(c.Version, 10)},
	}
}

// formTags splits the tags field: tags separated by commas; blank pieces
// (a trailing comma) are dropped, the rest goes to the library as typed.
func formTags(s string) []string {
	tags := []string{}
	for _, t := range strings.Split(s, ",") {
		if strings.TrimSpace(t) != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

func (h *Handler) renderContactForm(w http.ResponseWriter, r *http.Request, req *request, p *page, c *messaging.Contact, status int) {
	p.Nav = "contacts"
	p.Data = &contactFormData{Contact: c, Lifecycles: record.Lifecycles()}
	p.fill(h, req)
	h.render(w, r, status, "contactform", p)
}

// contactError records a library error of a contact form on p: a
// validation error or a duplicate phone or email next to its field, any
// other conflict above the form. It reports whether it did.
func contactError(p *page, err error) bool {
	var e *messaging.Error
	if errors.As(err, &e) && e.Code == messaging.CodeConflict && e.Field != "" {
		p.Errors = map[string]string{e.Field: e.Message}
		return true
	}
	return p.fieldError(err)
}

// newContact is the empty creation form.
func (h *Handler) newContact(w http.ResponseWriter, r *http.Request, req *request) error {
	h.renderContactForm(w, r, req, &page{Title: "New contact", Form: url.Values{}}, nil, http.StatusOK)
	return nil
}

// createContact creates a contact (Contacts.Create, like POST /v1/contacts).
func (h *Handler) createContact(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	f := r.PostForm
	var tags []string
	if t := formTags(f.Get("tags")); len(t) > 0 {
		tags = t
	}
	c, err := req.svc.Contacts.Create(req.ctx, &messaging.ContactCreateParams{
		FirstName: f.Get("firstName"), LastName: f.Get("lastName"), Phone: f.Get("phone"), Email: f.Get("email"),
		Company: f.Get("company"), JobTitle: f.Get("jobTitle"), Website: f.Get("website"), Notes: f.Get("notes"),
		Tags: tags, Lifecycle: f.Get("lifecycle"),
	})
	if err != nil {
		p := &page{Title: "New contact", Form: f}
		if !contactError(p, err) {
			return err
		}
		h.renderContactForm(w, r, req, p, nil, http.StatusUnprocessableEntity)
		return nil
	}
	h.flash(w, "Contact "+c.FullName+" created.")
	http.Redirect(w, r, h.prefix+"w/"+url.PathEscape(req.ws.ID)+"/contacts/"+url.PathEscape(c.ID), http.StatusSeeOther)
	return nil
}

// contact is the edit form of a contact.
func (h *Handler) contact(w http.ResponseWriter, r *http.Request, req *request) error {
	c, err := req.svc.Contacts.Get(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	h.renderContactForm(w, r, req, &page{Title: c.FullName, Form: contactForm(c)}, c, http.StatusOK)
	return nil
}

// updateContact saves the edit form with Contacts.Update (like PATCH
// /v1/contacts/{id}), naming the version the form was filled from, so that
// an edit made meanwhile by someone else is reported, not overwritten.
func (h *Handler) updateContact(w http.ResponseWriter, r *http.Request, req *request) error {
	cur, err := postedTo(r, req, req.svc.Contacts.Get)
	if err != nil {
		return err
	}
	f := r.PostForm
	str := func(k string) *string { v := f.Get(k); return &v }
	tags := formTags(f.Get("tags"))
	params := &messaging.ContactUpdateParams{
		FirstName: str("firstName"), LastName: str("lastName"), Phone: str("phone"), Email: str("email"),
		Company: str("company"), JobTitle: str("jobTitle"), Website: str("website"), Notes: str("notes"),
		Tags: &tags, Lifecycle: str("lifecycle"),
	}
	if v := f.Get("version"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			n = -1 // the library names the field
		}
		params.IfVersion = n
	}
	c, err := req.svc.Contacts.Update(req.ctx, cur.ID, params)
	if err != nil {
		p := &page{Title: cur.FullName, Form: f}
		if !contactError(p, err) {
			return err
		}
		status := http.StatusUnprocessableEntity
		if messaging.ErrorCode(err) == messaging.CodeConflict && len(p.Errors) == 0 {
			status = http.StatusConflict
			// The form keeps what the viewer typed; the version moves to
			// the current one, so that saving again applies it over the
			// other edit, which the page shows.
			if latest, gerr := req.svc.Contacts.Get(req.ctx, cur.ID); gerr == nil {
				cur = latest
			}
			f.Set("version", strconv.FormatInt(cur.Version, 10))
		}
		h.renderContactForm(w, r, req, p, cur, status)
		return nil
	}
	h.flash(w, "Contact "+c.FullName+" saved.")
	http.Redirect(w, r, h.prefix+"w/"+url.PathEscape(req.ws.ID)+"/contacts/"+url.PathEscape(c.ID), http.StatusSeeOther)
	return nil
}
