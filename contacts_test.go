package messaging_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

func jane() *messaging.ContactCreateParams {
	return &messaging.ContactCreateParams{
		FirstName: "Jane", LastName: "Doe", Phone: kenya, Email: "Jane.Doe@Example.com",
		Company: "Acme", JobTitle: "CTO", Website: "https://jane.example.com", Notes: "met at a fair",
		Tags: []string{"vip", "nairobi"}, Lifecycle: record.LifecycleLead,
	}
}

func TestContactCreateBadInputs(t *testing.T) {
	t.Parallel()
	with := func(change func(p *messaging.ContactCreateParams)) *messaging.ContactCreateParams {
		p := jane()
		change(p)
		return p
	}
	tests := []struct {
		name  string
		p     *messaging.ContactCreateParams
		field string
	}{
		{"nil params", nil, "body"},
		{"missing firstName", with(func(p *messaging.ContactCreateParams) { p.FirstName = "" }), "firstName"},
		{"blank firstName", with(func(p *messaging.ContactCreateParams) { p.FirstName = "  \t " }), "firstName"},
		{"firstName too long", with(func(p *messaging.ContactCreateParams) { p.FirstName = runes('a', record.MaxNameLen+1) }), "firstName"},
		{"lastName too long", with(func(p *messaging.ContactCreateParams) { p.LastName = runes('a', record.MaxNameLen+1) }), "lastName"},
		{"firstName invalid UTF-8", with(func(p *messaging.ContactCreateParams) { p.FirstName = "J\xffane" }), "firstName"},
		{"neither phone nor email", with(func(p *messaging.ContactCreateParams) { p.Phone, p.Email = "", "" }), "phone"},
		{"local phone", with(func(p *messaging.ContactCreateParams) { p.Phone = "0712345678" }), "phone"},
		{"phone +1", with(func(p *messaging.ContactCreateParams) { p.Phone = "+1" }), "phone"},
		{"phone invalid for country", with(func(p *messaging.ContactCreateParams) { p.Phone = "+10000000000" }), "phone"},
		{"phone without plus", with(func(p *messaging.ContactCreateParams) { p.Phone = "254712345678" }), "phone"},
		{"phone with spaces", with(func(p *messaging.ContactCreateParams) { p.Phone = "+254 712 345678" }), "phone"},
		{"email without at", with(func(p *messaging.ContactCreateParams) { p.Email = "jane.example.com" }), "email"},
		{"email without dot in domain", with(func(p *messaging.ContactCreateParams) { p.Email = "jane@localhost" }), "email"},
		{"email with display name", with(func(p *messaging.ContactCreateParams) { p.Email = "Jane <jane@example.com>" }), "email"},
		{"email with space", with(func(p *messaging.ContactCreateParams) { p.Email = "jane doe@example.com" }), "email"},
		{"email too long", with(func(p *messaging.ContactCreateParams) { p.Email = strings.Repeat("a", 250) + "@example.com" }), "email"},
		{"website without scheme", with(func(p *messaging.ContactCreateParams) { p.Website = "jane.example.com" }), "website"},
		{"website ftp", with(func(p *messaging.ContactCreateParams) { p.Website = "ftp://jane.example.com" }), "website"},
		{"website not a URL", with(func(p *messaging.ContactCreateParams) { p.Website = "not a url" }), "website"},
		{"unknown lifecycle", with(func(p *messaging.ContactCreateParams) { p.Lifecycle = "vip" }), "lifecycle"},
		{"lifecycle wrong case", with(func(p *messaging.ContactCreateParams) { p.Lifecycle = "Lead" }), "lifecycle"},
		{"company too long", with(func(p *messaging.ContactCreateParams) { p.Company = runes('c', record.MaxCompanyLen+1) }), "company"},
		{"jobTitle too long", with(func(p *messaging.ContactCreateParams) { p.JobTitle = runes('j', record.MaxCompanyLen+1) }), "jobTitle"},
		{"notes too long", with(func(p *messaging.ContactCreateParams) { p.Notes = runes('n', record.MaxNotesLen+1) }), "notes"},
		{"too many tags", with(func(p *messaging.ContactCreateParams) {
			p.Tags = nil
			for i := range record.MaxTags + 1 {
				p.Tags = append(p.Tags, fmt.Sprintf("t%d", i))
			}
		}), "tags"},
		{"empty tag", with(func(p *messaging.ContactCreateParams) { p.Tags = []string{"ok", " "} }), "tags"},
		{"tag too long", with(func(p *messaging.ContactCreateParams) { p.Tags = []string{runes('t', record.MaxTagLen+1)} }), "tags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			c, err := f.acme.Contacts.Create(f.ctx, tc.p)
			if c != nil {
				t.Errorf("Create returned %+v with an error", c)
			}
			wantError(t, err, messaging.CodeValidation, tc.field)
			if n := f.store.counts().Contacts; n != 0 {
				t.Errorf("contacts stored = %d, want 0", n)
			}
			page, err := f.acme.Contacts.List(f.ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != 0 {
				t.Errorf("List total = %d, want 0", page.Total)
			}
		})
	}
}

