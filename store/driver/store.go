package driver

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ujumbe/messaging/record"
)

// ErrStale is returned by Store.ContactUpdate when the contact changed since
// it was read (its Version moved). The Service retries the update.
var ErrStale = errors.New("messaging: stale record")

// OptedOutError is Store.MessageCreate's refusal of a message to a
// recipient who opted out of its channel in its workspace (a Suppression
// with OptedOut); At is when they did.
type OptedOutError struct {
	At time.Time
}

// Error implements error.
func (e *OptedOutError) Error() string {
	return "messaging: the recipient opted out of the channel at " + e.At.UTC().Format(time.RFC3339Nano)
}

// ErrSchemaVersion is returned (wrapped) by Store.Ping when the
// database's schema is not at the version the store's code migrates to.
var ErrSchemaVersion = errors.New("messaging: schema version mismatch")

// Store is the persistence interface the Service runs on. Implementations
// live in sub-packages (store/memstore, store/sqlitestore) and all pass the
// conformance suite in store/storetest.
//
// Every method takes the workspace id where the record belongs to one, and a
// record of another workspace is reported as ErrNotFound. Stores return the
// sentinels ErrNotFound, ErrConflict and ErrStale; any other error is treated
// as an internal failure. Stores never validate business rules: the Service
// does that before calling them. Stores do enforce uniqueness atomically.
type Store interface {
	// WorkspaceCreate inserts w. ErrConflict if the id exists.
	WorkspaceCreate(ctx context.Context, w *record.WorkspaceInfo) error
	// WorkspaceGet returns the workspace with its connected channels.
	WorkspaceGet(ctx context.Context, id string) (*record.WorkspaceInfo, error)
	// WorkspaceList returns up to p.Limit workspaces (with their connected
	// channels) whose id is after p.After (byte order; empty: from the
	// first), ordered by id.
	WorkspaceList(ctx context.Context, p *WorkspaceListParams) ([]*record.WorkspaceInfo, error)
	// WorkspaceSetSettings stores each non-nil setting of p (the others
	// are left as they are). ErrNotFound if the workspace does not exist.
	WorkspaceSetSettings(ctx context.Context, p *WorkspaceSettingsParams) error
	// WorkspaceSetChannel connects or disconnects a channel. ErrNotFound if
	// the workspace does not exist.
	WorkspaceSetChannel(ctx context.Context, p *ChannelParams) error

	// APIKeyCreate inserts k. ErrConflict if a key with the same hash exists.
	APIKeyCreate(ctx context.Context, k *record.APIKey) error
	// APIKeysByPrefix returns every key (revoked or not) whose Prefix equals
	// prefix, across workspaces.
	APIKeysByPrefix(ctx context.Context, prefix string) ([]*record.APIKey, error)
	// APIKeyList returns the keys of a workspace, oldest first.
	APIKeyList(ctx context.Context, workspaceID string) ([]*record.APIKey, error)
	// APIKeyRevoke sets RevokedAt to p.At on the key p.ID of the workspace
	// if it is not revoked yet. ErrNotFound if there is no such key.
	APIKeyRevoke(ctx context.Context, p *APIKeyRevokeParams) error
	// APIKeyUpdate replaces the Scopes and ExpiresAt (nil: no expiry) of a
	// key of the workspace, revoked or not. ErrNotFound if there is no such
	// key.
	APIKeyUpdate(ctx context.Context, p *APIKeyUpdateParams) error
	// APIKeyTouch sets LastUsedAt to p.At on the key p.ID of the workspace
	// unless it already holds p.At or a later time (uses recorded out of
	// order never move it back). A key that does not exist in the
	// workspace is left alone, without an error: the write records a use
	// after the fact and has nothing to report.
	APIKeyTouch(ctx context.Context, p *APIKeyTouchParams) error

	// ContactCreate inserts c. ErrConflict if another contact of the
	// workspace has the same Phone or the same EmailKey (non-empty).
	ContactCreate(ctx context.Context, c *record.Contact) error
	// ContactGet returns one contact of the workspace.
	ContactGet(ctx context.Context, workspaceID, id string) (*record.Contact, error)
	// ContactUpdate replaces the stored contact p.Contact.ID with p.Contact
	// if its stored Version equals p.PrevVersion; p.Contact.Version is
	// already p.PrevVersion+1. ErrStale if the version moved, ErrConflict
	// on a duplicate phone or email, ErrNotFound if it does not exist.
	ContactUpdate(ctx context.Context, p *ContactReplaceParams) error
	// ContactsByPhone returns the contacts of p.WorkspaceID whose Phone is
	// one of p.Phones, in any order.
	ContactsByPhone(ctx context.Context, p *ContactsByPhoneParams) ([]*record.Contact, error)
	// ContactList returns one page of contacts, newest first (CreatedAt
	// descending, then ID descending), and the total number of matches.
	ContactList(ctx context.Context, p *ContactListParams) ([]*record.Contact, int, error)

	// TemplateCreate inserts t. ErrConflict if the workspace has a template
	// with the same Name and Language.
	TemplateCreate(ctx context.Context, t *record.Template) error
	// TemplateGet returns one template of the workspace by id.
	TemplateGet(ctx context.Context, workspaceID, id string) (*record.Template, error)
	// TemplateGetByName returns the template of the workspace with exactly
	// p.Name and p.Language (byte-for-byte comparison).
	TemplateGetByName(ctx context.Context, p *TemplateGetByNameParams) (*record.Template, error)
	// TemplateList returns the templates matching p, ordered by Name then
	// Language then ID.
	TemplateList(ctx context.Context, p *TemplateListParams) ([]*record.Template, error)
	// TemplateSetStatus moves a template to p.To if its current status is one
	// of p.From, and returns the updated template. ErrStale if the current
	// status is not in p.From, ErrNotFound if it does not exist.
	TemplateSetStatus(ctx context.Context, p *TemplateStatusParams) (*record.Template, error)
	// TemplateUpdate replaces the stored template p.Template.ID of
	// p.Template.WorkspaceID with p.Template (every field but ID,
	// WorkspaceID and CreatedAt) if its stored Status is one of p.From.
	// ErrStale if the status is not in p.From, ErrNotFound if there is no
	// such template, ErrConflict if another template of the workspace has
	// the new Name and Language.
	TemplateUpdate(ctx context.Context, p *TemplateUpdateParams) error
	// TemplateDelete removes a template of the workspace. ErrNotFound if
	// there is none.
	TemplateDelete(ctx context.Context, workspaceID, id string) error

	// ConnectionPut stores c as the connection of c.WorkspaceID on
	// c.Channel, replacing an earlier one (credentials, state, sync
	// outcome; CreatedAt of the earlier one is kept), in one transaction.
	// It sets c.Generation to one more than the replaced connection's (1
	// for the first) and c.CreatedAt to the kept CreatedAt, so that c is
	// the connection as stored.
	// When c holds its account (c.Holds()), the put claims it, as
	// ConnectionVerified does: ErrConflict (nothing stored) if a
	// connected connection of another workspace holds the same Channel
	// and AccountID or (both non-empty) the same WABAID; else every other
	// workspace's connection of that account or WABA that is not
	// disconnected is superseded and returned. The channel is connected
	// (as WorkspaceSetChannel does) when c holds its account, and
	// disconnected when it does not (a connection not yet verified sends
	// nothing).
	// ErrNotFound if the workspace does not exist.
	ConnectionPut(ctx context.Context, c *record.ChannelConnection) (superseded []*record.ChannelConnection, err error)
	// ConnectionVerified records that the provider proved the credentials
	// of the connection of p.WorkspaceID on p.Channel whose Generation is
	// p.Generation: it becomes ConnectionConnected with an empty
	// StatusReason, VerifiedAt and UpdatedAt p.At and (when non-empty)
	// p.DisplayPhoneNumber, and its channel is connected. It claims the
	// account: ErrConflict (nothing changed) if a connected connection of
	// another workspace holds the same Channel and AccountID or (both
	// non-empty) the same WABAID; else every other workspace's
	// connection of that account or WABA that is not disconnected (nor
	// superseded already: in error with ReasonSuperseded and no
	// VerifiedAt) is superseded (ConnectionError, StatusReason ReasonSuperseded,
	// VerifiedAt nil, UpdatedAt p.At, its channel disconnected) and
	// returned as stored after the change. ErrNotFound if there is no
	// connection; ErrStale if its Generation is not p.Generation, it is
	// disconnected, or p.FromStatus is set and is not its status.
	ConnectionVerified(ctx context.Context, p *ConnectionVerifiedParams) (superseded []*record.ChannelConnection, err error)
	// ConnectionGet returns the connection of a workspace on a channel, in
	// any state. ErrNotFound if the channel was never connected with
	// credentials.
	ConnectionGet(ctx context.Context, workspaceID, channel string) (*record.ChannelConnection, error)
	// ConnectionList returns the connections matching p (empty fields do
	// not filter), across workspaces when p.WorkspaceID is empty, ordered
	// by WorkspaceID then Channel.
	ConnectionList(ctx context.Context, p *ConnectionListParams) ([]*record.ChannelConnection, error)
	// ConnectionUpdate changes the state or the template sync outcome of
	// the connection of p.WorkspaceID on p.Channel if its Generation is
	// p.Generation (credentials replaced since are not marked by a
	// verdict on the old ones) and, when p.Status is set, it is not
	// disconnected (a late verdict never revives it); it reports whether
	// it changed it.
	// WorkspaceSetChannel with Connected false also sets the Status of
	// the workspace's connection on that channel (if any) to
	// ConnectionDisconnected, in the same transaction; the row is kept.
	ConnectionUpdate(ctx context.Context, p *ConnectionUpdateParams) (bool, error)

	// LeaseAcquire takes the named lease p.Name for p.Owner until p.Until
	// if it is free, expired at p.Now or already held by p.Owner, and
	// reports whether p.Owner holds it; atomic, so two owners never both
	// hold an unexpired lease. It coordinates work that must not run
	// twice at once across instances (the template sync of an account).
	LeaseAcquire(ctx context.Context, p *LeaseParams) (bool, error)

	// MessageCreate inserts m unless m.IdempotencyKey is non-empty and the
	// workspace already has a message with that key; then it returns the
	// existing message and created=false. Otherwise, when m.To opted out
	// of m.Channel in the workspace (SuppressionSet with OptedOut), it
	// inserts nothing and returns an *OptedOutError. The checks and the
	// insert are atomic: an accept is one statement, and an opt-out
	// committed before it is never missed. A new message has no History:
	// m.History is not stored.
	MessageCreate(ctx context.Context, m *record.Message) (stored *record.Message, created bool, err error)
	// MessageReceive inserts p.Message as MessageCreate does and, when it
	// inserts it, queues p.Event (when non-nil) for delivery to every
	// enabled webhook endpoint of the workspace that subscribes to its
	// type, in the same transaction: a message repeated under the same
	// idempotency key is returned with created=false and queues nothing.
	MessageReceive(ctx context.Context, p *MessageReceiveParams) (stored *record.Message, created bool, err error)
	// MessageGet returns one message of the workspace.
	MessageGet(ctx context.Context, workspaceID, id string) (*record.Message, error)
	// MessageGetByIdempotencyKey returns the message of the workspace
	// created with this (non-empty) idempotency key.
	MessageGetByIdempotencyKey(ctx context.Context, workspaceID, key string) (*record.Message, error)
	// MessageMarkRead sets the ReadAt of a message of the workspace to at
	// unless it is set already (the first mark wins), and returns the
	// message as stored. ErrNotFound when it does not exist. It changes
	// nothing else: not Status, UpdatedAt or History.
	MessageMarkRead(ctx context.Context, workspaceID, id string, at time.Time) (*record.Message, error)
	// MediaCreate inserts an uploaded media record. ErrConflict if the id
	// exists.
	MediaCreate(ctx context.Context, m *record.UploadedMedia) error
	// MediaGet returns one uploaded media record of the workspace
	// (expired ones too). ErrNotFound when the workspace has none with
	// that id.
	MediaGet(ctx context.Context, workspaceID, id string) (*record.UploadedMedia, error)
	// MessageUpdateStatuses makes the status changes of ps, in order (a
	// change sees the changes before it), in one transaction, and returns
	// one result per change, in the order of ps. Each change p sets the
	// status of a message if its current status is one of p.From,
	// atomically (a compare-and-set), clears its LeaseOwner, appends
	// {p.To, p.At} to its History, queues p.Event (when non-nil) for
	// delivery to every enabled webhook endpoint of the workspace that
	// subscribes to its type (record.WebhookEndpoint.Events), and has the message
	// after the change as its result's Message. If the current status is
	// not in p.From it changes and queues nothing, and its result holds
	// the unchanged message with Changed false. A change whose message
	// does not exist (in p.WorkspaceID) has ErrNotFound as its result's
	// Err and leaves the others alone. Any other failure is returned as
	// the error, and then none of the changes is stored. A single change
	// is a batch of one: this is the store's one status write.
	MessageUpdateStatuses(ctx context.Context, ps []*MessageStatusParams) ([]MessageStatusResult, error)

	// MessageClaim leases up to p.Limit queued messages whose DueAt is at
	// or before p.Now, oldest DueAt first: each gets LeaseOwner p.Owner,
	// DueAt p.Now+p.Lease, Attempts+1 and, when it has none,
	// UnconfirmedSince p.Now (the claim marks the message possibly sent),
	// atomically, so two claimers never hold the same message. It must use an index on the due queued
	// messages (never scan sent ones).
	MessageClaim(ctx context.Context, p *MessageClaimParams) ([]*record.Message, error)
	// MessageRelease puts a claimed message back for a later attempt: if
	// it is still queued and leased by p.Owner, DueAt becomes p.DueAt,
	// LastError p.LastError, LeaseOwner empty and UnconfirmedSince
	// p.Unconfirmed (nil clears it). It reports whether the message was
	// released.
	MessageRelease(ctx context.Context, p *MessageReleaseParams) (bool, error)
	// MessageGetByProviderID returns the message with this provider
	// message id, in any workspace.
	MessageGetByProviderID(ctx context.Context, providerMessageID string) (*record.Message, error)
	// MessageList returns up to p.Limit messages of p.WorkspaceID matching
	// every non-empty filter of p, newest first: by CreatedAt descending,
	// then ID descending. When p.BeforeID is non-empty the list starts
	// after (older than) the message at (p.BeforeCreatedAt, p.BeforeID)
	// in that order. It must use an index on (workspace, created_at, id),
	// so that a page costs the same at any depth when no filter is given.
	MessageList(ctx context.Context, p *MessageListParams) ([]*record.Message, error)
	// ConversationList returns up to p.Limit conversations of
	// p.WorkspaceID (only p.ID when it is non-empty), by LastMessageAt
	// descending then ID descending, each with its LastMessage; when
	// p.BeforeID is non-empty the list starts after the conversation at
	// (p.BeforeAt, p.BeforeID) in that order. MessageCreate keeps the
	// conversations in the same transaction as the message it inserts: a
	// conversation exists once a message of it does, its last message is
	// its newest by (CreatedAt, ID), and LastInboundAt is the newest
	// CreatedAt of its inbound messages. It must use an index on
	// (workspace, last message time, id), so that a page costs the same at
	// any depth.
	ConversationList(ctx context.Context, p *ConversationListParams) ([]*record.Conversation, error)
	// MessageHourlyCounts counts the messages of p.WorkspaceID created at
	// or after p.Since, by the UTC hour of their CreatedAt and their
	// current status, ordered by hour then status.
	MessageHourlyCounts(ctx context.Context, p *MessageCountParams) ([]*record.MessageCount, error)
	// MessageQueueStats describes the dispatch queue: the queued outbound
	// messages of p.WorkspaceID (every workspace when empty), how many of
	// them are due at p.Now (DueAt at or before it, leased ones excluded,
	// since a lease moves DueAt to its end) and the oldest DueAt among
	// those. It reads the index on the due queued messages (never scans
	// sent ones), so it is cheap enough to be read at every metrics scrape.
	MessageQueueStats(ctx context.Context, p *MessageQueueStatsParams) (*record.MessageQueueStats, error)

	// PendingReportSave keeps p.Report, a provider's status report about
	// a provider message id no message carries yet, unless the store
	// already holds p.Limit reports of that id received at or after
	// p.NotBefore; it reports whether the report was kept. It sets
	// p.Report.Seq, which is greater than the Seq of every report kept
	// before. The count and the insert are atomic, so concurrent saves
	// never keep more than p.Limit reports of one id. It also deletes
	// reports received before p.NotBefore, of any id, a bounded number per
	// call, so that expired reports do not pile up.
	PendingReportSave(ctx context.Context, p *PendingReportSaveParams) (kept bool, err error)
	// PendingReportTake deletes every report of the ids
	// p.ProviderMessageIDs and returns those received at or after
	// p.NotBefore, in Seq order, in one atomic step: two concurrent takes
	// never return the same report. The service takes the reports of the
	// ids a batch of status changes recorded with one call.
	PendingReportTake(ctx context.Context, p *PendingReportTakeParams) ([]*PendingReport, error)

	// WebhookQueueEvent queues p.Event for delivery to the one endpoint
	// p.EndpointID of p.Event.WorkspaceID, whatever events it subscribes
	// to, unless it is disabled or does not exist; it reports whether a
	// delivery was queued.
	WebhookQueueEvent(ctx context.Context, p *WebhookQueueParams) (queued bool, err error)

	// WebhookEndpointCreate inserts e. ErrNotFound if its workspace does
	// not exist.
	WebhookEndpointCreate(ctx context.Context, e *record.WebhookEndpoint) error
	// WebhookEndpointGet returns one endpoint of the workspace. ErrNotFound
	// if there is none.
	WebhookEndpointGet(ctx context.Context, workspaceID, id string) (*record.WebhookEndpoint, error)
	// WebhookEndpointList returns the endpoints of a workspace, oldest
	// first.
	WebhookEndpointList(ctx context.Context, workspaceID string) ([]*record.WebhookEndpoint, error)
	// WebhookEndpointDelete removes an endpoint of the workspace and all
	// its deliveries. ErrNotFound if there is none.
	WebhookEndpointDelete(ctx context.Context, workspaceID, id string) error
	// WebhookEndpointUpdate changes the fields of p that are set on an
	// endpoint of the workspace, atomically, and returns the endpoint as
	// changed. Deliveries claimed after it carry its new URL and secrets.
	// Disabling an enabled endpoint (p.Enabled false) sets DisabledAt to
	// p.At and DisabledReason to DisabledByOperator and fails its pending
	// deliveries ("endpoint disabled"); disabling a disabled endpoint
	// changes nothing; enabling clears DisabledAt and DisabledReason.
	// ErrNotFound if there is no such endpoint.
	WebhookEndpointUpdate(ctx context.Context, p *WebhookEndpointUpdateParams) (*record.WebhookEndpoint, error)
	// WebhookClaim leases up to p.Limit pending deliveries due at p.Now,
	// like MessageClaim. A delivery is claimable only when no earlier
	// (smaller Seq) delivery of the same endpoint and message is still
	// pending, so the events of one message reach an endpoint in order,
	// and never while its endpoint is disabled (DisabledAt set).
	WebhookClaim(ctx context.Context, p *WebhookClaimParams) ([]*record.WebhookDelivery, error)
	// WebhookRecord records the outcome of a delivery attempt by p.Owner:
	// delivered, failed for good, or pending again at p.DueAt. Finished
	// deliveries are kept (DeliveredAt set for a delivered one), then the
	// finished deliveries of the endpoint beyond its p.Keep newest (by
	// Seq) are deleted. With p.DisableEndpoint the endpoint is disabled
	// (DisabledReason DisabledGone) and its other pending deliveries are
	// failed. A record that no longer applies changes nothing and returns
	// nil, not an error: p.Owner's lease ended (another worker holds it),
	// or the delivery is unknown, already finished, or gone with its
	// deleted endpoint. The webhook sender logs every error of a record as
	// a failure, and none of these is one: the work is done or no longer
	// wanted.
	WebhookRecord(ctx context.Context, p *WebhookRecordParams) error
	// WebhookDeliveryList returns the deliveries of an endpoint of the
	// workspace whose Seq is below p.Before (no bound when 0), newest
	// first (Seq descending), at most p.Limit, without URL, secrets or
	// payload. ErrNotFound if the workspace has no such endpoint.
	WebhookDeliveryList(ctx context.Context, p *WebhookDeliveryListParams) ([]*record.WebhookDelivery, error)
	// WebhookRedeliver queues a delivery of an endpoint of the workspace
	// again, whatever its state: it becomes pending, due at p.Now, with no
	// lease and no DeliveredAt (Attempts, LastStatus and LastError are
	// kept). It returns the delivery as changed (without URL, secrets or
	// payload). ErrConflict if the delivery is leased (pending, with a
	// LeaseOwner and a DueAt after p.Now: an attempt is under way);
	// ErrNotFound if there is no such delivery.
	WebhookRedeliver(ctx context.Context, p *WebhookRedeliverParams) (*record.WebhookDelivery, error)
	// WebhookRecordTest records a test event sent to an endpoint of the
	// workspace (messaging.Webhooks.Test) as a finished delivery of
	// it, whether the endpoint is enabled or not: Test set, p.State
	// (DeliveryDelivered or DeliveryFailed), one attempt at p.At
	// (DeliveredAt p.At when delivered), the event's payload kept for a
	// redelivery. It is listed and pruned like any finished delivery (the
	// endpoint's p.Keep newest are kept). It returns the delivery (without
	// URL, secrets or payload). ErrNotFound if there is no such endpoint.
	WebhookRecordTest(ctx context.Context, p *WebhookRecordTestParams) (*record.WebhookDelivery, error)

	// SuppressionSet records p.Suppression as the opt-out state of its
	// recipient on its channel, unless the stored state of that
	// (workspace, channel, recipient) is the same OptedOut or changed after
	// p.Suppression.UpdatedAt (a stale report); no stored state counts as
	// not opted out. When it changes the state it queues p.Event (when
	// non-nil) for the workspace's subscribing webhook endpoints in the
	// same transaction, and reports changed=true.
	SuppressionSet(ctx context.Context, p *SuppressionSetParams) (changed bool, err error)
	// SuppressionList returns the stored states of p.Recipients in
	// p.WorkspaceID, on every channel, in any order.
	SuppressionList(ctx context.Context, p *SuppressionListParams) ([]*record.Suppression, error)

	// AuditAppend stores e, a management change of a workspace, and sets
	// e.Seq greater than the Seq of every event stored before.
	AuditAppend(ctx context.Context, e *record.AuditEvent) error
	// AuditList returns the events of p.WorkspaceID whose Seq is below
	// p.Before (no bound when 0), newest first (Seq descending), at most
	// p.Limit.
	AuditList(ctx context.Context, p *AuditListParams) ([]*record.AuditEvent, error)

	// SessionCreate stores s, a signed-in dashboard session, under its
	// Hash (the hex SHA-256 of its token; the token itself never reaches
	// the store). A nil Workspaces or SMSAccounts is stored as empty.
	// ErrConflict if a session with the same Hash or ID exists.
	SessionCreate(ctx context.Context, s *StoredSession) error
	// SessionGet returns the session stored under hash, expired or not
	// (the Service enforces expiry), with a non-nil Workspaces and
	// SMSAccounts.
	// ErrNotFound if there is none.
	SessionGet(ctx context.Context, hash string) (*StoredSession, error)
	// SessionDelete deletes the session stored under hash. Deleting a
	// session that does not exist (or no longer exists) is not an error.
	SessionDelete(ctx context.Context, hash string) error
	// SessionSweep deletes at most p.Limit sessions whose ExpiresAt is
	// before p.Before, and returns how many it deleted. Sessions expiring
	// at or after p.Before are kept.
	SessionSweep(ctx context.Context, p *SessionSweepParams) (int, error)
	// SessionDeleteAll deletes every session, expired or not, and returns
	// how many it deleted.
	SessionDeleteAll(ctx context.Context) (int, error)
	// Ping answers a trivial query within ctx and reports an error when
	// the store cannot serve: its database does not answer, or its schema
	// is not at the version this code migrates to (another program
	// migrated it further, or back). Readiness probes call it.
	Ping(ctx context.Context) error

	// FallbackStore keeps the SMS fallbacks of template sends.
	FallbackStore

	// Close releases the store's resources.
	Close() error
}

