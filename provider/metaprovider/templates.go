package metaprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

var (
	_ messaging.TemplateManager    = (*Provider)(nil)
	_ messaging.TemplateLister     = (*Provider)(nil)
	_ messaging.ConnectionVerifier = (*Provider)(nil)
)

// Examples submitted with a template, which Meta requires for every
// variable and media header (the reviewers read them), when the
// template's components have no Examples of their own.
const (
	// ExampleHeaderText is the example of a TEXT header's {{1}}.
	ExampleHeaderText = "example header"
	// ExampleURLSuffix replaces the {{1}} of a URL button in its example.
	ExampleURLSuffix = "example-suffix"
	// ExampleMediaURL is the start of the placeholder submitted as the
	// header_handle example of an IMAGE, VIDEO or DOCUMENT header that
	// has no sample ("https://example.com/sample.jpg", ".mp4", ".pdf").
	// A header with a sample (record.TemplateComponent.ExampleHandle, the
	// handle UploadTemplateSample returned) is submitted with that handle,
	// as Meta expects; Meta may refuse the placeholder, and a media
	// template without a sample may have to be created in WhatsApp Manager
	// (the sync then brings it in).
	ExampleMediaURL = "https://example.com/sample"
)

// MaxTemplatePages bounds the pages ListTemplates reads (of 100 templates
// each), so that a Graph answer that never ends cannot hang it.
const MaxTemplatePages = 1000

// templateFields are the fields ListTemplates asks for.
const templateFields = "id,name,language,status,category,components,quality_score,rejected_reason"

// Meta's template payloads (message_templates).
type (
	metaTemplate struct {
		ID             string          `json:"id,omitempty"`
		Name           string          `json:"name"`
		Language       string          `json:"language"`
		Category       string          `json:"category"`
		Status         string          `json:"status,omitempty"`
		Components     []metaComponent `json:"components"`
		QualityScore   *metaQuality    `json:"quality_score,omitempty"`
		RejectedReason string          `json:"rejected_reason,omitempty"`
	}
	metaQuality struct {
		Score string `json:"score"`
	}
	metaComponent struct {
		Type    string       `json:"type"`
		Format  string       `json:"format,omitempty"`
		Text    string       `json:"text,omitempty"`
		Example *metaExample `json:"example,omitempty"`
		Buttons []metaButton `json:"buttons,omitempty"`
	}
	metaExample struct {
		HeaderText   []string   `json:"header_text,omitempty"`
		HeaderHandle []string   `json:"header_handle,omitempty"`
		BodyText     [][]string `json:"body_text,omitempty"`
	}
	metaButton struct {
		Type        string `json:"type"`
		Text        string `json:"text,omitempty"`
		URL         string `json:"url,omitempty"`
		PhoneNumber string `json:"phone_number,omitempty"`
		// Example is a []string for a URL button and a string for a
		// COPY_CODE button (Meta may list it as a one-string array).
		Example json.RawMessage `json:"example,omitempty"`
	}
	metaPage struct {
		Data   []metaTemplate `json:"data"`
		Paging struct {
			Cursors struct {
				After string `json:"after"`
			} `json:"cursors"`
			Next string `json:"next"`
		} `json:"paging"`
	}
)