func TestContactCreate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	p := jane()
	p.FirstName, p.LastName = "  Jane ", " Doe  "
	p.Tags = []string{" vip", "nairobi", "vip "}
	c := f.mustContact(t, f.acme, p)
	want := &messaging.Contact{
		ID: c.ID, WorkspaceID: "acme", FirstName: "Jane", LastName: "Doe", FullName: "Jane Doe",
		Phone: kenya, Email: "Jane.Doe@Example.com", EmailKey: "jane.doe@example.com",
		Company: "Acme", JobTitle: "CTO", Website: "https://jane.example.com", Notes: "met at a fair",
		Source: record.SourceAPI, Tags: []string{"vip", "nairobi"}, Lifecycle: "lead", Version: 1,
		OptedOut:  map[string]time.Time{}, // filled from the suppression list: none
		CreatedAt: t0, UpdatedAt: t0,
	}
	if !strings.HasPrefix(c.ID, "ct_") {
		t.Errorf("ID = %q, want prefix ct_", c.ID)
	}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("Create (-want +got):\n%s", d)
	}
	got, err := f.acme.Contacts.Get(f.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Get (-want +got):\n%s", d)
	}

	t.Run("first name only, email only", func(t *testing.T) {
		c := f.mustContact(t, f.acme, &messaging.ContactCreateParams{FirstName: "Solo", Email: "solo@example.org"})
		if c.FullName != "Solo" || c.Phone != "" || c.Source != "api" || c.Tags == nil || len(c.Tags) != 0 {
			t.Errorf("got fullName %q phone %q source %q tags %#v", c.FullName, c.Phone, c.Source, c.Tags)
		}
	})
	t.Run("phone only", func(t *testing.T) {
		c := f.mustContact(t, f.acme, &messaging.ContactCreateParams{FirstName: "Phone", Phone: "+447911123456"})
		if c.Email != "" || c.Phone != "+447911123456" {
			t.Errorf("got phone %q email %q", c.Phone, c.Email)
		}
	})
	t.Run("unknown workspace", func(t *testing.T) {
		_, err := f.svc.Workspace("ghost").Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: "G", Email: "g@example.com"})
		wantError(t, err, messaging.CodeNotFound, "")
	})
}

func TestContactDedup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		p     *messaging.ContactCreateParams
		field string
	}{
		{"same phone", &messaging.ContactCreateParams{FirstName: "Other", Phone: kenya}, "phone"},
		{"same email", &messaging.ContactCreateParams{FirstName: "Other", Email: "Jane.Doe@Example.com"}, "email"},
		{"same email other case", &messaging.ContactCreateParams{FirstName: "Other", Email: "JANE.DOE@example.COM"}, "email"},
		{"same phone, new email", &messaging.ContactCreateParams{FirstName: "Other", Phone: kenya, Email: "new@example.com"}, "phone"},
		{"new phone, same email", &messaging.ContactCreateParams{FirstName: "Other", Phone: kenya2, Email: "jane.doe@example.com"}, "email"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			f.mustContact(t, f.acme, jane())
			_, err := f.acme.Contacts.Create(f.ctx, tc.p)
			wantError(t, err, messaging.CodeConflict, tc.field)
			if n := f.store.counts().Contacts; n != 1 {
				t.Errorf("contacts stored = %d, want 1", n)
			}
			// Deduplication is per workspace.
			f.mustContact(t, f.other, tc.p)
		})
	}
}

