package driver

import (
	"context"
	"time"

	"github.com/ujumbe/messaging/record"
)

// MessageFallbackClaimParams are the arguments of
// Store.MessageFallbackClaim.
type MessageFallbackClaimParams struct {
	// Now is the claim's time; Owner and LeaseUntil the lease it takes.
	Now        time.Time
	Owner      string
	LeaseUntil time.Time
	// Limit is the most fallbacks claimed.
	Limit int
	// WorkspaceID and MessageID, when set, claim that message's fallback
	// only, due or not, unless another owner's lease on it runs after
	// Now.
	WorkspaceID string
	MessageID   string
}

// MessageFallbackClaim is one fallback claimed by Store.MessageFallbackClaim.
type MessageFallbackClaim struct {
	WorkspaceID string
	MessageID   string
	// Fallback is the fallback after the claim.
	Fallback *record.SMSFallback
}

// MessageFallbackSettleParams are the arguments of
// Store.MessageFallbackSettle.
type MessageFallbackSettleParams struct {
	WorkspaceID string
	MessageID   string
	// Owner is the lease's owner: only its lease settles.
	Owner string
	// Status is the settled status (not pending), Reason why.
	Status               string
	Reason               string
	SMSMessageID         string
	SMSProviderMessageID string
	At                   time.Time
}

// WorkspaceSMSAccountParams are the arguments of
// Store.WorkspaceSMSAccountSet.
type WorkspaceSMSAccountParams struct {
	WorkspaceID string
	PartnerID   string
	// Linked links the account to the workspace (true) or unlinks it.
	Linked bool
	At     time.Time
}

// FallbackStore is the part of Store that keeps the SMS fallbacks of
// template sends (record.SMSFallback) and the SMS accounts a workspace
// may use for them. MessageCreate stores a message's Fallback as given
// (the service sets Status pending and DueAt the message's CreatedAt plus
// After) in the transaction that inserts the message, and nothing of it
// when it inserts nothing; the message reads (MessageGet, MessageList,
// ...) leave Message.Fallback nil.
type FallbackStore interface {
	// MessageFallbacks returns the fallbacks of the messages ids of the
	// workspace that have one, by message id.
	MessageFallbacks(ctx context.Context, workspaceID string, ids []string) (map[string]*record.SMSFallback, error)
	// MessageFallbackClaim leases up to p.Limit pending fallbacks whose
	// DueAt is at or before p.Now (or the one of p.MessageID, see
	// there), oldest DueAt first: each gets LeaseOwner p.Owner and DueAt
	// p.LeaseUntil, atomically, so two claimers never hold the same
	// fallback. It uses an index on the pending fallbacks' DueAt.
	MessageFallbackClaim(ctx context.Context, p *MessageFallbackClaimParams) ([]*MessageFallbackClaim, error)
	// MessageFallbackSettle records the outcome of a claimed fallback: if
	// it is pending and leased by p.Owner, it gets p.Status, p.Reason,
	// the SMS ids, UpdatedAt p.At, no DueAt and no lease; it reports
	// whether it did.
	MessageFallbackSettle(ctx context.Context, p *MessageFallbackSettleParams) (bool, error)
	// WorkspaceSMSAccountSet links or unlinks an SMS account (by its
	// partner id) and a workspace, and reports whether that changed
	// anything. ErrNotFound if the workspace does not exist.
	WorkspaceSMSAccountSet(ctx context.Context, p *WorkspaceSMSAccountParams) (changed bool, err error)
	// WorkspaceSMSAccounts returns the partner ids of the SMS accounts
	// linked to the workspace, sorted.
	WorkspaceSMSAccounts(ctx context.Context, workspaceID string) ([]string, error)
}