// StoredSession is a Session as a Store keeps it: the session and the
// SHA-256 of its token, hex-encoded, under which it is found.
type StoredSession struct {
	record.Session
	// Hash is the lower-case hex SHA-256 of the session's token.
	Hash string
	// Binding is the stored form of messaging.SessionParams.Binding (an HMAC of it
	// keyed by the token, hex); empty for a session that is not bound.
	Binding string
}

// SessionSweepParams are the arguments of Store.SessionSweep.
type SessionSweepParams struct {
	// Before is the time before which an expired session is deleted.
	Before time.Time
	// Limit is the most sessions deleted by one call.
	Limit int
}

// MessageListParams are the arguments of Store.MessageList. An empty
// string or zero time matches every message.
type MessageListParams struct {
	WorkspaceID    string
	Direction      string
	Status         string
	Channel        string
	To             string
	ConversationID string
	// ConversationIDs, when not empty, keeps the messages of these
	// conversations only. The service sets it with To (and no
	// ConversationID): the conversations of To on each channel the query
	// allows, so that a store reads the page through its index of
	// conversations instead of scanning the workspace's messages.
	ConversationIDs []string
	// CreatedAfter keeps messages with CreatedAt at or after it.
	CreatedAfter time.Time
	// CreatedBefore keeps messages with CreatedAt before it.
	CreatedBefore time.Time
	// BeforeCreatedAt and BeforeID, when BeforeID is non-empty, keep the
	// messages that come after that position in the listing order.
	BeforeCreatedAt time.Time
	BeforeID        string
	Limit           int
}