func TestContactCreateConcurrentSamePhone(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = f.acme.Contacts.Create(f.ctx, &messaging.ContactCreateParams{
				FirstName: fmt.Sprintf("Racer %d", i), Phone: kenya, Email: fmt.Sprintf("racer%d@example.com", i)})
		})
	}
	close(start)
	wg.Wait()
	ok, conflicts := 0, 0
	for i, err := range errs {
		switch messaging.ErrorCode(err) {
		case messaging.CodeConflict:
			conflicts++
		default:
			if err != nil {
				t.Errorf("create %d: %v", i, err)
				continue
			}
			ok++
		}
	}
	if ok != 1 || conflicts != n-1 {
		t.Errorf("got %d successes and %d conflicts, want 1 and %d", ok, conflicts, n-1)
	}
	page, err := f.acme.Contacts.List(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 1 {
		t.Errorf("List total = %d, want 1", page.Total)
	}
}

func TestContactUpdate(t *testing.T) {
	t.Parallel()
	later := t0.Add(time.Hour)
	tests := []struct {
		name   string
		p      *messaging.ContactUpdateParams
		change func(c *messaging.Contact)
	}{
		{"company only", &messaging.ContactUpdateParams{Company: ptr("Globex")}, func(c *messaging.Contact) { c.Company = "Globex" }},
		{"clear lastName", &messaging.ContactUpdateParams{LastName: ptr("")}, func(c *messaging.Contact) { c.LastName, c.FullName = "", "Jane" }},
		{"change names", &messaging.ContactUpdateParams{FirstName: ptr(" Janet "), LastName: ptr("Smith")}, func(c *messaging.Contact) {
			c.FirstName, c.LastName, c.FullName = "Janet", "Smith", "Janet Smith"
		}},
		{"clear phone keeps email", &messaging.ContactUpdateParams{Phone: ptr("")}, func(c *messaging.Contact) { c.Phone = "" }},
		{"clear email keeps phone", &messaging.ContactUpdateParams{Email: ptr("")}, func(c *messaging.Contact) { c.Email, c.EmailKey = "", "" }},
		{"new email", &messaging.ContactUpdateParams{Email: ptr("J@Example.org")}, func(c *messaging.Contact) { c.Email, c.EmailKey = "J@Example.org", "j@example.org" }},
		{"new phone", &messaging.ContactUpdateParams{Phone: ptr(kenya2)}, func(c *messaging.Contact) { c.Phone = kenya2 }},
		{"same email other case", &messaging.ContactUpdateParams{Email: ptr("JANE.DOE@EXAMPLE.COM")}, func(c *messaging.Contact) {
			c.Email = "JANE.DOE@EXAMPLE.COM"
		}},
		{"set tags", &messaging.ContactUpdateParams{Tags: &[]string{"customer", "mombasa", "customer"}}, func(c *messaging.Contact) {
			c.Tags = []string{"customer", "mombasa"}
		}},
		{"clear tags", &messaging.ContactUpdateParams{Tags: &[]string{}}, func(c *messaging.Contact) { c.Tags = []string{} }},
		{"change lifecycle", &messaging.ContactUpdateParams{Lifecycle: ptr("customer")}, func(c *messaging.Contact) { c.Lifecycle = "customer" }},
		{"clear lifecycle", &messaging.ContactUpdateParams{Lifecycle: ptr("")}, func(c *messaging.Contact) { c.Lifecycle = "" }},
		{"clear website and notes", &messaging.ContactUpdateParams{Website: ptr(""), Notes: ptr("")}, func(c *messaging.Contact) { c.Website, c.Notes = "", "" }},
		{"jobTitle", &messaging.ContactUpdateParams{JobTitle: ptr("CEO")}, func(c *messaging.Contact) { c.JobTitle = "CEO" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			orig := f.mustContact(t, f.acme, jane())
			f.clock.Advance(time.Hour)
			got, err := f.acme.Contacts.Update(f.ctx, orig.ID, tc.p)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			want := *orig
			want.Tags = append([]string{}, orig.Tags...)
			tc.change(&want)
			want.UpdatedAt, want.Version = later, orig.Version+1
			if d := cmp.Diff(&want, got); d != "" {
				t.Errorf("Update (-want +got):\n%s", d)
			}
			stored, err := f.acme.Contacts.Get(f.ctx, orig.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(&want, stored); d != "" {
				t.Errorf("Get after Update (-want +got):\n%s", d)
			}
		})
	}
}

func TestContactUpdateUpdatedAtMovesWithStoppedClock(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.mustContact(t, f.acme, jane())
	u1, err := f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{Company: ptr("One")})
	if err != nil {
		t.Fatal(err)
	}
	u2, err := f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{Company: ptr("Two")})
	if err != nil {
		t.Fatal(err)
	}
	if !u1.UpdatedAt.After(c.UpdatedAt) || !u2.UpdatedAt.After(u1.UpdatedAt) {
		t.Errorf("updatedAt %v -> %v -> %v, want strictly increasing", c.UpdatedAt, u1.UpdatedAt, u2.UpdatedAt)
	}
	if !u2.CreatedAt.Equal(t0) {
		t.Errorf("createdAt moved to %v", u2.CreatedAt)
	}
}

