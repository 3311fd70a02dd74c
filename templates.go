package messaging

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// TemplateStatuses lists every review state.
func TemplateStatuses() []string {
	return []string{record.TemplateDraft, record.TemplatePending, record.TemplateApproved, record.TemplateRejected, record.TemplatePaused, record.TemplateDisabled}
}

// templateFrom lists the states a template may move to status from.
func templateFrom(status string) []string {
	switch status {
	case record.TemplateApproved:
		return []string{record.TemplatePending, record.TemplatePaused}
	case record.TemplateRejected:
		return []string{record.TemplatePending}
	case record.TemplatePaused:
		return []string{record.TemplateApproved}
	case record.TemplateDisabled:
		return []string{record.TemplateApproved, record.TemplatePaused}
	}
	return nil
}

// TemplateTransitionAllowed reports whether a template may move from
// review state from to review state to under the rules above. Staying in
// a state is not a transition.
func TemplateTransitionAllowed(from, to string) bool {
	return slices.Contains(templateFrom(to), from)
}

// TemplateCreateParams are the fields of a template submitted for review.
type TemplateCreateParams struct {
	Name       string              `json:"name"`
	Category   string              `json:"category"`
	Language   string              `json:"language"`
	Components []TemplateComponent `json:"components"`
	// Status is the initial review state. Empty means pending (submitted
	// for review); another state imports a template already reviewed by the
	// channel provider.
	Status string `json:"status,omitempty"`
}

var (
	templateNameRe = regexp.MustCompile(`^[a-z0-9_]+$`)
	languageRe     = regexp.MustCompile(`^[a-z]{2,3}(?:_[A-Z]{2}|_[A-Z][a-z]{3})?$`)
)

// TemplateVariables returns the variable numbers used in text ({{1}},
// {{2}}, ...) in order of first appearance, and an error naming field when a
// placeholder is not a positive number, numbers are not 1..n without gaps,
// or a '{{' or '}}' is not part of a placeholder ("{{{1}}}", "}}{{"), which
// would leave the number of variables open to interpretation.
func TemplateVariables(field, text string) ([]int, error) {
	return templateVariables(record.FieldPath(field), text)
}

// templateVariables is TemplateVariables of the text at path.
func templateVariables(path Path, text string) ([]int, error) {
	var seen []int
	for rest := text; ; {
		open, closing := strings.Index(rest, "{{"), strings.Index(rest, "}}")
		if open < 0 {
			if closing >= 0 {
				return nil, validationErrorAt(path, "has an unbalanced '{{' or '}}'")
			}
			break
		}
		if closing >= 0 && closing < open {
			return nil, validationErrorAt(path, "has an unbalanced '{{' or '}}'")
		}
		rest = rest[open+2:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return nil, validationErrorAt(path, "has an unbalanced '{{' or '}}'")
		}
		num := rest[:end]
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || num != strconv.Itoa(n) {
			return nil, validationErrorAt(path, "variable %q must be written {{n}} with n a positive number", "{{"+num+"}}")
		}
		if !slices.Contains(seen, n) {
			seen = append(seen, n)
		}
		rest = rest[end+2:]
	}
	sorted := slices.Clone(seen)
	slices.Sort(sorted)
	for i, n := range sorted {
		if n != i+1 {
			return nil, validationErrorAt(path, "variables must be numbered {{1}} to {{%d}} without gaps", len(sorted))
		}
	}
	return seen, nil
}

// CheckTemplate checks p against every authoring rule of the spec (name,
// category, language, header, body, footer, buttons and their limits)
// without storing anything, and returns the first rule broken as a
// validation error naming its field ("components[1].text", ...), or nil.
// Create and Update run exactly this check; the dashboard runs it as the
// author types.
func CheckTemplate(p *TemplateCreateParams) error {
	if err := requireStorable(p, "body", templateTexts); err != nil {
		return err
	}
	return validateTemplate(p)
}