// ListedConversations returns the conversations p keeps, each once, for a
// store's MessageList: ConversationID, else ConversationIDs (none of them:
// the messages of every conversation). none is true when no message can
// match: ConversationID is set and not among ConversationIDs.
func ListedConversations(p *MessageListParams) (convs []string, none bool) {
	if p.ConversationID != "" {
		if len(p.ConversationIDs) > 0 && !slices.Contains(p.ConversationIDs, p.ConversationID) {
			return nil, true
		}
		return []string{p.ConversationID}, false
	}
	convs = slices.Clone(p.ConversationIDs)
	slices.Sort(convs)
	return slices.Compact(convs), false
}

// MessageReceiveParams are the arguments of Store.MessageReceive.
type MessageReceiveParams struct {
	Message *record.Message
	// Event, when non-nil, is queued if the message is inserted.
	Event *EventRecord
}

// MessageCountParams are the arguments of Store.MessageHourlyCounts.
type MessageCountParams struct {
	WorkspaceID string
	Since       time.Time
}

// MessageQueueStatsParams are the arguments of Store.MessageQueueStats.
type MessageQueueStatsParams struct {
	// WorkspaceID restricts the figures to one workspace; empty means
	// every workspace.
	WorkspaceID string
	// Now is the time the due messages are counted at.
	Now time.Time
}

