package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

//go:embed web/templates/*.html
//go:embed web/partials/*.html
var templateFS embed.FS

//go:embed web/static
var staticFS embed.FS

// staticFiles serves the stylesheet, the script and the icons.
func staticFiles() http.Handler {
	sub, err := fs.Sub(staticFS, "web/static")
	if err != nil {
		panic(err) // the embedded tree always has web/static
	}
	fsrv := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// page is what every template gets.
type page struct {
	Title string
	// Nav names the active navigation item.
	Nav    string
	Prefix string
	Viewer *Viewer
	// WS is the workspace of the page, nil on pages outside one.
	WS *messaging.WorkspaceInfo
	// Workspaces fill the workspace switcher.
	Workspaces []*messaging.WorkspaceInfo
	// HasSMS is set when the SMS pages are mounted.
	HasSMS bool
	// SignOut is set when the dashboard's own sign-in is used.
	SignOut bool
	// Notice is a one-time message from the previous form.
	Notice string
	// Problem is a message about the whole form or page.
	Problem string
	// Errors are the validation messages of a form, by field.
	Errors map[string]string
	// Form holds the values the viewer sent, to fill a form again.
	Form url.Values
	// Secret is a value shown once (a new API key or signing secret).
	Secret string
	Data   any
}

// fill sets the parts of p every page of req has.
func (p *page) fill(h *Handler, req *request) {
	p.Prefix, p.HasSMS, p.SignOut = h.prefix, h.sms != nil, h.signIn != nil
	if req == nil {
		return
	}
	p.Viewer, p.WS = req.viewer, req.ws
	if req.viewer != nil {
		if list, err := h.visibleWorkspaces(req.ctx, req.viewer); err == nil {
			p.Workspaces = list
		}
	}
}

// showError shows msg next to the form's field, or above the form when
// field is empty.
func (p *page) showError(field, msg string) {
	if field == "" {
		p.Problem = msg
		return
	}
	if p.Errors == nil {
		p.Errors = map[string]string{}
	}
	p.Errors[field] = msg
}

// fieldError records err on p when it is a validation error of the
// library naming a field (shown next to the field) or a conflict (shown
// above the form), and reports whether it did.
func (p *page) fieldError(err error) bool {
	var e *messaging.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case messaging.CodeValidation:
		p.showError(e.Field, e.Message)
		return true
	case messaging.CodeConflict, messaging.CodeForbidden, messaging.CodeNotFound:
		p.Problem = e.Message
		return true
	}
	return false
}

// pages holds the parsed templates: each page's template is parsed with
// the layout.
type pages struct {
	byName map[string]*template.Template
}

func parsePages() (*pages, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "web/templates/layout.html", "web/partials/*.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: parsing the layout: %w", err)
	}
	names, err := fs.Glob(templateFS, "web/templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, fmt.Errorf("dashboard: parsing %s: %w", n, err)
		}
		p.byName[base] = t
	}
	return p, nil
}

// renderData renders page name with status, p carrying data; it returns
// nil, so that a page handler ends with it.
func (h *Handler) renderData(w http.ResponseWriter, r *http.Request, status int, name string, p *page, data any) error {
	p.Data = data
	h.render(w, r, status, name, p)
	return nil
}

// render writes the page named name with status.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	if p.Prefix == "" {
		p.Prefix, p.HasSMS, p.SignOut = h.prefix, h.sms != nil, h.signIn != nil
	}
	if r.Method == http.MethodGet && p.Notice == "" {
		p.Notice = h.takeFlash(w, r)
	}
	t, ok := h.pages.byName[name]
	if !ok {
		h.log.Error("dashboard: no such page template", "name", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		h.log.ErrorContext(r.Context(), "dashboard: rendering a page failed", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A page may hold a secret shown once or private data: never cache.
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderStatus writes a page holding only msg.
func (h *Handler) renderStatus(w http.ResponseWriter, r *http.Request, status int, p *page, msg string) {
	p.Problem = msg
	h.render(w, r, status, "message", p)
}

// flashCookie carries a one-time notice across the redirect after a form.
const flashCookie = "dashboard_notice"

// setCookie sets c with the attributes of every dashboard cookie: scoped
// to the prefix, HttpOnly, SameSite=Lax, and Secure when
// Options.SecureCookies is set or r came over TLS (r may be nil: the
// option alone decides).
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	c.Path, c.HttpOnly, c.SameSite = h.prefix, true, http.SameSiteLaxMode
	c.Secure = h.secureCookies || (r != nil && r.TLS != nil)
	http.SetCookie(w, c)
}

// flash sets the notice shown by the next page.
func (h *Handler) flash(w http.ResponseWriter, msg string) {
	h.setCookie(w, nil, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), MaxAge: 60})
}

