package record

import "time"

// Template review states. Create submits a template for review (pending);
// review moves it to approved or rejected; quality problems move an approved
// template to paused or disabled; a paused template can be approved again
// (unpaused) or disabled. Rejected and disabled are final. Only approved
// templates can be sent.
const (
	// TemplateDraft extends the spec's states: a template being authored,
	// editable, not yet submitted for review.
	TemplateDraft    = "draft"
	TemplatePending  = "pending"
	TemplateApproved = "approved"
	TemplateRejected = "rejected"
	TemplatePaused   = "paused"
	TemplateDisabled = "disabled"
)

// Template categories.
const (
	CategoryMarketing      = "MARKETING"
	CategoryUtility        = "UTILITY"
	CategoryAuthentication = "AUTHENTICATION"
)

// Template authoring limits.
const (
	MaxTemplateName   = 512
	MaxTemplateBody   = 1024
	MaxTemplateHeader = 60
	MaxTemplateFooter = 60
	MaxQuickReplies   = 3
	MaxCallToActions  = 2
	MaxButtonText     = 25
	MaxParamText      = 1024
)

// Template is a message template.
type Template struct {
	ID          string
	WorkspaceID string
	Name        string
	Category    string
	Language    string
	Status      string
	Components  []TemplateComponent
	// StatusReason explains a rejection, pause or disablement.
	StatusReason string
	// Quality is the provider's quality rating of an approved template
	// (GREEN, YELLOW, RED or UNKNOWN), when it reported one.
	Quality string
	// ProviderTemplateID is the channel provider's id of the template,
	// once it was submitted (or listed by the provider).
	ProviderTemplateID string
	CreatedAt          time.Time
	UpdatedAt          time.Time
	// SendExample is a ready request for SendTemplate (POST
	// /v1/messages/templates). It is derived, not stored.
	SendExample *SendTemplateParams
}

// TemplateComponent is one part of a template: HEADER, BODY, FOOTER or
// BUTTONS.
type TemplateComponent struct {
	Type string `json:"type"`
	// Format of a HEADER: TEXT, IMAGE, VIDEO or DOCUMENT.
	Format  string           `json:"format,omitempty"`
	Text    string           `json:"text,omitempty"`
	Buttons []TemplateButton `json:"buttons,omitempty"`
	// Examples are sample values of the variables of a TEXT HEADER's or
	// the BODY's text, in the order of their numbers ({{1}}, {{2}}, ...):
	// the channel provider's reviewers see them, and SendExample uses
	// them. Optional; when given, there is one per variable.
	Examples []string `json:"examples,omitempty"`
	// ExampleMedia is the sample of an IMAGE, VIDEO or DOCUMENT header:
	// the id of a media upload of purpose MediaForTemplateSample (see
	// messaging.Media.Upload), which the provider's reviewers see.
	ExampleMedia string `json:"example_media,omitempty"`
	// ExampleHandle is the provider's handle of ExampleMedia's upload,
	// set by the service when it submits the template (never stored).
	ExampleHandle string `json:"-"`
}

// TemplateButton is a button of a BUTTONS component. Type is QUICK_REPLY,
// URL or PHONE_NUMBER (call to action), or COPY_CODE.
type TemplateButton struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	URL         string `json:"url,omitempty"`
	PhoneNumber string `json:"phone_number,omitempty"`
	// Example is a sample code for a COPY_CODE button.
	Example string `json:"example,omitempty"`
}

// TemplateStatusAny is the messaging.TemplateFilter.Status that lists templates in
// every review state.
const TemplateStatusAny = "any"

// TemplateListScopes returns the scopes an API key needs to list the
// templates in review state status (as messaging.TemplateFilter.Status): read:templates
// for approved ones, and manage:templates too for any other state.
func TemplateListScopes(status string) []string {
	if status == "" || status == TemplateApproved {
		return []string{ScopeReadTemplates}
	}
	return []string{ScopeReadTemplates, ScopeManageTemplates}
}

// Example is the example of variable {{i+1}} of c, or def when c has
// none.
func (c TemplateComponent) Example(i int, def string) string {
	if i < len(c.Examples) && c.Examples[i] != "" {
		return c.Examples[i]
	}
	return def
}

// ExampleRecipient is the recipient used in send examples.
const ExampleRecipient = "+14155550123"