// MessageClaimParams are the arguments of Store.MessageClaim.
type MessageClaimParams struct {
	Owner string
	Now   time.Time
	Lease time.Duration
	Limit int
}

// MessageReleaseParams are the arguments of Store.MessageRelease.
type MessageReleaseParams struct {
	WorkspaceID string
	ID          string
	Owner       string
	DueAt       time.Time
	LastError   string
	// Unconfirmed is the message's UnconfirmedSince after the release:
	// nil when the outcome of its hand-over is known (the provider refused
	// it, or it was not handed over), else the start of the hand-over
	// whose outcome is unknown.
	Unconfirmed *time.Time
	// Untried reports that the claim being released handed nothing over
	// (the message waited for its sender or for a confirmation): the
	// claim's Attempts+1 is taken back.
	Untried bool
}

// EventRecord is an event as stored for webhook delivery: its payload is
// the exact JSON body sent to every endpoint.
type EventRecord struct {
	ID          string
	WorkspaceID string
	MessageID   string
	Type        string
	Payload     []byte
	CreatedAt   time.Time
	// TraceParent is the trace context (record.Message.TraceParent) of the
	// message a status change is about, empty for other events and for a
	// message accepted with no trace. Every delivery of the event keeps it
	// (record.WebhookDelivery.TraceParent); it is not part of the payload.
	TraceParent string
}

