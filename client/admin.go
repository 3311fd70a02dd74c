package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// AdminClient calls the operator routes (/admin/v1) of a server with the
// operator token, sent as "Authorization: Bearer <token>": workspaces,
// their settings and first keys, opt-ins, and SMS accounts with their
// senders, top-ups, ledger and delivery-report callbacks. It is the operator's tool, not a workspace's: keep the token
// on the operator's machines. An AdminClient is safe for concurrent use.
type AdminClient struct {
	r *restClient
}

// NewAdmin returns a client of the operator routes at baseURL with the
// operator token. opts may be nil for the defaults.
func NewAdmin(baseURL, operatorToken string, opts *Options) (*AdminClient, error) {
	r, err := newRestClient(baseURL, opts, operatorToken, "operatorToken is required: the server's operator token",
		http.Header{"Authorization": {"Bearer " + operatorToken}})
	if err != nil {
		return nil, err
	}
	return &AdminClient{r: r}, nil
}

// Workspace is a workspace (schema Workspace).
type Workspace struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Channels  []string  `json:"channels"`
	CreatedAt time.Time `json:"created_at"`
	// OutsideWindow is what a free-form (non-template) send outside the
	// recipient's customer-service window gets: "provider" (accepted,
	// and the provider fails it) or "reject" (refused at once with 422
	// outside_customer_service_window). Templates are never affected.
	OutsideWindow string `json:"outside_window"`
	// UnconfirmedSends is what becomes of a message whose send outcome is
	// unknown (the provider may have taken it, and no answer was
	// recorded) when the confirmation window ends with no confirmation
	// from the provider: "resend" (the default: sent once more, so the
	// recipient may get it twice) or "fail" (it fails with a
	// failure_reason starting "[unconfirmed]").
	UnconfirmedSends string `json:"unconfirmed_sends"`
	// OptOutKeywords are the keywords in effect that opt a sender out (an
	// inbound text that is exactly one, ignoring case and white space):
	// the workspace's own, folded (upper case, no white space), or the
	// defaults STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, SITISHA.
	OptOutKeywords []string `json:"opt_out_keywords"`
	// OptInKeywords are the keywords in effect that opt a sender back in:
	// the workspace's own, or the defaults START, UNSTOP, ANZA.
	OptInKeywords []string `json:"opt_in_keywords"`
}

// WorkspaceCreateParams is the body of POST /admin/v1/workspaces (schema
// WorkspaceCreate): an empty ID is generated, an empty OutsideWindow is
// "provider", an empty UnconfirmedSends is "resend", empty keyword lists
// are the defaults.
type WorkspaceCreateParams struct {
	ID               string `json:"id,omitempty"`
	Name             string `json:"name,omitempty"`
	OutsideWindow    string `json:"outside_window,omitempty"`
	UnconfirmedSends string `json:"unconfirmed_sends,omitempty"`
	// OptOutKeywords and OptInKeywords replace the default keyword lists:
	// each keyword 1 to 32 characters once case and white space are
	// folded, no duplicates, none in both lists, at most 50 per list (a
	// refusal names the field, e.g. "opt_out_keywords[2]").
	OptOutKeywords []string `json:"opt_out_keywords,omitempty"`
	OptInKeywords  []string `json:"opt_in_keywords,omitempty"`
}

// WorkspaceUpdateParams is the body of PATCH /admin/v1/workspaces/{id}
// (schema WorkspaceUpdate): the settings to change, at least one; an
// empty or nil field leaves its setting as it is.
type WorkspaceUpdateParams struct {
	// OutsideWindow is "provider" or "reject"; empty leaves the policy.
	OutsideWindow string `json:"outside_window,omitempty"`
	// UnconfirmedSends is "resend" or "fail"; empty leaves the policy.
	UnconfirmedSends string `json:"unconfirmed_sends,omitempty"`
	// OptOutKeywords, when non-nil, replaces the opt-out keywords (the
	// rules of WorkspaceCreateParams); a pointer to an empty, non-nil
	// slice (&[]string{}) restores the defaults.
	OptOutKeywords *[]string `json:"opt_out_keywords,omitempty"`
	// OptInKeywords, when non-nil, replaces the opt-in keywords, the same
	// way.
	OptInKeywords *[]string `json:"opt_in_keywords,omitempty"`
}

// SMSCallbackParams is the body of PUT
// /admin/v1/sms/accounts/{partnerID}/callback (schema SMSCallbackSet): an
// empty Secret is generated.
type SMSCallbackParams struct {
	// URL is an absolute http or https URL that the webhook address
	// guard allows.
	URL string `json:"url"`
	// Secret is the signing secret, "whsec_" followed by the base64 of 24
	// to 64 random bytes.
	Secret string `json:"secret,omitempty"`
}

// SMSCallback is an SMS account's callback (schema SMSCallback): each
// final delivery report of the account's messages is POSTed to URL as a
// signed sms.delivery_report event. Secret is set only in the answer of
// the SetSMSCallback that registered it.
type SMSCallback struct {
	PartnerID string `json:"partnerID"`
	URL       string `json:"url"`
	Secret    string `json:"secret,omitempty"`
}