// validateTemplate checks the authoring rules of the spec.
func validateTemplate(p *TemplateCreateParams) error {
	if p.Name == "" {
		return validationError("name", "is required")
	}
	if len(p.Name) > record.MaxTemplateName || !templateNameRe.MatchString(p.Name) {
		return validationError("name", "must hold only lowercase letters, digits and underscores (at most %d)", record.MaxTemplateName)
	}
	switch p.Category {
	case record.CategoryMarketing, record.CategoryUtility, record.CategoryAuthentication:
	default:
		return validationError("category", "must be MARKETING, UTILITY or AUTHENTICATION (got %q)", p.Category)
	}
	if !languageRe.MatchString(p.Language) {
		return validationError("language", "must be one language code such as en, sw or en_US (got %q)", p.Language)
	}
	if p.Status != "" && !slices.Contains(TemplateStatuses(), p.Status) {
		return validationError("status", "must be one of %s", strings.Join(TemplateStatuses(), ", "))
	}
	seen := map[string]bool{}
	for i, c := range p.Components {
		f := record.FieldPath("components").Index(i)
		if seen[c.Type] {
			return validationErrorAt(f.Member("type"), "a template has at most one %s component", c.Type)
		}
		seen[c.Type] = true
		if c.Type != "BUTTONS" && len(c.Buttons) > 0 {
			return validationErrorAt(f.Member("buttons"), "only a BUTTONS component has buttons")
		}
		if err := checkComponent(f, c); err != nil {
			return err
		}
		if c.Type != "HEADER" && c.Format != "" {
			return validationErrorAt(f.Member("format"), "is only allowed on a HEADER")
		}
		if err := checkExamples(f, c); err != nil {
			return err
		}
	}
	if !seen["BODY"] {
		return validationError("components", "a BODY component is required")
	}
	return nil
}

// checkComponent checks the rules of component c (at field f) of its
// type: a header's format and text, the body's and the footer's text, the
// buttons.
func checkComponent(f Path, c TemplateComponent) error {
	switch c.Type {
	case "HEADER":
		switch c.Format {
		case "TEXT", "":
			if c.Text == "" {
				return validationErrorAt(f.Member("text"), "is required for a TEXT header")
			}
			if err := checkLen(f.Member("text"), c.Text, record.MaxTemplateHeader); err != nil {
				return err
			}
			vars, err := templateVariables(f.Member("text"), c.Text)
			if err != nil {
				return err
			}
			if len(vars) > 1 {
				return validationErrorAt(f.Member("text"), "a header holds at most one variable {{1}}")
			}
		case "IMAGE", "VIDEO", "DOCUMENT":
			if c.Text != "" {
				return validationErrorAt(f.Member("text"), "is not allowed for a %s header", c.Format)
			}
			if c.ExampleMedia != "" {
				if err := checkMediaID(f.Member("example_media"), c.ExampleMedia); err != nil {
					return err
				}
			}
			return nil
		default:
			return validationErrorAt(f.Member("format"), "must be TEXT, IMAGE, VIDEO or DOCUMENT (got %q)", c.Format)
		}
	case "BODY":
		if strings.TrimSpace(c.Text) == "" {
			return validationErrorAt(f.Member("text"), "is required for the BODY")
		}
		if err := checkLen(f.Member("text"), c.Text, record.MaxTemplateBody); err != nil {
			return err
		}
		if _, err := templateVariables(f.Member("text"), c.Text); err != nil {
			return err
		}
	case "FOOTER":
		if err := checkLen(f.Member("text"), c.Text, record.MaxTemplateFooter); err != nil {
			return err
		}
		if c.Text == "" || strings.Contains(c.Text, "{{") {
			return validationErrorAt(f.Member("text"), "is required and holds no variables")
		}
	case "BUTTONS":
		if err := validateButtons(f, c.Buttons); err != nil {
			return err
		}
	default:
		return validationErrorAt(f.Member("type"), "must be HEADER, BODY, FOOTER or BUTTONS (got %q)", c.Type)
	}
	if c.ExampleMedia != "" {
		return validationErrorAt(f.Member("example_media"), "is only allowed on an IMAGE, VIDEO or DOCUMENT header")
	}
	return nil
}

// checkSamples checks the samples of the media headers of cs (their
// ExampleMedia) in the workspace: each an unexpired template-sample upload
// of the header's kind. When submit is set and the provider takes samples
// (a TemplateSampleUploader), a media header without one is refused, as
// the provider's review would refuse it.
func (ts *Templates) checkSamples(ctx context.Context, cs []TemplateComponent, submit bool) error {
	for i, c := range cs {
		if c.Type != "HEADER" || (c.Format != "IMAGE" && c.Format != "VIDEO" && c.Format != "DOCUMENT") {
			continue
		}
		f := record.FieldPath("components").Index(i).Member("example_media")
		if c.ExampleMedia == "" {
			if _, takes := ts.svc.providerFor(ChannelWhatsApp).(TemplateSampleUploader); submit && takes {
				return validationErrorAt(f, "is required to submit a template with an %s header: the provider's reviewers need a sample file (upload one with purpose %s and give its id)", c.Format, record.MediaForTemplateSample)
			}
			continue
		}
		if _, err := ts.svc.usableUpload(ctx, ts.ws, f, c.ExampleMedia, record.MediaForTemplateSample, strings.ToLower(c.Format)); err != nil {
			return err
		}
	}
	return nil
}