// PendingReport is a provider's status report kept by the store until the
// message it is about is known by its provider message id (see
// messaging.Service.ApplyProviderStatus).
type PendingReport struct {
	// Seq orders the reports; the store sets it when it keeps a report.
	Seq               int64
	ProviderMessageID string
	// Status is sent, delivered, read or failed.
	Status string
	// ProviderCode and ProviderText describe a failure.
	ProviderCode string
	ProviderText string
	// ReceivedAt is when the report arrived; it expires with it.
	ReceivedAt time.Time
}

// PendingReportSaveParams are the arguments of Store.PendingReportSave.
type PendingReportSaveParams struct {
	Report *PendingReport
	// NotBefore is the oldest ReceivedAt still kept: older reports have
	// expired.
	NotBefore time.Time
	// Limit is the most reports of one provider message id kept.
	Limit int
}

// PendingReportTakeParams are the arguments of Store.PendingReportTake.
type PendingReportTakeParams struct {
	// ProviderMessageIDs are the ids whose reports are taken.
	ProviderMessageIDs []string
	// NotBefore is the oldest ReceivedAt returned: older reports have
	// expired, and are deleted without being returned.
	NotBefore time.Time
}

// WebhookEndpointUpdateParams are the arguments of
// Store.WebhookEndpointUpdate. Nil fields are left unchanged.
type WebhookEndpointUpdateParams struct {
	WorkspaceID string
	ID          string
	// SecretSealed, when non-nil, replaces the secret. With
	// PreviousUntil non-nil the replaced secret becomes the previous
	// secret until then; otherwise the previous secret is cleared.
	SecretSealed  []byte
	PreviousUntil *time.Time
	URL           *string
	// Events are sorted; empty means every type.
	Events      *[]string
	Description *string
	// Enabled enables (true) or disables (false) the endpoint; see
	// Store.WebhookEndpointUpdate.
	Enabled *bool
	// At is the DisabledAt of an endpoint disabled by this update.
	At time.Time
}