// WorkspacePage is a page of GET /admin/v1/workspaces (schema
// WorkspacePage). NextCursor is nil on the last page.
type WorkspacePage struct {
	Data       []*Workspace `json:"data"`
	NextCursor *string      `json:"next_cursor"`
}

// OptInParams is the body of POST /admin/v1/workspaces/{id}/opt-ins
// (schema OptIn): the recipient to opt back in on a channel.
type OptInParams struct {
	Channel string `json:"channel"`
	To      string `json:"to"`
}

// OptInResult is its answer (schema OptInResult): Changed is false when
// the recipient had not opted out.
type OptInResult struct {
	Channel  string `json:"channel"`
	To       string `json:"to"`
	OptedOut bool   `json:"opted_out"`
	Changed  bool   `json:"changed"`
}

// SMSAccountCreateParams is the body of POST /admin/v1/sms/accounts
// (schema SMSAccountCreate). Credit and CostPerSegment are amounts such as
// "100" or "0.25" ("" for none and the default); an empty APIKey is
// generated and returned once.
type SMSAccountCreateParams struct {
	PartnerID      string   `json:"partnerID"`
	APIKey         string   `json:"apikey,omitempty"`
	Shortcodes     []string `json:"shortcodes,omitempty"`
	Credit         string   `json:"credit,omitempty"`
	TimeZone       string   `json:"timezone,omitempty"`
	CostPerSegment string   `json:"cost_per_segment,omitempty"`
}