// checkExamples checks the Examples of component c (at field f): only a
// TEXT HEADER or the BODY has them, one per variable, each a non-blank
// text of at most MaxParamText bytes.
func checkExamples(f Path, c TemplateComponent) error {
	if len(c.Examples) == 0 {
		return nil
	}
	textual := c.Type == "BODY" || (c.Type == "HEADER" && (c.Format == "" || c.Format == "TEXT"))
	if !textual {
		return validationErrorAt(f.Member("examples"), "only a TEXT HEADER or the BODY has examples")
	}
	vars, _ := templateVariables(f.Member("text"), c.Text) // checked above
	if len(c.Examples) != len(vars) {
		return validationErrorAt(f.Member("examples"), "must hold one example per variable: %d, not %d", len(vars), len(c.Examples))
	}
	for i, ex := range c.Examples {
		if strings.TrimSpace(ex) == "" {
			return validationErrorAt(f.Member("examples").Index(i), "is required: a sample value of {{%d}}", i+1)
		}
		if err := checkLen(f.Member("examples").Index(i), ex, record.MaxParamText); err != nil {
			return err
		}
	}
	return nil
}

func validateButtons(f Path, bs []TemplateButton) error {
	if len(bs) == 0 {
		return validationErrorAt(f.Member("buttons"), "must hold at least one button")
	}
	var qr, cta, code int
	for j, b := range bs {
		bf := f.Member("buttons").Index(j)
		if b.Type != "COPY_CODE" {
			if b.Text == "" {
				return validationErrorAt(bf.Member("text"), "is required")
			}
			if err := checkLen(bf.Member("text"), b.Text, record.MaxButtonText); err != nil {
				return err
			}
		}
		switch b.Type {
		case "QUICK_REPLY":
			qr++
		case "URL":
			cta++
			u := strings.TrimSuffix(b.URL, "{{1}}")
			if strings.Contains(u, "{{") {
				return validationErrorAt(bf.Member("url"), "may hold one variable {{1}}, at the end only")
			}
			if err := validateHTTPURL(bf.Member("url"), u); err != nil {
				return err
			}
		case "PHONE_NUMBER":
			cta++
			if _, err := NormalizePhone(b.PhoneNumber); err != nil {
				return validationErrorAt(bf.Member("phone_number"), "must be in E.164 format")
			}
		case "COPY_CODE":
			code++
			if b.Example == "" || len(b.Example) > 15 {
				return validationErrorAt(bf.Member("example"), "is required: a sample code of 1 to 15 characters")
			}
		default:
			return validationErrorAt(bf.Member("type"), "must be QUICK_REPLY, URL, PHONE_NUMBER or COPY_CODE (got %q)", b.Type)
		}
	}
	switch {
	case qr > record.MaxQuickReplies:
		return validationErrorAt(f.Member("buttons"), "at most %d QUICK_REPLY buttons", record.MaxQuickReplies)
	case cta > record.MaxCallToActions:
		return validationErrorAt(f.Member("buttons"), "at most %d call-to-action (URL, PHONE_NUMBER) buttons", record.MaxCallToActions)
	case code > 1:
		return validationErrorAt(f.Member("buttons"), "at most 1 COPY_CODE button")
	}
	return nil
}

// Templates manages the templates of one workspace.
type Templates struct {
	svc *Service
	ws  string
}