// WebhookQueueParams are the arguments of Store.WebhookQueueEvent.
type WebhookQueueParams struct {
	EndpointID string
	Event      *EventRecord
}

// WebhookClaimParams are the arguments of Store.WebhookClaim.
type WebhookClaimParams struct {
	Owner string
	Now   time.Time
	Lease time.Duration
	Limit int
}

// WebhookRecordParams are the arguments of Store.WebhookRecord.
type WebhookRecordParams struct {
	ID    int64
	Owner string
	// State is DeliveryDelivered, DeliveryFailed or DeliveryPending (retry
	// at DueAt).
	State           string
	DueAt           time.Time
	LastStatus      int
	LastError       string
	DisableEndpoint bool
	At              time.Time
	// Keep is how many finished deliveries of the endpoint are kept (the
	// newest); at least 1.
	Keep int
}

// WebhookDeliveryListParams are the arguments of Store.WebhookDeliveryList.
type WebhookDeliveryListParams struct {
	WorkspaceID string
	EndpointID  string
	// Before bounds the Seq of the deliveries returned; 0: no bound.
	Before int64
	Limit  int
}

// WebhookRecordTestParams are the arguments of Store.WebhookRecordTest.
type WebhookRecordTestParams struct {
	EndpointID string
	// Event is the webhook.test event sent, of the endpoint's workspace.
	Event *EventRecord
	// State is DeliveryDelivered or DeliveryFailed.
	State      string
	LastStatus int
	LastError  string
	// At is when the answer (or its absence) was recorded.
	At time.Time
	// Keep is how many finished deliveries of the endpoint are kept (the
	// newest); at least 1.
	Keep int
}

