package client

import (
	"context"
	"net/http"
	"time"
)

// Fallback names what a template send falls back to (schema Fallback).
type Fallback struct {
	// SMS is sent when WhatsApp cannot deliver the template.
	SMS *SMSFallback `json:"sms"`
}

// SMSFallback is an SMS sent instead of a template (schema
// SMSFallbackRequest): at once when the message fails as undeliverable
// (the number is not on WhatsApp), or when it is not delivered within
// After seconds; charged to the SMS account, at most once.
type SMSFallback struct {
	// Text is the SMS text.
	Text string `json:"text"`
	// PartnerID is an SMS account the operator linked to the workspace
	// (AdminClient.LinkSMSAccount); another is refused with 400 naming
	// fallback.sms.partner_id.
	PartnerID string `json:"partner_id"`
	// Shortcode is an approved sender id of the account.
	Shortcode string `json:"shortcode"`
	// After is the wait in seconds; 0 means the server's default (10
	// minutes unless configured).
	After int `json:"after,omitempty"`
}

// MessageFallback is what became of a message's fallback (schema
// MessageFallback).
type MessageFallback struct {
	SMS MessageSMSFallback `json:"sms"`
}

// MessageSMSFallback is what became of a message's SMS fallback.
type MessageSMSFallback struct {
	PartnerID string `json:"partner_id"`
	Shortcode string `json:"shortcode"`
	// After is the wait, in seconds.
	After int `json:"after"`
	// Status is pending (the message may still be delivered), skipped
	// (delivered in time: no SMS), not_sent (the SMS service refused it,
	// Reason says why, e.g. insufficient credit), or the SMS's own
	// status: queued, sent, delivered, failed.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// SMSMessageID is the SMS service's id of the SMS;
	// SMSProviderMessageID is the messageID its delivery reports take.
	SMSMessageID         string `json:"sms_message_id,omitempty"`
	SMSProviderMessageID string `json:"sms_provider_message_id,omitempty"`
	// DueAt is, while pending, when the SMS goes out unless the message
	// is delivered first.
	DueAt *time.Time `json:"due_at,omitempty"`
}

// SMSAccountLink is a link between a workspace and an SMS account
// (schema SMSAccountLink).
type SMSAccountLink struct {
	WorkspaceID string `json:"workspace_id"`
	PartnerID   string `json:"partner_id"`
	// Linked is true after LinkSMSAccount, false after UnlinkSMSAccount.
	Linked bool `json:"linked"`
	// Changed is false when the link was already as asked.
	Changed bool `json:"changed"`
}

// SMSAccountLinks lists the SMS accounts linked to a workspace (schema
// SMSAccountLinks).
type SMSAccountLinks struct {
	WorkspaceID string   `json:"workspace_id"`
	SMSAccounts []string `json:"sms_accounts"`
}

// WorkspaceSMSAccounts lists the SMS accounts a workspace's template
// sends may fall back through (GET
// /admin/v1/workspaces/{id}/sms-accounts).
func (c *AdminClient) WorkspaceSMSAccounts(ctx context.Context, workspaceID string) (*SMSAccountLinks, error) {
	return get[SMSAccountLinks](ctx, c.r, nil, "/admin/v1/workspaces/%s/sms-accounts", workspaceID)
}

// LinkSMSAccount lets a workspace send SMS fallbacks through an SMS
// account (PUT /admin/v1/workspaces/{id}/sms-accounts/{partnerID});
// audited. Repeating it is safe.
func (c *AdminClient) LinkSMSAccount(ctx context.Context, workspaceID, partnerID string) (*SMSAccountLink, error) {
	return send[SMSAccountLink](ctx, c.r, http.MethodPut, nil, true, "/admin/v1/workspaces/%s/sms-accounts/%s", workspaceID, partnerID)
}

// UnlinkSMSAccount removes the link (DELETE
// /admin/v1/workspaces/{id}/sms-accounts/{partnerID}); audited. Repeating
// it is safe.
func (c *AdminClient) UnlinkSMSAccount(ctx context.Context, workspaceID, partnerID string) (*SMSAccountLink, error) {
	return send[SMSAccountLink](ctx, c.r, http.MethodDelete, nil, true, "/admin/v1/workspaces/%s/sms-accounts/%s", workspaceID, partnerID)
}