// Create authors a template. With p.Status empty it is submitted for
// review at once (see Submit); with TemplateDraft it is kept as an
// editable draft; with another state it is imported as already reviewed
// by the channel provider. Every authoring rule is checked. A template
// with the same name and language is a conflict.
func (ts *Templates) Create(ctx context.Context, p *TemplateCreateParams) (*Template, error) {
	if err := CheckTemplate(p); err != nil {
		return nil, err
	}
	status := p.Status
	if status == "" {
		status = record.TemplatePending
	}
	if _, err := ts.svc.GetWorkspace(ctx, ts.ws); err != nil {
		return nil, err
	}
	if err := ts.checkSamples(ctx, p.Components, p.Status == ""); err != nil {
		return nil, err
	}
	now := ts.svc.now()
	t := &Template{
		ID: record.NewID("tpl"), WorkspaceID: ts.ws, Name: p.Name, Category: p.Category, Language: p.Language,
		Status: status, Components: slices.Clone(p.Components), CreatedAt: now, UpdatedAt: now,
	}
	if err := ts.svc.store.TemplateCreate(ctx, t); err != nil {
		if ErrorCode(err) == CodeConflict {
			return nil, nameTaken(p.Name, p.Language)
		}
		return nil, wrapStoreError(err, "template", t.ID)
	}
	ts.svc.audit(ctx, ts.ws, record.AuditTemplateCreated, t.ID)
	if p.Status == "" {
		ts.svc.audit(ctx, ts.ws, record.AuditTemplateSubmitted, t.ID)
		t = ts.svc.submitToProvider(ctx, t)
	}
	t.SendExample = SendExample(t)
	return t, nil
}

func nameTaken(name, lang string) *Error {
	return errorOn(CodeConflict, "name", fmt.Sprintf("name: a template %q in language %q already exists; submit a correction under a new name", name, lang), nil)
}

// Update replaces the content of a draft template (name, category,
// language, components), checking every authoring rule again. A template
// that was submitted cannot be edited: that is a conflict naming its
// state. p.Status must be empty or draft.
func (ts *Templates) Update(ctx context.Context, id string, p *TemplateCreateParams) (*Template, error) {
	if p != nil && p.Status != "" && p.Status != record.TemplateDraft {
		return nil, validationError("status", "an edit keeps a template a draft; submit it to send it for review")
	}
	if err := CheckTemplate(p); err != nil {
		return nil, err
	}
	if err := ts.checkSamples(ctx, p.Components, false); err != nil {
		return nil, err
	}
	cur, err := ts.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	next := *cur
	next.Name, next.Category, next.Language, next.Components = p.Name, p.Category, p.Language, slices.Clone(p.Components)
	next.UpdatedAt, next.SendExample = ts.svc.now(), nil
	err = ts.svc.store.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &next, From: []string{record.TemplateDraft}})
	switch {
	case errors.Is(err, driver.ErrStale):
		return nil, ts.notDraft(ctx, id, "edited")
	case errors.Is(err, ErrConflict):
		return nil, nameTaken(p.Name, p.Language)
	case err != nil:
		return nil, wrapStoreError(err, "template", id)
	}
	ts.svc.audit(ctx, ts.ws, record.AuditTemplateUpdated, id)
	next.SendExample = SendExample(&next)
	return &next, nil
}

// TemplatePatch is a partial edit of a draft template (Patch): a nil field
// is left unchanged. Every field of a template is required, so none can be
// cleared.
type TemplatePatch struct {
	Name       *string
	Category   *string
	Language   *string
	Components *[]TemplateComponent
}

// Patch changes the fields of a draft template that p sets and keeps the
// others, then checks every authoring rule on the result, as Update does.
// A patch that sets nothing is a validation error; a template that is no
// longer a draft is a conflict naming its state.
func (ts *Templates) Patch(ctx context.Context, id string, p *TemplatePatch) (*Template, error) {
	if p == nil || (p.Name == nil && p.Category == nil && p.Language == nil && p.Components == nil) {
		return nil, validationError("body", "must set at least one of name, category, language, components")
	}
	cur, err := ts.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if cur.Status != record.TemplateDraft {
		return nil, notDraftError(cur.Status, "edited")
	}
	full := TemplateCreateParams{Name: cur.Name, Category: cur.Category, Language: cur.Language, Components: cur.Components}
	if p.Name != nil {
		full.Name = *p.Name
	}
	if p.Category != nil {
		full.Category = *p.Category
	}
	if p.Language != nil {
		full.Language = *p.Language
	}
	if p.Components != nil {
		full.Components = *p.Components
	}
	return ts.Update(ctx, id, &full)
}

// notDraft is the conflict of an edit or submission of a template that is
// no longer a draft.
func (ts *Templates) notDraft(ctx context.Context, id, what string) error {
	cur, err := ts.Get(ctx, id)
	if err != nil {
		return err
	}
	return notDraftError(cur.Status, what)
}

func notDraftError(status, what string) *Error {
	return errorOn(CodeConflict, "status", fmt.Sprintf("status: the template is %s; only a draft can be %s", status, what), nil)
}