// WebhookRedeliverParams are the arguments of Store.WebhookRedeliver.
type WebhookRedeliverParams struct {
	WorkspaceID string
	EndpointID  string
	ID          int64
	Now         time.Time
}

// APIKeyUpdateParams are the arguments of Store.APIKeyUpdate.
type APIKeyUpdateParams struct {
	WorkspaceID string
	ID          string
	// Scopes are sorted and without duplicates.
	Scopes []string
	// ExpiresAt is in UTC; nil means the key does not expire.
	ExpiresAt *time.Time
}

// APIKeyTouchParams are the arguments of Store.APIKeyTouch.
type APIKeyTouchParams struct {
	WorkspaceID string
	ID          string
	// At is when the key was used, in UTC.
	At time.Time
}

// APIKeyRevokeParams are the arguments of Store.APIKeyRevoke.
type APIKeyRevokeParams struct {
	WorkspaceID string
	ID          string
	// At is the RevokedAt of a key not revoked yet.
	At time.Time
}

// ChannelParams are the arguments of Store.WorkspaceSetChannel.
type ChannelParams struct {
	WorkspaceID string
	Channel     string
	Connected   bool
	At          time.Time
}

// ContactReplaceParams are the arguments of Store.ContactUpdate: a
// replacement of a stored contact conditional on its version.
type ContactReplaceParams struct {
	// Contact is the contact as it is to be stored; its Version is
	// PrevVersion+1.
	Contact *record.Contact
	// PrevVersion is the Version the stored contact must still have.
	PrevVersion int64
}

// ContactListParams are the arguments of Store.ContactList.
type ContactListParams struct {
	WorkspaceID string
	// Search, when non-empty, is already folded with SearchFold. A contact
	// matches when SearchFold of its FirstName, LastName, FullName or Email
	// starts with Search, or when PhoneDigits is non-empty and the digits of
	// its Phone start with PhoneDigits.
	Search string
	// PhoneDigits is the query reduced to digits when it looks like a phone
	// number (see ContactSearchQuery), else empty.
	PhoneDigits string
	Offset      int
	Limit       int
}

// TemplateGetByNameParams are the arguments of Store.TemplateGetByName.
type TemplateGetByNameParams struct {
	WorkspaceID string
	Name        string
	Language    string
}

// TemplateListParams are the arguments of Store.TemplateList. Empty fields
// do not filter.
type TemplateListParams struct {
	WorkspaceID string
	Status      string
	Category    string
	Language    string
}

// TemplateStatusParams are the arguments of Store.TemplateSetStatus.
type TemplateStatusParams struct {
	WorkspaceID string
	ID          string
	From        []string
	To          string
	Reason      string
	At          time.Time
}

// TemplateUpdateParams are the arguments of Store.TemplateUpdate.
type TemplateUpdateParams struct {
	// Template is the template as it is to be stored.
	Template *record.Template
	// From lists the states the stored template may be in.
	From []string
}

// ConnectionListParams are the arguments of Store.ConnectionList. Empty
// fields do not filter.
type ConnectionListParams struct {
	WorkspaceID string
	Channel     string
	AccountID   string
	WABAID      string
	Status      string
}

// ConnectionVerifiedParams are the arguments of Store.ConnectionVerified.
type ConnectionVerifiedParams struct {
	WorkspaceID string
	Channel     string
	// Generation is the Generation the connection must still have.
	Generation int64
	// DisplayPhoneNumber, when non-empty, is the number as the provider
	// reported it.
	DisplayPhoneNumber string
	// FromStatus, when non-empty, is the status the connection must still
	// have (else ErrStale), so that two verifications of one state
	// announce one change.
	FromStatus string
	// QualityRating and MessagingTier, each when non-empty, are the
	// account's quality rating and messaging tier as the provider reported
	// them: they replace the connection's, and QualityChangedAt
	// (TierChangedAt) becomes At when that changes the value.
	QualityRating string
	MessagingTier string
	At            time.Time
}