// metaComponents converts template components to Meta's shape, with the
// examples Meta requires.
func metaComponents(cs []messaging.TemplateComponent) []metaComponent {
	out := make([]metaComponent, 0, len(cs))
	for _, c := range cs {
		mc := metaComponent{Type: c.Type, Format: c.Format, Text: c.Text}
		switch c.Type {
		case "HEADER":
			switch c.Format {
			case "IMAGE", "VIDEO", "DOCUMENT":
				handle := c.ExampleHandle
				if handle == "" {
					handle = ExampleMediaURL + map[string]string{"IMAGE": ".jpg", "VIDEO": ".mp4", "DOCUMENT": ".pdf"}[c.Format]
				}
				mc.Example = &metaExample{HeaderHandle: []string{handle}}
			default:
				mc.Format = "TEXT"
				if vars, _ := messaging.TemplateVariables("header", c.Text); len(vars) > 0 {
					ex := ExampleHeaderText
					if len(c.Examples) > 0 && c.Examples[0] != "" {
						ex = c.Examples[0]
					}
					mc.Example = &metaExample{HeaderText: []string{ex}}
				}
			}
		case "BODY":
			if vars, _ := messaging.TemplateVariables("body", c.Text); len(vars) > 0 {
				ex := make([]string, len(vars))
				for i := range ex {
					ex[i] = fmt.Sprintf("example %d", i+1)
					if i < len(c.Examples) && c.Examples[i] != "" {
						ex[i] = c.Examples[i]
					}
				}
				mc.Example = &metaExample{BodyText: [][]string{ex}}
			}
		case "BUTTONS":
			for _, b := range c.Buttons {
				mb := metaButton{Type: b.Type, Text: b.Text, URL: b.URL, PhoneNumber: b.PhoneNumber}
				switch {
				case b.Type == "URL" && strings.HasSuffix(b.URL, "{{1}}"):
					mb.Example, _ = json.Marshal([]string{strings.TrimSuffix(b.URL, "{{1}}") + ExampleURLSuffix})
				case b.Type == "COPY_CODE":
					mb.Example, _ = json.Marshal(b.Example)
				}
				mc.Buttons = append(mc.Buttons, mb)
			}
		}
		out = append(out, mc)
	}
	return out
}

// templateComponents converts Meta's components back, dropping Meta's
// examples (a COPY_CODE button's example is its sample code, kept).
func templateComponents(ms []metaComponent) []messaging.TemplateComponent {
	out := make([]messaging.TemplateComponent, 0, len(ms))
	for _, m := range ms {
		c := messaging.TemplateComponent{Type: m.Type, Format: m.Format, Text: m.Text}
		for _, mb := range m.Buttons {
			b := messaging.TemplateButton{Type: mb.Type, Text: mb.Text, URL: mb.URL, PhoneNumber: mb.PhoneNumber}
			if mb.Type == "COPY_CODE" {
				b.Example = copyCodeExample(mb.Example)
			}
			c.Buttons = append(c.Buttons, b)
		}
		out = append(out, c)
	}
	return out
}

// copyCodeExample reads a COPY_CODE example written as a string or as an
// array of strings.
func copyCodeExample(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		return list[0]
	}
	return ""
}

// wabaSender checks that s can manage the templates of a WhatsApp
// Business Account.
func wabaSender(s *messaging.ChannelSender) error {
	if s == nil || s.WABAID == "" || s.AccessToken == "" {
		return notConfigured(messaging.ChannelWhatsApp)
	}
	return nil
}

// templatesURL is the message_templates edge of s's WABA.
func (p *Provider) templatesURL(s *messaging.ChannelSender) string {
	return p.base + url.PathEscape(s.WABAID) + "/message_templates"
}

// SubmitTemplate implements messaging.TemplateManager: it creates t in the
// sender's WhatsApp Business Account (POST /{waba-id}/message_templates
// with name, language, category and components in Meta's shape) and
// returns Meta's id, status and category of it.
func (p *Provider) SubmitTemplate(ctx context.Context, s *messaging.ChannelSender, t *messaging.Template) (*messaging.ProviderTemplate, error) {
	if err := wabaSender(s); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, invalid("no template")
	}
	body, err := json.Marshal(&metaTemplate{Name: t.Name, Language: t.Language, Category: t.Category, Components: metaComponents(t.Components)})
	if err != nil {
		return nil, invalid("%v", err)
	}
	raw, status, err := p.do(ctx, http.MethodPost, p.templatesURL(s), s.AccessToken, body)
	if err != nil {
		return nil, err
	}
	var ans struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Category string `json:"category"`
	}
	_ = json.Unmarshal(raw, &ans)
	if ans.ID == "" {
		return nil, permanent(CodeInvalidResponse, fmt.Sprintf("the Graph API answered %d without a template id", status))
	}
	return &messaging.ProviderTemplate{ID: ans.ID, Name: t.Name, Language: t.Language,
		Category: cmp.Or(ans.Category, t.Category), Status: cmp.Or(ans.Status, record.ProviderTemplatePending)}, nil
}

