package httpapi

import (
	"net/http"

	"github.com/ujumbe/messaging"
)

// smsFallbackRequest is fallback.sms of POST /v1/messages/templates.
type smsFallbackRequest struct {
	Text      string `json:"text"`
	PartnerID string `json:"partner_id"`
	Shortcode string `json:"shortcode"`
	After     int    `json:"after"`
}

// fallbackRequest is the member fallback of POST /v1/messages/templates.
type fallbackRequest struct {
	SMS *smsFallbackRequest `json:"sms"`
}

// params returns the library's form of q (nil for nil).
func (q *fallbackRequest) params() *messaging.FallbackParams {
	if q == nil {
		return nil
	}
	p := &messaging.FallbackParams{}
	if s := q.SMS; s != nil {
		p.SMS = &messaging.SMSFallbackParams{Text: s.Text, PartnerID: s.PartnerID, Shortcode: s.Shortcode, After: s.After}
	}
	return p
}

// fallbackJSON is the member fallback of a message: its SMS fallback.
type fallbackJSON struct {
	SMS smsFallbackJSON `json:"sms"`
}

// smsFallbackJSON is what became of a message's SMS fallback.
type smsFallbackJSON struct {
	PartnerID string `json:"partner_id"`
	Shortcode string `json:"shortcode"`
	// After is the wait, in seconds.
	After int64 `json:"after"`
	// Status: pending, skipped, not_sent, or the SMS's queued, sent,
	// delivered, failed.
	Status               string `json:"status"`
	Reason               string `json:"reason,omitempty"`
	SMSMessageID         string `json:"sms_message_id,omitempty"`
	SMSProviderMessageID string `json:"sms_provider_message_id,omitempty"`
	// DueAt is, while pending, when the SMS goes out unless the message
	// is delivered first.
	DueAt *timestamp `json:"due_at,omitempty"`
}

// fallbackView is the JSON of f, nil for nil. The text is not repeated:
// the message's readers see what was sent by the SMS service.
func fallbackView(f *messaging.SMSFallbackRecord) *fallbackJSON {
	if f == nil {
		return nil
	}
	v := &fallbackJSON{SMS: smsFallbackJSON{PartnerID: f.PartnerID, Shortcode: f.Shortcode, After: int64(f.After.Seconds()),
		Status: f.Status, Reason: f.Reason, SMSMessageID: f.SMSMessageID, SMSProviderMessageID: f.SMSProviderMessageID}}
	if f.Status == messaging.SMSFallbackPending {
		v.SMS.DueAt = optTimestamp(f.DueAt)
	}
	return v
}

// smsLinksJSON is the answer of GET /admin/v1/workspaces/{id}/sms-accounts.
type smsLinksJSON struct {
	WorkspaceID string   `json:"workspace_id"`
	SMSAccounts []string `json:"sms_accounts"`
}

// smsLinkJSON is the answer of PUT and DELETE
// /admin/v1/workspaces/{id}/sms-accounts/{partnerID}.
type smsLinkJSON struct {
	WorkspaceID string `json:"workspace_id"`
	PartnerID   string `json:"partner_id"`
	Linked      bool   `json:"linked"`
	// Changed is false when the link was already as asked.
	Changed bool `json:"changed"`
}

// opListSMSLinks lists the SMS accounts a workspace may send fallbacks
// through.
func (h *Handler) opListSMSLinks(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	if _, err := query(r); err != nil {
		return err
	}
	ws := r.PathValue("id")
	list, err := h.svc.SMSAccounts(r.Context(), ws)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, smsLinksJSON{WorkspaceID: ws, SMSAccounts: list})
	return nil
}

// opLinkSMSAccount links an SMS account to a workspace
// (Service.LinkSMSAccount).
func (h *Handler) opLinkSMSAccount(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	return h.setSMSLink(w, r, true)
}

// opUnlinkSMSAccount removes the link (Service.UnlinkSMSAccount).
func (h *Handler) opUnlinkSMSAccount(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	return h.setSMSLink(w, r, false)
}

func (h *Handler) setSMSLink(w http.ResponseWriter, r *http.Request, linked bool) error {
	if linked {
		if err := h.noBody(w, r); err != nil {
			return err
		}
	} else if _, err := query(r); err != nil {
		return err
	}
	ws, partner := r.PathValue("id"), r.PathValue("partnerID")
	set := h.svc.UnlinkSMSAccount
	if linked {
		set = h.svc.LinkSMSAccount
	}
	changed, err := set(r.Context(), ws, partner)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, smsLinkJSON{WorkspaceID: ws, PartnerID: partner, Linked: linked, Changed: changed})
	return nil
}
