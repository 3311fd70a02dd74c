package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// The operator routes (/admin/v1): what no workspace may do, for the
// operator of the deployment. They authenticate with the header
// "Authorization: Bearer <Options.OperatorToken>" and are absent (404)
// when no token is configured. Their changes are audited with the actor
// "operator".

// ActorOperator is the actor of the changes made through the operator
// routes (see messaging.WithActor).
const ActorOperator = "operator"

// authorizeOperator checks the operator token of a request to an operator
// route and applies the route's rate limit (per client address). A
// request carrying an X-API-Key is refused, whatever its Authorization. A
// refused
// request spends a token of the client address's "unauthenticated"
// bucket. The token is compared as a SHA-256, in constant time.
func (h *Handler) authorizeOperator(w http.ResponseWriter, r *http.Request, rt Route) error {
	refuse := func(msg string) error {
		if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
			return err
		}
		return &apiError{code: messaging.CodeUnauthorized, status: http.StatusUnauthorized, message: msg}
	}
	// An X-API-Key is refused even beside a valid operator token: a
	// client that mixes the two is misconfigured, and a workspace key must
	// never ride along on an operator call.
	if len(r.Header[hdrAPIKey]) > 0 {
		return refuse("an API key does not open the operator routes: send the operator token as Authorization: Bearer <token>, without X-API-Key")
	}
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return refuse("missing operator token: send the header Authorization: Bearer <token>")
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if len(vals) != 1 || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return refuse("malformed Authorization header: send exactly one, Authorization: Bearer <token>")
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	if subtle.ConstantTimeCompare(sum[:], h.opHash) != 1 {
		return refuse("the operator token is invalid")
	}
	return h.limit(r.Context(), w, "op:"+rt.Name(), h.limits[rt.Name()])
}

// checkOperatorPath answers 404 for a path value that no record can have
// because it is not text (see checkPathID).
func checkOperatorPath(r *http.Request) error {
	for _, name := range []string{"id", "partnerID"} {
		v := r.PathValue(name)
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return &messaging.Error{Code: messaging.CodeNotFound, Message: fmt.Sprintf("%s %q not found", name, v)}
		}
	}
	return nil
}

// operatorError turns an *sms.Error into the error envelope's codes: a
// duplicate or a reused reference is a conflict, another refused input a
// validation error naming its field, an unknown account not found, an
// unavailable store service_unavailable. Other errors pass.
func operatorError(err error) error {
	var se *sms.Error
	if !errors.As(err, &se) {
		return err
	}
	msg := strings.TrimPrefix(strings.TrimPrefix(se.Description, sms.CodeText(se.Code)), ": ")
	if msg == "" {
		msg = sms.CodeText(se.Code)
	}
	switch {
	case se.Code == sms.CodeSystemError && errors.Is(se, messaging.ErrUnavailable):
		return &messaging.Error{Code: messaging.CodeServiceUnavailable, Message: "the service is temporarily unavailable; retry later", Err: se}
	case se.Code == sms.CodeSystemError:
		return se
	case se.Code == sms.CodeNotFound:
		return &messaging.Error{Code: messaging.CodeNotFound, Message: msg}
	case se.Code == sms.CodeIdempotencyConflict || errors.Is(se.Err, messaging.ErrConflict):
		return &messaging.Error{Code: messaging.CodeConflict, Field: se.Field, Message: msg}
	}
	return &messaging.Error{Code: messaging.CodeValidation, Field: se.Field, Message: msg}
}

// pageQuery reads the cursor and limit of a paged list.
func pageQuery(r *http.Request) (cursor string, limit int, err error) {
	q, err := query(r, "cursor", "limit")
	if err != nil {
		return "", 0, err
	}
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", 0, badRequest("limit", "must be a positive integer (got %q)", v)
		}
		limit = n
	}
	return q["cursor"], limit, nil
}

// workspaceJSON is a workspace record.
type workspaceJSON struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Channels []string `json:"channels"`
	// OutsideWindow is provider or reject.
	OutsideWindow string `json:"outside_window"`
	// UnconfirmedSends is resend or fail.
	UnconfirmedSends string `json:"unconfirmed_sends"`
	// OptOutKeywords and OptInKeywords are the keywords in effect: the
	// workspace's own, or the defaults.
	OptOutKeywords []string  `json:"opt_out_keywords"`
	OptInKeywords  []string  `json:"opt_in_keywords"`
	CreatedAt      timestamp `json:"created_at"`
}