// takeFlash returns and clears the notice of the previous form.
func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	h.setCookie(w, r, &http.Cookie{Name: flashCookie, MaxAge: -1})
	msg, err := url.QueryUnescape(c.Value)
	if err != nil || len(msg) > 300 {
		return ""
	}
	return msg
}

// funcs are the template functions.
var funcs = template.FuncMap{
	// when formats a time for people: UTC, to the second.
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	// iso formats a time for <time datetime> and for inputs.
	"iso": func(t time.Time) string { return record.FormatTime(t) },
	// whenPtr is when for an optional time.
	"whenPtr": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"join": strings.Join,
	// dict makes the data of a partial from its keys and values.
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, errors.New("dict: an odd number of arguments")
		}
		m := make(map[string]any, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			k, ok := kv[i].(string)
			if !ok {
				return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
			}
			m[k] = kv[i+1]
		}
		return m, nil
	},
	// value is the form's value of field, for filling a form again.
	"value": func(f url.Values, field string) string { return f.Get(field) },
	// checked reports whether the form's values of field hold v.
	"checked": func(f url.Values, field, v string) bool {
		for _, x := range f[field] {
			if x == v {
				return true
			}
		}
		return false
	},
	"contains": func(list []string, v string) bool {
		for _, x := range list {
			if x == v {
				return true
			}
		}
		return false
	},
	"add": func(a, b int) int { return a + b },
	// mapURL is the OpenStreetMap page of a location, with a marker.
	"mapURL": mapURL,
	// summary is a line of a message's content, for the log and for the
	// message another one quotes or reacts to.
	"summary": summary,
	// contactName is the name a contact card shows.
	"contactName": contactName,
	// upper is strings.ToUpper, for the label of a media placeholder.
	"upper": strings.ToUpper,
}

// mapURL is the OpenStreetMap page of a location, with a marker at it.
func mapURL(lat, lon float64) string {
	la, lo := strconv.FormatFloat(lat, 'f', -1, 64), strconv.FormatFloat(lon, 'f', -1, 64)
	return "https://www.openstreetmap.org/?mlat=" + la + "&mlon=" + lo + "#map=16/" + la + "/" + lo
}

// contactName is the name a contact card shows: its formatted name, else
// its first and last names.
func contactName(c record.SharedContact) string {
	if c.FormattedName != "" {
		return c.FormattedName
	}
	return strings.TrimSpace(c.FirstName + " " + c.LastName)
}

// summary is one line of what message m carries: its text, caption or
// template, else what its type shows (the interactive body, the
// location's name, the contact's name, the reaction's emoji), else its
// type.
func summary(m *messaging.Message) string {
	if m == nil {
		return ""
	}
	switch {
	case m.TemplateName != "":
		return "template " + m.TemplateName
	case m.Text != "":
		return clipText(m.Text, 80)
	case m.Caption != "":
		return clipText(m.Caption, 80)
	}
	if o := m.Outbound; o != nil {
		switch {
		case o.Interactive != nil:
			return clipText(o.Interactive.Body, 80)
		case o.Location != nil && o.Location.Name != "":
			return "location: " + clipText(o.Location.Name, 60)
		case o.Location != nil:
			return "location"
		case len(o.Contacts) > 0:
			return "contact card: " + clipText(contactName(o.Contacts[0]), 60)
		case o.Reaction != nil && o.Reaction.Emoji != "":
			return "reaction " + o.Reaction.Emoji
		case o.Reaction != nil:
			return "reaction removed"
		}
	}
	if c := m.Content; c != nil {
		switch {
		case c.Location != nil && c.Location.Name != "":
			return "location: " + clipText(c.Location.Name, 60)
		case c.Reply != nil:
			return clipText(c.Reply.Title, 80)
		case c.Reaction != nil && c.Reaction.Emoji != "":
			return "reaction " + c.Reaction.Emoji
		}
	}
	return m.Type
}

// postedTo parses the form of a POST to the record the path's {id} names
// and reads that record with get.
func postedTo[T any](r *http.Request, req *request, get func(context.Context, string) (T, error)) (T, error) {
	if err := r.ParseForm(); err != nil {
		var zero T
		return zero, err
	}
	return get(req.ctx, r.PathValue("id"))
}

// showByID renders with render (a fresh page, 200) the record that get
// finds by the path's id; get's error (not found) is returned as it is.
func showByID[T any](w http.ResponseWriter, r *http.Request, req *request, get func(context.Context, string) (T, error), render func(http.ResponseWriter, *http.Request, *request, *page, T, int) error) error {
	v, err := get(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	return render(w, r, req, &page{}, v, http.StatusOK)
}