// SMSAccount is an SMS account (schema SMSAccount); APIKey is set only in
// the answer that generated it.
type SMSAccount struct {
	PartnerID      string    `json:"partnerID"`
	Shortcodes     []string  `json:"shortcodes"`
	Credit         string    `json:"credit"`
	TimeZone       string    `json:"timezone"`
	CostPerSegment string    `json:"cost_per_segment"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	APIKey         string    `json:"apikey,omitempty"`
}

// LedgerEntry is an entry of an SMS account's ledger (schema
// LedgerEntry).
type LedgerEntry struct {
	Seq       int64  `json:"seq"`
	Kind      string `json:"kind"`
	Amount    string `json:"amount"`
	Balance   string `json:"balance"`
	Reference string `json:"reference,omitempty"`
	// MessageID is the providerMessageId of a charged or refunded
	// message.
	MessageID int64     `json:"message_id,omitempty"`
	At        time.Time `json:"at"`
	// Replayed is true on a top-up answered with the entry of an earlier
	// top-up with the same reference: nothing was added this time.
	Replayed bool `json:"-"`
}

func (e *LedgerEntry) setReplayed(v bool) { e.Replayed = v }

// LedgerPage is a page of an account's ledger (schema LedgerPage).
// NextCursor is nil on the last page.
type LedgerPage struct {
	Data       []*LedgerEntry `json:"data"`
	NextCursor *string        `json:"next_cursor"`
}

// CreateWorkspace creates a workspace (POST /admin/v1/workspaces).
func (c *AdminClient) CreateWorkspace(ctx context.Context, p *WorkspaceCreateParams) (*Workspace, error) {
	return send[Workspace](ctx, c.r, http.MethodPost, p, false, "/admin/v1/workspaces")
}

// ListWorkspaces returns one page of workspaces (GET
// /admin/v1/workspaces). p may be nil.
func (c *AdminClient) ListWorkspaces(ctx context.Context, p *CursorParams) (*WorkspacePage, error) {
	return get[WorkspacePage](ctx, c.r, p.query(), "/admin/v1/workspaces")
}

// AllWorkspaces iterates over the workspaces of every page from p.Cursor
// on.
func (c *AdminClient) AllWorkspaces(ctx context.Context, p *CursorParams) iter.Seq2[*Workspace, error] {
	return cursorSeq(p, func(q *CursorParams) (*WorkspacePage, error) { return c.ListWorkspaces(ctx, q) })
}

// GetWorkspace returns a workspace (GET /admin/v1/workspaces/{id}).
func (c *AdminClient) GetWorkspace(ctx context.Context, id string) (*Workspace, error) {
	return get[Workspace](ctx, c.r, nil, "/admin/v1/workspaces/%s", id)
}

// UpdateWorkspace changes a workspace's settings (PATCH
// /admin/v1/workspaces/{id}), audited as workspace.updated, and returns
// the workspace.
func (c *AdminClient) UpdateWorkspace(ctx context.Context, id string, p *WorkspaceUpdateParams) (*Workspace, error) {
	// Setting a setting twice is setting it: safe to repeat.
	return sendParams[Workspace](ctx, c.r, "AdminClient.UpdateWorkspace", http.MethodPatch, p, true, "/admin/v1/workspaces/%s", id)
}

// CreateAPIKey creates an API key of a workspace, with any scopes (POST
// /admin/v1/workspaces/{id}/api-keys); its Key is shown this once.
func (c *AdminClient) CreateAPIKey(ctx context.Context, workspaceID string, p *APIKeyCreateParams) (*APIKeyCreated, error) {
	return send[APIKeyCreated](ctx, c.r, http.MethodPost, p, false, "/admin/v1/workspaces/%s/api-keys", workspaceID)
}

// ClearOptOut opts a recipient back in on a channel of a workspace (POST
// /admin/v1/workspaces/{id}/opt-ins); it is audited.
func (c *AdminClient) ClearOptOut(ctx context.Context, workspaceID string, p *OptInParams) (*OptInResult, error) {
	// Opting in twice is opting in: the request is safe to repeat.
	return send[OptInResult](ctx, c.r, http.MethodPost, p, true, "/admin/v1/workspaces/%s/opt-ins", workspaceID)
}

// EndAllSessions ends every dashboard session ("sign out everywhere":
// DELETE /admin/v1/sessions) and returns how many it ended. Repeating it is
// safe.
func (c *AdminClient) EndAllSessions(ctx context.Context) (int, error) {
	out, err := send[struct {
		Ended int `json:"ended"`
	}](ctx, c.r, http.MethodDelete, nil, true, "/admin/v1/sessions")
	if err != nil {
		return 0, err
	}
	return out.Ended, nil
}

// CreateSMSAccount creates an SMS account (POST /admin/v1/sms/accounts).
func (c *AdminClient) CreateSMSAccount(ctx context.Context, p *SMSAccountCreateParams) (*SMSAccount, error) {
	return send[SMSAccount](ctx, c.r, http.MethodPost, p, false, "/admin/v1/sms/accounts")
}

// GetSMSAccount returns an SMS account, never its apikey (GET
// /admin/v1/sms/accounts/{partnerID}).
func (c *AdminClient) GetSMSAccount(ctx context.Context, partnerID string) (*SMSAccount, error) {
	return get[SMSAccount](ctx, c.r, nil, "/admin/v1/sms/accounts/%s", partnerID)
}

// ApproveSender approves a sender id of an SMS account (POST
// /admin/v1/sms/accounts/{partnerID}/senders).
func (c *AdminClient) ApproveSender(ctx context.Context, partnerID, shortcode string) (*SMSAccount, error) {
	// Approving an approved sender changes nothing: safe to repeat.
	return send[SMSAccount](ctx, c.r, http.MethodPost, map[string]string{"shortcode": shortcode}, true, "/admin/v1/sms/accounts/%s/senders", partnerID)
}

// TopUp adds amount to an SMS account's credit once per reference (POST
// /admin/v1/sms/accounts/{partnerID}/top-ups): the reference (an invoice
// or payment number) makes the request safe to retry, and a repeat is
// answered with the first entry, Replayed.
func (c *AdminClient) TopUp(ctx context.Context, partnerID string, amount Credit, reference string) (*LedgerEntry, error) {
	body := map[string]string{"amount": amount.String(), "reference": reference}
	return send[LedgerEntry](ctx, c.r, http.MethodPost, body, reference != "", "/admin/v1/sms/accounts/%s/top-ups", partnerID)
}

// SetSMSCallback registers p.URL as an SMS account's callback, replacing
// any earlier one (PUT /admin/v1/sms/accounts/{partnerID}/callback). The
// answer's Secret, the signing secret of the sms.delivery_report events,
// is shown this once. A PUT is retried like a GET: a repeat replaces the
// callback again, and without p.Secret the secret of the last answer is
// the one in force.
func (c *AdminClient) SetSMSCallback(ctx context.Context, partnerID string, p *SMSCallbackParams) (*SMSCallback, error) {
	return sendParams[SMSCallback](ctx, c.r, "AdminClient.SetSMSCallback", http.MethodPut, p, true, "/admin/v1/sms/accounts/%s/callback", partnerID)
}

// GetSMSCallback returns an SMS account's callback, never its secret (GET
// /admin/v1/sms/accounts/{partnerID}/callback); an account without one is
// not_found.
func (c *AdminClient) GetSMSCallback(ctx context.Context, partnerID string) (*SMSCallback, error) {
	return get[SMSCallback](ctx, c.r, nil, "/admin/v1/sms/accounts/%s/callback", partnerID)
}

// Ledger returns one page of an SMS account's ledger (GET
// /admin/v1/sms/accounts/{partnerID}/ledger). p may be nil.
func (c *AdminClient) Ledger(ctx context.Context, partnerID string, p *CursorParams) (*LedgerPage, error) {
	return get[LedgerPage](ctx, c.r, p.query(), "/admin/v1/sms/accounts/%s/ledger", partnerID)
}

// AllLedger iterates over an SMS account's ledger entries of every page
// from p.Cursor on.
func (c *AdminClient) AllLedger(ctx context.Context, partnerID string, p *CursorParams) iter.Seq2[*LedgerEntry, error] {
	return cursorSeq(p, func(q *CursorParams) (*LedgerPage, error) { return c.Ledger(ctx, partnerID, q) })
}