// ConnectionUpdateParams are the arguments of Store.ConnectionUpdate.
type ConnectionUpdateParams struct {
	WorkspaceID string
	Channel     string
	// Generation is the Generation the connection must still have.
	Generation int64
	// Status and StatusReason, when Status is non-empty, replace the
	// connection's.
	Status       string
	StatusReason string
	// FromStatus and FromReason, when FromStatus is non-empty, are the
	// status and reason the connection must still have: a verdict read
	// from an older state changes nothing, so that two verifications of
	// one state announce one change.
	FromStatus string
	FromReason string
	// SyncedAt, when non-nil, is a successful template sync: it becomes
	// TemplatesSyncedAt and clears TemplateSyncError.
	SyncedAt *time.Time
	// SyncError, when non-empty, is a failed template sync: it becomes
	// TemplateSyncError (TemplatesSyncedAt is kept).
	SyncError string
	// Throughput, when positive, replaces the connection's Throughput.
	Throughput int
	// Health, when non-nil, replaces the connection's quality rating and
	// messaging tier (a provider's report).
	Health *ConnectionHealth
	At     time.Time
}

// ConnectionHealth is a change of a connection's quality rating and
// messaging tier (ConnectionUpdateParams.Health).
type ConnectionHealth struct {
	// QualityRating and MessagingTier, each when non-empty, replace the
	// connection's; QualityChangedAt (TierChangedAt) becomes the update's
	// At when that changes the value.
	QualityRating string
	MessagingTier string
	// FromQualityRating and FromMessagingTier are the values the
	// connection must still have (else nothing changes and the update
	// reports false), so that two reports of one change announce it once.
	FromQualityRating string
	FromMessagingTier string
}

// AuditListParams are the arguments of Store.AuditList.
type AuditListParams struct {
	WorkspaceID string
	Before      int64
	Limit       int
}

// LeaseParams are the arguments of Store.LeaseAcquire.
type LeaseParams struct {
	Name  string
	Owner string
	Now   time.Time
	Until time.Time
}

// MessageStatusParams are one change of Store.MessageUpdateStatuses.
type MessageStatusParams struct {
	WorkspaceID string
	ID          string
	From        []string
	To          string
	// Unclaimed, when set, further guards the change: it applies only
	// while the message is not leased (LeaseOwner empty) and no hand-over
	// of it is unconfirmed (UnconfirmedSince nil), checked atomically with
	// its status, so that of a cancel and a concurrent MessageClaim one
	// wins, never both. Otherwise the change is not made (Changed false).
	Unclaimed bool
	// FailureReason is set when To is StatusFailed.
	FailureReason string
	// ProviderMessageID, when non-empty, is recorded on the message. The
	// change also clears the message's UnconfirmedSince and LeaseOwner.
	ProviderMessageID string
	At                time.Time
	// Event, when non-nil, is the event of the change: when the status
	// changes it is queued, in the same transaction, for delivery to every
	// enabled webhook endpoint of the workspace that subscribes to its
	// Type.
	Event *EventRecord
}

// MessageStatusResult is the outcome of one change of
// Store.MessageUpdateStatuses.
type MessageStatusResult struct {
	// Message is the message after the change, or as it is when its
	// status was not in From (nil with Err).
	Message *record.Message
	// Changed reports whether the status changed.
	Changed bool
	// Queued reports whether the change queued deliveries of its Event:
	// the workspace has an enabled endpoint subscribed to its type. The
	// service wakes its webhook sender only then.
	Queued bool
	// Err is ErrNotFound when the message does not exist, else nil.
	Err error
}

// WorkspaceSettingsParams are the arguments of Store.WorkspaceSetSettings.
type WorkspaceSettingsParams struct {
	WorkspaceID string
	// OutsideWindow, when non-nil, is "" (the default policy, provider) or
	// OutsideWindowReject.
	OutsideWindow *string
	// UnconfirmedSends, when non-nil, is "" (the default policy, resend)
	// or UnconfirmedFail.
	UnconfirmedSends *string
	// OptOutKeywords, when non-nil, replace the workspace's opt-out
	// keywords (record.WorkspaceInfo.OptOutKeywords; empty: the defaults).
	OptOutKeywords *[]string
	// OptInKeywords, when non-nil, replace its opt-in keywords.
	OptInKeywords *[]string
	// Expect, when non-nil, makes the change a compare-and-set: it is made
	// only while the workspace's stored keyword lists are still these
	// (empty or nil: the defaults), else the store returns ErrConflict and
	// changes nothing. The service sets it to the lists it checked the new
	// ones against, so two concurrent changes cannot store a keyword in
	// both lists.
	Expect *record.WorkspaceKeywords
}

// WorkspaceListParams are the arguments of Store.WorkspaceList.
type WorkspaceListParams struct {
	// After is the id the page starts after; empty means from the first.
	After string
	Limit int
}