func workspaceView(w *messaging.WorkspaceInfo) workspaceJSON {
	ch := w.Channels
	if ch == nil {
		ch = []string{}
	}
	return workspaceJSON{ID: w.ID, Name: w.Name, Channels: ch, CreatedAt: timestamp(w.CreatedAt),
		OutsideWindow: w.ActiveOutsideWindow(), UnconfirmedSends: w.ActiveUnconfirmedSends(),
		OptOutKeywords: w.ActiveOptOutKeywords(), OptInKeywords: w.ActiveOptInKeywords()}
}

// workspaceCreateRequest is the body of POST /admin/v1/workspaces.
type workspaceCreateRequest struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	OutsideWindow    string `json:"outside_window"`
	UnconfirmedSends string `json:"unconfirmed_sends"`
	// OptOutKeywords and OptInKeywords replace the defaults; absent or
	// empty keeps them.
	OptOutKeywords []string `json:"opt_out_keywords"`
	OptInKeywords  []string `json:"opt_in_keywords"`
}

// workspaceUpdateRequest is the body of PATCH /admin/v1/workspaces/{id}:
// an absent (or null) member leaves its setting; an empty keyword list
// restores the defaults.
type workspaceUpdateRequest struct {
	OutsideWindow    *string   `json:"outside_window"`
	UnconfirmedSends *string   `json:"unconfirmed_sends"`
	OptOutKeywords   *[]string `json:"opt_out_keywords"`
	OptInKeywords    *[]string `json:"opt_in_keywords"`
}

func (h *Handler) opUpdateWorkspace(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	var body workspaceUpdateRequest
	if err := h.decode(w, r, &body); err != nil {
		return err
	}
	return answer(w, http.StatusOK, workspaceView)(h.svc.SetWorkspaceSettings(r.Context(), r.PathValue("id"), &messaging.WorkspaceSettings{OutsideWindow: body.OutsideWindow,
		UnconfirmedSends: body.UnconfirmedSends, OptOutKeywords: body.OptOutKeywords, OptInKeywords: body.OptInKeywords}))
}

func (h *Handler) opCreateWorkspace(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	var body workspaceCreateRequest
	if err := h.decode(w, r, &body); err != nil {
		return err
	}
	return answer(w, http.StatusCreated, workspaceView)(h.svc.CreateWorkspace(r.Context(), &messaging.CreateWorkspaceParams{ID: body.ID, Name: body.Name, OutsideWindow: body.OutsideWindow,
		UnconfirmedSends: body.UnconfirmedSends, OptOutKeywords: body.OptOutKeywords, OptInKeywords: body.OptInKeywords}))
}

func (h *Handler) opListWorkspaces(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	cursor, limit, err := pageQuery(r)
	if err != nil {
		return err
	}
	list, next, err := h.svc.ListWorkspaces(r.Context(), cursor, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page(viewEach(workspaceView)(list), next))
	return nil
}

func (h *Handler) opGetWorkspace(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	return getByID(w, r, h.svc.GetWorkspace, workspaceView)
}

func (h *Handler) opCreateAPIKey(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	// The same body and answer as POST /v1/api-keys, with any scopes:
	// the operator is no key, so there is no escalation to refuse.
	params, err := decodeParams(h, w, r, &apiKeyCreateRequest{})
	if err != nil {
		return err
	}
	k, plain, err := h.svc.Workspace(r.PathValue("id")).APIKeys.Create(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, createdAPIKeyJSON{apiKeyJSON: apiKeyView(k), Key: plain})
	return nil
}

// optInRequest is the body of POST /admin/v1/workspaces/{id}/opt-ins.
type optInRequest struct {
	Channel string `json:"channel"`
	To      string `json:"to"`
}

// optInJSON is its answer.
type optInJSON struct {
	Channel  string `json:"channel"`
	To       string `json:"to"`
	OptedOut bool   `json:"opted_out"`
	Changed  bool   `json:"changed"`
}