func TestContactUpdateConcurrentFields(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.mustContact(t, f.acme, jane())
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() {
		_, errs[0] = f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{Company: ptr("Globex")})
	})
	wg.Go(func() {
		_, errs[1] = f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{JobTitle: ptr("CEO")})
	})
	wg.Go(func() {
		_, errs[2] = f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{Lifecycle: ptr("customer")})
	})
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	got, err := f.acme.Contacts.Get(f.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Company != "Globex" || got.JobTitle != "CEO" || got.Lifecycle != "customer" || got.Version != 4 {
		t.Errorf("after concurrent updates: company %q jobTitle %q lifecycle %q version %d", got.Company, got.JobTitle, got.Lifecycle, got.Version)
	}
}

func TestContactUpdateBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// target is the contact updated: "jane" (phone and email, the
		// default), "emailOnly", "others" (a contact of workspace other) or
		// an id.
		target string
		p      *messaging.ContactUpdateParams
		code   messaging.Code
		field  string
	}{
		{name: "nil params", p: nil, code: messaging.CodeValidation, field: "body"},
		{name: "empty update", p: &messaging.ContactUpdateParams{}, code: messaging.CodeValidation, field: "body"},
		{name: "clear firstName", p: &messaging.ContactUpdateParams{FirstName: ptr("")}, code: messaging.CodeValidation, field: "firstName"},
		{name: "blank firstName", p: &messaging.ContactUpdateParams{FirstName: ptr("   ")}, code: messaging.CodeValidation, field: "firstName"},
		{name: "clear phone and email", p: &messaging.ContactUpdateParams{Phone: ptr(""), Email: ptr("")}, code: messaging.CodeValidation, field: "phone"},
		{name: "clear the only email", target: "emailOnly", p: &messaging.ContactUpdateParams{Email: ptr("")}, code: messaging.CodeValidation, field: "phone"},
		{name: "bad phone", p: &messaging.ContactUpdateParams{Phone: ptr("0712345678")}, code: messaging.CodeValidation, field: "phone"},
		{name: "bad email", p: &messaging.ContactUpdateParams{Email: ptr("jane@")}, code: messaging.CodeValidation, field: "email"},
		{name: "bad website", p: &messaging.ContactUpdateParams{Website: ptr("jane.example.com")}, code: messaging.CodeValidation, field: "website"},
		{name: "bad lifecycle", p: &messaging.ContactUpdateParams{Lifecycle: ptr("vip")}, code: messaging.CodeValidation, field: "lifecycle"},
		{name: "empty tag", p: &messaging.ContactUpdateParams{Tags: &[]string{""}}, code: messaging.CodeValidation, field: "tags"},
		{name: "lastName too long", p: &messaging.ContactUpdateParams{LastName: ptr(runes('l', record.MaxNameLen+1))}, code: messaging.CodeValidation, field: "lastName"},
		{name: "phone of another contact", p: &messaging.ContactUpdateParams{Phone: ptr(kenya2)}, code: messaging.CodeConflict, field: "phone"},
		{name: "email of another contact other case", p: &messaging.ContactUpdateParams{Email: ptr("JOHN@example.com")}, code: messaging.CodeConflict, field: "email"},
		{name: "unknown id", target: "ct_missing", p: &messaging.ContactUpdateParams{Company: ptr("X")}, code: messaging.CodeNotFound},
		{name: "contact of another workspace", target: "others", p: &messaging.ContactUpdateParams{Company: ptr("X")}, code: messaging.CodeNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			ids := map[string]string{
				"jane":      f.mustContact(t, f.acme, jane()).ID,
				"emailOnly": f.mustContact(t, f.acme, &messaging.ContactCreateParams{FirstName: "Eve", Email: "eve@example.com"}).ID,
				"others":    f.mustContact(t, f.other, &messaging.ContactCreateParams{FirstName: "Olu", Email: "olu@example.com"}).ID,
			}
			f.mustContact(t, f.acme, &messaging.ContactCreateParams{FirstName: "John", Phone: kenya2, Email: "john@example.com"})
			target := tc.target
			if target == "" {
				target = "jane"
			}
			id, ok := ids[target]
			if !ok {
				id = target
			}
			ws := f.acme
			if target == "others" {
				ws = f.other
			}
			before, _ := ws.Contacts.Get(f.ctx, id)
			f.clock.Advance(time.Hour)
			got, err := f.acme.Contacts.Update(f.ctx, id, tc.p)
			if got != nil {
				t.Errorf("Update returned %+v with an error", got)
			}
			wantError(t, err, tc.code, tc.field)
			if before != nil {
				after, err := ws.Contacts.Get(f.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(before, after); d != "" {
					t.Errorf("contact changed by a refused update (-before +after):\n%s", d)
				}
			}
		})
	}
}

func TestContactListBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		q     *messaging.ContactQuery
		field string
	}{
		{"page -1", &messaging.ContactQuery{Page: -1}, "page"},
		{"page too high", &messaging.ContactQuery{Page: record.MaxPage + 1}, "page"},
		{"limit 101", &messaging.ContactQuery{Limit: 101}, "limit"},
		{"limit -1", &messaging.ContactQuery{Limit: -1}, "limit"},
		{"search too long", &messaging.ContactQuery{Search: runes('s', record.MaxSearchLen+1)}, "search"},
		{"search invalid UTF-8", &messaging.ContactQuery{Search: "ja\xff"}, "search"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			page, err := f.acme.Contacts.List(f.ctx, tc.q)
			if page != nil {
				t.Errorf("List returned %+v with an error", page)
			}
			wantError(t, err, messaging.CodeValidation, tc.field)
		})
	}
}

func TestContactListPagination(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for i := 1; i <= 7; i++ {
		f.mustContact(t, f.acme, &messaging.ContactCreateParams{FirstName: fmt.Sprintf("C%d", i), Email: fmt.Sprintf("c%d@example.com", i)})
		f.clock.Advance(time.Minute)
	}
	f.mustContact(t, f.other, &messaging.ContactCreateParams{FirstName: "Elsewhere", Email: "e@example.com"})

	type view struct {
		Names                     []string
		Total, Page, Limit, Pages int
	}
	tests := []struct {
		name string
		q    *messaging.ContactQuery
		want view
	}{
		{"defaults", nil, view{[]string{"C7", "C6", "C5", "C4", "C3", "C2", "C1"}, 7, 1, 25, 1}},
		{"page 0 means 1, limit 0 means 25", &messaging.ContactQuery{}, view{[]string{"C7", "C6", "C5", "C4", "C3", "C2", "C1"}, 7, 1, 25, 1}},
		{"page 1 of 3", &messaging.ContactQuery{Page: 1, Limit: 3}, view{[]string{"C7", "C6", "C5"}, 7, 1, 3, 3}},
		{"page 2 of 3", &messaging.ContactQuery{Page: 2, Limit: 3}, view{[]string{"C4", "C3", "C2"}, 7, 2, 3, 3}},
		{"page 3 of 3", &messaging.ContactQuery{Page: 3, Limit: 3}, view{[]string{"C1"}, 7, 3, 3, 3}},
		{"past the end", &messaging.ContactQuery{Page: 4, Limit: 3}, view{[]string{}, 7, 4, 3, 3}},
		{"limit 100", &messaging.ContactQuery{Limit: 100}, view{[]string{"C7", "C6", "C5", "C4", "C3", "C2", "C1"}, 7, 1, 100, 1}},
		{"limit 7", &messaging.ContactQuery{Limit: 7}, view{[]string{"C7", "C6", "C5", "C4", "C3", "C2", "C1"}, 7, 1, 7, 1}},
		{"limit 1 page 7", &messaging.ContactQuery{Limit: 1, Page: 7}, view{[]string{"C1"}, 7, 7, 1, 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := f.acme.Contacts.List(f.ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if page.Items == nil {
				t.Error("Items is nil, want a non-nil slice")
			}
			got := view{Names: []string{}, Total: page.Total, Page: page.Page, Limit: page.Limit, Pages: page.TotalPages}
			for _, c := range page.Items {
				got.Names = append(got.Names, c.FirstName)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("List (-want +got):\n%s", d)
			}
		})
	}

	empty, err := f.svc.Workspace("ghost").Contacts.List(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Total != 0 || empty.TotalPages != 0 || len(empty.Items) != 0 {
		t.Errorf("empty workspace list = %+v", empty)
	}
}

func TestContactSearch(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustContact(t, f.acme, jane()) // Jane Doe, +254712345678, Jane.Doe@Example.com
	f.clock.Advance(time.Minute)
	f.mustContact(t, f.acme, &messaging.ContactCreateParams{FirstName: "John", LastName: "Janeway", Phone: kenya2, Email: "jj@corp.example"})
	f.clock.Advance(time.Minute)
	f.mustContact(t, f.acme, &messaging.ContactCreateParams{FirstName: "Zawadi", Email: "zawadi@example.co.ke", Phone: "+447911123456"})
	f.mustContact(t, f.other, &messaging.ContactCreateParams{FirstName: "Jane", Email: "jane@other.example"})

	tests := []struct {
		search string
		want   []string
	}{
		{"jan", []string{"John", "Jane"}},
		{"JANE", []string{"John", "Jane"}},
		{"  jane   doe ", []string{"Jane"}},
		{"doe", []string{"Jane"}},
		{"john jan", []string{"John"}},
		{"zaw", []string{"Zawadi"}},
		{"jane.doe@ex", []string{"Jane"}},
		{"JANE.DOE@EXAMPLE.COM", []string{"Jane"}},
		{"jj@", []string{"John"}},
		{"+2547", []string{"John", "Jane"}},
		{"2547", []string{"John", "Jane"}},
		{"+25471", []string{"Jane"}},
		{"254 722", []string{"John"}},
		{"+44 7911", []string{"Zawadi"}},
		{"+254 (712) 345-6", []string{"Jane"}},
		{"254.722", []string{"John"}},
		{"0712", []string{}},
		{"712345678", []string{}},
		{"example", []string{}},
		{"nobody", []string{}},
		{"", []string{"Zawadi", "John", "Jane"}},
	}
	for _, tc := range tests {
		t.Run(tc.search, func(t *testing.T) {
			page, err := f.acme.Contacts.List(f.ctx, &messaging.ContactQuery{Search: tc.search})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, c := range page.Items {
				got = append(got, c.FirstName)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("search %q (-want +got):\n%s", tc.search, d)
			}
			if page.Total != len(tc.want) {
				t.Errorf("total = %d, want %d", page.Total, len(tc.want))
			}
		})
	}
}

// TestContactUpdateIfVersion: an update naming the version it read is
// refused with a conflict once another update moved the contact on, and
// changes nothing; naming the current version applies it.
func TestContactUpdateIfVersion(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.mustContact(t, f.acme, jane())
	if _, err := f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{Company: ptr("One")}); err != nil {
		t.Fatal(err)
	}
	_, err := f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{JobTitle: ptr("Boss"), IfVersion: c.Version})
	if messaging.ErrorCode(err) != messaging.CodeConflict {
		t.Fatalf("stale IfVersion: err = %v; want a conflict", err)
	}
	got, err := f.acme.Contacts.Get(f.ctx, c.ID)
	if err != nil || got.JobTitle != c.JobTitle {
		t.Fatalf("after the refused update: %+v, %v; want the job title unchanged", got, err)
	}
	u, err := f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{JobTitle: ptr("CEO"), IfVersion: got.Version})
	if err != nil || u.JobTitle != "CEO" || u.Company != "One" {
		t.Fatalf("current IfVersion: %+v, %v; want CEO at One", u, err)
	}
	if _, err := f.acme.Contacts.Update(f.ctx, c.ID, &messaging.ContactUpdateParams{IfVersion: u.Version}); messaging.ErrorCode(err) != messaging.CodeValidation {
		t.Errorf("an update setting only IfVersion: err = %v; want a validation error", err)
	}
}