// DeleteTemplate implements messaging.TemplateManager: DELETE
// /{waba-id}/message_templates?name=...(&hsm_id=... when
// t.ProviderTemplateID is set, to delete that language only). Meta's
// answer that the template does not exist (error 100 with subcode 2593002,
// or HTTP 404) is not an error.
func (p *Provider) DeleteTemplate(ctx context.Context, s *messaging.ChannelSender, t *messaging.Template) error {
	if err := wabaSender(s); err != nil {
		return err
	}
	if t == nil || t.Name == "" {
		return invalid("the template name is required")
	}
	q := url.Values{"name": {t.Name}}
	if t.ProviderTemplateID != "" {
		q.Set("hsm_id", t.ProviderTemplateID)
	}
	raw, status, err := p.do(ctx, http.MethodDelete, p.templatesURL(s)+"?"+q.Encode(), s.AccessToken, nil)
	if err != nil && templateNotFound(status, raw, err) {
		return nil
	}
	return err
}

// templateNotFound reports whether a Graph error answer (status, body)
// says that the template does not exist.
func templateNotFound(status int, body []byte, err error) bool {
	var se *messaging.SendError
	if !errors.As(err, &se) || se.Credentials || status == 0 {
		return false
	}
	var env struct {
		Error *graphError `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil &&
		env.Error.Code == 100 && env.Error.ErrorSubcode == SubcodeTemplateNotFound {
		return true
	}
	return status == http.StatusNotFound
}

// SubcodeTemplateNotFound is Graph's error subcode (of code 100) for a
// message template that does not exist.
const SubcodeTemplateNotFound = 2593002

// ListTemplates implements messaging.TemplateLister: GET
// /{waba-id}/message_templates, 100 a page, following paging.next while
// it is on the BaseURL's host (else paging.cursors.after), at most
// MaxTemplatePages pages. quality_score.score is the Quality and
// rejected_reason the Reason ("NONE" is none).
func (p *Provider) ListTemplates(ctx context.Context, s *messaging.ChannelSender) ([]*messaging.ProviderTemplate, error) {
	if err := wabaSender(s); err != nil {
		return nil, err
	}
	first := p.templatesURL(s) + "?" + url.Values{"fields": {templateFields}, "limit": {"100"}}.Encode()
	var out []*messaging.ProviderTemplate
	next := first
	for range MaxTemplatePages {
		raw, _, err := p.do(ctx, http.MethodGet, next, s.AccessToken, nil)
		if err != nil {
			return nil, err
		}
		var page metaPage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, permanent(CodeInvalidResponse, "the Graph API answered a template list that is not JSON")
		}
		for _, m := range page.Data {
			pt := &messaging.ProviderTemplate{ID: m.ID, Name: m.Name, Language: m.Language, Category: m.Category,
				Status: m.Status, Components: templateComponents(m.Components)}
			if m.QualityScore != nil {
				pt.Quality = m.QualityScore.Score
			}
			if !strings.EqualFold(m.RejectedReason, "NONE") {
				pt.Reason = m.RejectedReason
			}
			out = append(out, pt)
		}
		if page.Paging.Next == "" {
			return out, nil
		}
		if p.sameHost(page.Paging.Next) {
			next = page.Paging.Next
		} else if page.Paging.Cursors.After != "" {
			next = first + "&" + url.Values{"after": {page.Paging.Cursors.After}}.Encode()
		} else {
			return nil, permanent(CodeInvalidResponse, "the Graph API's template list points to another host without a cursor")
		}
	}
	return nil, permanent(CodeInvalidResponse, fmt.Sprintf("the Graph API's template list has more than %d pages", MaxTemplatePages))
}

// sameHost reports whether rawURL is an absolute URL on the scheme and
// host of the BaseURL.
func (p *Provider) sameHost(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Scheme == p.baseURL.Scheme && strings.EqualFold(u.Host, p.baseURL.Host)
}