func (h *Handler) opClearOptOut(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	var req optInRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	o, err := h.svc.ClearOptOut(r.Context(), r.PathValue("id"), req.Channel, req.To)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, optInJSON{Channel: o.Channel, To: o.To, OptedOut: o.OptedOut, Changed: o.Changed})
	return nil
}

// sessionsEndedJSON is the answer of DELETE /admin/v1/sessions.
type sessionsEndedJSON struct {
	// Ended is how many sessions were ended.
	Ended int `json:"ended"`
}

// opEndAllSessions signs everyone out of the dashboard ("sign out
// everywhere"): Service.EndAllSessions.
func (h *Handler) opEndAllSessions(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	if _, err := query(r); err != nil {
		return err
	}
	n, err := h.svc.EndAllSessions(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionsEndedJSON{Ended: n})
	return nil
}

// creditField reads an amount of credit given as a JSON number or string
// ("100", 100.5, "0.25"); a missing one is 0 unless required.
func creditField(field string, raw json.RawMessage, required bool) (sms.Credit, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		if required {
			return 0, badRequest(field, "is required")
		}
		return 0, nil
	}
	if s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, badRequest(field, "must be an amount")
		}
	}
	c, err := sms.ParseCredit(s)
	if err != nil {
		return 0, badRequest(field, "%v", err)
	}
	return c, nil
}