// Submit submits a draft template for review: it becomes pending (stored
// first, so a submission is never lost) and is handed to the channel
// provider when the provider reviews templates (a TemplateManager), which
// gives it its provider id and may answer at once (approved or rejected).
// A provider that could not be reached leaves it pending without a
// provider id; the template sync hands it over again. A template that is
// not a draft is a conflict naming its state.
func (ts *Templates) Submit(ctx context.Context, id string) (*Template, error) {
	cur, err := ts.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if cur.Status == record.TemplateDraft {
		if err := ts.checkSamples(ctx, cur.Components, true); err != nil {
			return nil, err
		}
	}
	next := *cur
	next.Status, next.StatusReason, next.UpdatedAt, next.SendExample = record.TemplatePending, "", ts.svc.now(), nil
	err = ts.svc.store.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &next, From: []string{record.TemplateDraft}})
	if errors.Is(err, driver.ErrStale) {
		return nil, ts.notDraft(ctx, id, "submitted")
	}
	if err != nil {
		return nil, wrapStoreError(err, "template", id)
	}
	ts.svc.audit(ctx, ts.ws, record.AuditTemplateSubmitted, id)
	ts.svc.announceTemplate(ctx, cur, &next)
	t := ts.svc.submitToProvider(ctx, &next)
	t.SendExample = SendExample(t)
	return t, nil
}

// Delete deletes a template: at the channel provider first (when it was
// submitted and the provider manages templates), then here. If the
// provider refuses or cannot be reached, nothing is deleted and the error
// says why.
func (ts *Templates) Delete(ctx context.Context, id string) error {
	t, err := ts.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := ts.svc.deleteAtProvider(ctx, t); err != nil {
		return err
	}
	if err := ts.svc.store.TemplateDelete(ctx, ts.ws, id); err != nil {
		return wrapStoreError(err, "template", id)
	}
	ts.svc.audit(ctx, ts.ws, record.AuditTemplateDeleted, id)
	return nil
}

// SetStatus moves a template to a new review state, if the transition is
// allowed (see the Template* constants); otherwise it is a conflict.
func (ts *Templates) SetStatus(ctx context.Context, id, status, reason string) (*Template, error) {
	if err := new(texts).at(nil, "status", status, "reason", reason).result(); err != nil {
		return nil, err
	}
	from := templateFrom(status)
	if from == nil && status != record.TemplatePending && status != record.TemplateDraft {
		return nil, validationError("status", "must be one of approved, rejected, paused, disabled (got %q)", status)
	}
	var t, before *Template
	err := driver.ErrStale // no state moves back to pending or draft
	if from != nil {
		// The state before, for the announcement (a read: a change made
		// between it and the write is announced as from this state).
		if before, err = ts.svc.store.TemplateGet(ctx, ts.ws, id); err != nil {
			return nil, wrapStoreError(err, "template", id)
		}
		t, err = ts.svc.store.TemplateSetStatus(ctx, &driver.TemplateStatusParams{
			WorkspaceID: ts.ws, ID: id, From: from, To: status, Reason: reason, At: ts.svc.now(),
		})
	}
	if errors.Is(err, driver.ErrStale) {
		cur, gerr := ts.Get(ctx, id)
		if gerr != nil {
			return nil, gerr
		}
		return nil, errorOn(CodeConflict, "status", fmt.Sprintf("status: a %s template cannot move to %s", cur.Status, status), nil)
	}
	if err != nil {
		return nil, wrapStoreError(err, "template", id)
	}
	ts.svc.audit(ctx, ts.ws, record.AuditTemplateStatusSet, id)
	ts.svc.announceTemplate(ctx, before, t)
	t.SendExample = SendExample(t)
	return t, nil
}

// TemplateFilter filters List. Empty Category and Language do not filter.
type TemplateFilter struct {
	// Status is the review state listed: empty means approved (the
	// templates that can be sent, the spec's behaviour), TemplateStatusAny
	// every state, else one of TemplateStatuses.
	Status   string
	Category string
	Language string
	// Caller, when set, is the API key asking: listing templates in
	// another state than approved needs ScopeManageTemplates besides
	// ScopeReadTemplates (drafts and rejections are management data), and
	// is forbidden otherwise. Nil means a trusted caller (Go code).
	Caller *Principal
}