// given reports whether a JSON member was sent with a value (not absent,
// not null).
func given(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

// smsAccountRequest is the body of POST /admin/v1/sms/accounts.
type smsAccountRequest struct {
	PartnerID      string          `json:"partnerID"`
	APIKey         string          `json:"apikey"`
	Shortcodes     []string        `json:"shortcodes"`
	Credit         json.RawMessage `json:"credit"`
	TimeZone       string          `json:"timezone"`
	CostPerSegment json.RawMessage `json:"cost_per_segment"`
}

// smsAccountJSON is an SMS account as the operator routes show it: never
// its apikey, but in the answer that generated it.
type smsAccountJSON struct {
	PartnerID      string    `json:"partnerID"`
	Shortcodes     []string  `json:"shortcodes"`
	Credit         string    `json:"credit"`
	TimeZone       string    `json:"timezone"`
	CostPerSegment string    `json:"cost_per_segment"`
	CreatedAt      timestamp `json:"created_at"`
	UpdatedAt      timestamp `json:"updated_at"`
	// APIKey is the generated apikey, in the creation answer only.
	APIKey string `json:"apikey,omitempty"`
}

func smsAccountView(a *sms.Account) smsAccountJSON {
	senders := a.Senders
	if senders == nil {
		senders = []string{}
	}
	return smsAccountJSON{PartnerID: a.PartnerID, Shortcodes: senders, Credit: a.Credit.String(), TimeZone: a.TimeZone,
		CostPerSegment: a.CostPerSegment.String(), CreatedAt: timestamp(a.CreatedAt), UpdatedAt: timestamp(a.UpdatedAt)}
}

func (h *Handler) opCreateSMSAccount(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	var body smsAccountRequest
	if err := h.decode(w, r, &body); err != nil {
		return err
	}
	credit, err := creditField("credit", body.Credit, false)
	if err != nil {
		return err
	}
	cost, err := creditField("cost_per_segment", body.CostPerSegment, false)
	if err != nil {
		return err
	}
	if given(body.CostPerSegment) {
		// An explicit 0 is refused, not taken for the default that an
		// absent cost gets.
		if err := sms.CheckCostPerSegment(cost); err != nil {
			return operatorError(err)
		}
	}
	a, key, err := h.sms.CreateAccount(r.Context(), &sms.CreateAccountParams{PartnerID: body.PartnerID, APIKey: body.APIKey,
		Senders: body.Shortcodes, Credit: credit, TimeZone: body.TimeZone, CostPerSegment: cost})
	if err != nil {
		return operatorError(err)
	}
	out := smsAccountView(a)
	if body.APIKey == "" {
		out.APIKey = key
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (h *Handler) opGetSMSAccount(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	return getByID(w, r, func(ctx context.Context, id string) (*sms.Account, error) {
		a, err := h.sms.GetAccount(ctx, r.PathValue("partnerID"))
		return a, operatorError(err)
	}, smsAccountView)
}

// smsCallbackRequest is the body of PUT
// /admin/v1/sms/accounts/{partnerID}/callback.
type smsCallbackRequest struct {
	URL string `json:"url"`
	// Secret is the signing secret; empty: one is generated.
	Secret string `json:"secret"`
}

// smsCallbackJSON is an account's callback; Secret only in the answer of
// the PUT that set it.
type smsCallbackJSON struct {
	PartnerID string `json:"partnerID"`
	URL       string `json:"url"`
	Secret    string `json:"secret,omitempty"`
}

func (h *Handler) opSetSMSCallback(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	var body smsCallbackRequest
	if err := h.decode(w, r, &body); err != nil {
		return err
	}
	cb, secret, err := h.sms.SetCallback(r.Context(), r.PathValue("partnerID"), body.URL, body.Secret)
	if err != nil {
		return operatorError(err)
	}
	writeJSON(w, http.StatusOK, smsCallbackJSON{PartnerID: cb.PartnerID, URL: cb.URL, Secret: secret})
	return nil
}

func (h *Handler) opGetSMSCallback(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	partnerID := r.PathValue("partnerID")
	cb, err := h.sms.GetCallback(r.Context(), partnerID)
	if err != nil {
		return operatorError(err)
	}
	if cb == nil {
		return &messaging.Error{Code: messaging.CodeNotFound, Message: fmt.Sprintf("SMS account %q has no callback", partnerID)}
	}
	writeJSON(w, http.StatusOK, smsCallbackJSON{PartnerID: cb.PartnerID, URL: cb.URL})
	return nil
}

// senderRequest is the body of POST /admin/v1/sms/accounts/{partnerID}/senders.
type senderRequest struct {
	Shortcode string `json:"shortcode"`
}

func (h *Handler) opApproveSender(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	var body senderRequest
	if err := h.decode(w, r, &body); err != nil {
		return err
	}
	a, err := h.sms.AddSender(r.Context(), r.PathValue("partnerID"), body.Shortcode)
	if err != nil {
		return operatorError(err)
	}
	writeJSON(w, http.StatusOK, smsAccountView(a))
	return nil
}

// topUpRequest is the body of POST /admin/v1/sms/accounts/{partnerID}/top-ups.
type topUpRequest struct {
	Amount    json.RawMessage `json:"amount"`
	Reference string          `json:"reference"`
}

// ledgerEntryJSON is an entry of an SMS account's ledger.
type ledgerEntryJSON struct {
	Seq       int64  `json:"seq"`
	Kind      string `json:"kind"`
	Amount    string `json:"amount"`
	Balance   string `json:"balance"`
	Reference string `json:"reference,omitempty"`
	// MessageID is the providerMessageId of a charged or refunded message.
	MessageID int64     `json:"message_id,omitempty"`
	At        timestamp `json:"at"`
}

func ledgerView(e *sms.LedgerEntry) ledgerEntryJSON {
	return ledgerEntryJSON{Seq: e.Seq, Kind: e.Kind, Amount: e.Amount.String(), Balance: e.Balance.String(), Reference: e.Reference,
		MessageID: e.MessageNumber, At: timestamp(e.At)}
}

func (h *Handler) opTopUp(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	var body topUpRequest
	if err := h.decode(w, r, &body); err != nil {
		return err
	}
	amount, err := creditField("amount", body.Amount, true)
	if err != nil {
		return err
	}
	res, err := h.sms.AddTopUp(r.Context(), &sms.TopUpParams{PartnerID: r.PathValue("partnerID"), Amount: amount, Reference: body.Reference})
	if err != nil {
		return operatorError(err)
	}
	if res.Replayed {
		w.Header().Set(headerReplayed, "true")
	}
	writeJSON(w, http.StatusCreated, ledgerView(res.Entry))
	return nil
}

func (h *Handler) opLedger(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	cursor, limit, err := pageQuery(r)
	if err != nil {
		return err
	}
	list, next, err := h.sms.Ledger(r.Context(), r.PathValue("partnerID"), cursor, limit)
	if err != nil {
		return operatorError(err)
	}
	writeJSON(w, http.StatusOK, page(viewEach(ledgerView)(list), next))
	return nil
}