// List returns the templates of the workspace in the review state of
// f.Status (approved by default), ordered by name then language, each with
// its SendExample. A status that is not a review state (nor "any") is a
// validation error; a Caller without the scopes of TemplateListScopes is
// forbidden.
func (ts *Templates) List(ctx context.Context, f *TemplateFilter) ([]*Template, error) {
	filt := opt(f)
	caller := filt.Caller
	filt.Caller = nil
	if err := refuseUnstorable(&filt, templateFilterTexts); err != nil {
		return nil, err
	}
	status := filt.Status
	switch {
	case status == "":
		status = record.TemplateApproved
	case status == record.TemplateStatusAny:
		status = ""
	case !slices.Contains(TemplateStatuses(), status):
		return nil, validationError("status", "must be one of %s or %s (got %q)", strings.Join(TemplateStatuses(), ", "), record.TemplateStatusAny, status)
	}
	if caller != nil {
		for _, sc := range record.TemplateListScopes(filt.Status) {
			if err := caller.Require(sc); err != nil {
				return nil, err
			}
		}
	}
	if filt.Category != "" {
		switch filt.Category {
		case record.CategoryMarketing, record.CategoryUtility, record.CategoryAuthentication:
		default:
			return nil, validationError("category", "must be MARKETING, UTILITY or AUTHENTICATION (got %q)", filt.Category)
		}
	}
	if filt.Language != "" && !languageRe.MatchString(filt.Language) {
		return nil, validationError("language", "must be a language code such as en, sw or en_US (got %q)", filt.Language)
	}
	list, err := ts.svc.store.TemplateList(ctx, &driver.TemplateListParams{
		WorkspaceID: ts.ws, Status: status, Category: filt.Category, Language: filt.Language,
	})
	if err != nil {
		return nil, wrapStoreError(err, "template", "")
	}
	for _, t := range list {
		t.SendExample = SendExample(t)
	}
	if list == nil {
		list = []*Template{}
	}
	return list, nil
}

// Get returns one template of the workspace (in any review state) with its
// SendExample.
func (ts *Templates) Get(ctx context.Context, id string) (*Template, error) {
	t, err := getRecord(ctx, ts.svc.store.TemplateGet, ts.ws, "template", id)
	if err != nil {
		return nil, err
	}
	t.SendExample = SendExample(t)
	return t, nil
}

// SendExample builds a ready request for sending t: one example text
// parameter for every variable (the component's Examples when it has
// them), a header component with a media link when the
// header is IMAGE, VIDEO or DOCUMENT, and a button component for every URL
// button with a dynamic suffix and every COPY_CODE button.
func SendExample(t *Template) *SendTemplateParams {
	ex := &SendTemplateParams{To: record.ExampleRecipient, TemplateName: t.Name, Language: t.Language}
	for _, c := range t.Components {
		switch c.Type {
		case "HEADER":
			switch c.Format {
			case "IMAGE", "VIDEO", "DOCUMENT":
				ext := map[string]string{"IMAGE": "jpg", "VIDEO": "mp4", "DOCUMENT": "pdf"}[c.Format]
				ex.Components = append(ex.Components, SendComponent{Type: "header", Parameters: []SendParameter{
					{Type: strings.ToLower(c.Format), Link: "https://example.com/sample." + ext},
				}})
			default:
				if vars, _ := TemplateVariables("header", c.Text); len(vars) > 0 {
					ex.Components = append(ex.Components, SendComponent{Type: "header", Parameters: []SendParameter{{Type: "text", Text: c.Example(0, "example header")}}})
				}
			}
		case "BODY":
			vars, _ := TemplateVariables("body", c.Text)
			if len(vars) > 0 {
				ps := make([]SendParameter, len(vars))
				for i := range ps {
					ps[i] = SendParameter{Type: "text", Text: c.Example(i, fmt.Sprintf("example %d", i+1))}
				}
				ex.Components = append(ex.Components, SendComponent{Type: "body", Parameters: ps})
			}
		case "BUTTONS":
			for i, b := range c.Buttons {
				idx := i
				switch {
				case b.Type == "URL" && strings.HasSuffix(b.URL, "{{1}}"):
					ex.Components = append(ex.Components, SendComponent{Type: "button", SubType: "url", Index: &idx,
						Parameters: []SendParameter{{Type: "text", Text: "example-suffix"}}})
				case b.Type == "COPY_CODE":
					ex.Components = append(ex.Components, SendComponent{Type: "button", SubType: "copy_code", Index: &idx,
						Parameters: []SendParameter{{Type: "coupon_code", CouponCode: b.Example}}})
				}
			}
		}
	}
	return ex
}
