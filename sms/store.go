package sms

import (
	"context"
	"time"

	"github.com/ujumbe/messaging/store/driver"
)

// Statuses of a stored SMS.
const (
	// StatusScheduled: accepted with a future timeToSend, waiting until due.
	StatusScheduled = "scheduled"
	// StatusQueued: accepted for immediate sending (or waiting for a retry).
	StatusQueued = "queued"
	// StatusSending: claimed by a scheduler under a lease, being handed to
	// the gateway.
	StatusSending = "sending"
	// StatusSent: accepted by the gateway; the delivery report follows.
	StatusSent = "sent"
	// StatusFailed: refused by the gateway, or out of attempts; its credit
	// was refunded.
	StatusFailed = "failed"
)

// Account is a stored SMS account. The apikey is never stored: KeyHash is
// its SHA-256.
type Account struct {
	PartnerID string
	KeyHash   []byte
	// Senders are the approved sender ids (shortcodes), sorted.
	Senders []string
	// Credit is the balance.
	Credit Credit
	// TimeZone is an IANA time zone name, for timeToSend and report times.
	TimeZone string
	// CostPerSegment is what one SMS part costs.
	CostPerSegment Credit
	// CallbackEndpointID is the webhook endpoint (in the workspace of
	// CallbackOptions.WorkspaceID) that receives the account's
	// sms.delivery_report events; empty when none is registered.
	CallbackEndpointID string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Message is a stored SMS.
type Message struct {
	// ID is the service's id, "sms_<32 hex digits>".
	ID string
	// Number is the provider message id the API returns (providerMessageId,
	// messageid) and takes (delivery-report messageID). The Store assigns it
	// in SMSAccept: positive, unique across accounts.
	Number    int64
	PartnerID string
	// Mobile is the recipient: international format, digits only.
	Mobile string
	Text   string
	// Sender is the approved sender id (shortcode).
	Sender string
	// ClientSMSID is the client's reference of a bulk item, as text.
	ClientSMSID string
	Encoding    string
	Segments    int
	// Cost is what was debited for the message.
	Cost   Credit
	Status string
	// DueAt is when the message is next eligible to be claimed: the send
	// time while scheduled or queued, the end of the lease while sending.
	DueAt time.Time
	// Attempts counts the claims.
	Attempts int
	// ClaimToken identifies the claim that owns a sending message.
	ClaimToken string
	// GatewayMessageID is the upstream gateway's id once it accepted the
	// message; NetworkID is the network the gateway reported.
	GatewayMessageID string
	NetworkID        string
	// FailureReason tells why the last attempt failed.
	FailureReason string
	// UnconfirmedSince is the mark of a hand-over whose outcome is
	// unknown: when a claim marked the message as possibly handed over
	// (SMSClaimDue sets it on a message that has none), kept while the
	// upstream's answer is unknown, cleared when an outcome is recorded
	// or the scheduler releases the message without handing it over. Nil
	// when there is none. In the messages SMSClaimDue returns it is the
	// mark as it was before that claim.
	UnconfirmedSince *time.Time
	// Report is the last delivery report, nil when there is none.
	Report    *Report
	SentAt    *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Report is a delivery report.
type Report struct {
	// Status is the delivery-status number, see DeliveryStatus.
	Status int
	// Description is the delivery-description, for example
	// DeliveredToTerminal.
	Description string
	// NetworkID is the delivery-networkid.
	NetworkID string
	// Time is when the state was reached (zero when unknown).
	Time time.Time
}

// Store is the persistence the SMS service runs on. It is defined here, by
// its consumer; store/memstore and store/sqlitestore implement it and pass
// the conformance suite storetest.RunSMS.
//
// Stores return messaging.ErrNotFound for a missing record (a message of
// another account is missing), messaging.ErrConflict for a duplicate,
// messaging.ErrStale for a lost claim and ErrInsufficientCredit as a
// per-message result of SMSAccept. Stores enforce atomicity; the SMS type
// validates everything before calling them.
type Store interface {
	// SMSAccountCreate inserts a. ErrConflict if the partnerID exists.
	SMSAccountCreate(ctx context.Context, a *Account) error
	// SMSAccountGet returns the account of partnerID.
	SMSAccountGet(ctx context.Context, partnerID string) (*Account, error)
	// SMSAccountKey returns the KeyHash of the account partnerID, and reads
	// nothing else: authentication reads it before anything, so that a
	// wrong apikey costs the same work whether or not partnerID exists.
	SMSAccountKey(ctx context.Context, partnerID string) ([]byte, error)
	// SMSAccountUpdate applies p (approves senders, sets the time zone or
	// the cost per segment) atomically and returns the account after it.
	SMSAccountUpdate(ctx context.Context, p *AccountUpdate) (*Account, error)
	// SMSCreditAdd adds p.Amount (positive) to the credit of the account
	// p.PartnerID and records the top-up in its ledger, in one
	// transaction, and returns the ledger entry (its Balance is the new
	// credit). With a non-empty p.Reference, when the account's ledger
	// holds a top-up of that reference already, it changes nothing and
	// returns that entry as prev (and a nil entry), whatever its amount:
	// comparing is the caller's business; concurrent calls with one
	// reference never both add. ErrCreditOverflow, changing nothing, when
	// the credit would exceed p.Max.
	SMSCreditAdd(ctx context.Context, p *CreditAddParams) (e *LedgerEntry, prev *LedgerEntry, err error)
	// SMSLedger returns the ledger entries of the account p.PartnerID
	// whose Seq is below p.Before (0: no bound), newest (highest Seq)
	// first, at most p.Limit. An unknown account has no entries.
	SMSLedger(ctx context.Context, p *LedgerParams) ([]*LedgerEntry, error)
	// SMSAccountList returns the accounts whose PartnerID sorts after
	// p.After (empty: from the first), in PartnerID order (byte-wise), at
	// most p.Limit, each with its sorted senders.
	SMSAccountList(ctx context.Context, p *AccountListParams) ([]*Account, error)
	// SMSMessageList returns the messages of the account p.PartnerID whose
	// Number is below p.Before (0: no bound), highest Number (the newest)
	// first, at most p.Limit, each with its last delivery report. An
	// unknown account has none.
	SMSMessageList(ctx context.Context, p *MessageListParams) ([]*Message, error)

	// SMSAccept stores msgs in one transaction, in order. For each message
	// it debits Cost from its account if the credit covers it (an atomic
	// conditional debit: credit never goes negative, whatever runs
	// concurrently) and inserts the message with a new Number. A message the
	// credit cannot cover gets ErrInsufficientCredit in its result and takes
	// nothing; the others go on. An error for the whole call (for example
	// ErrNotFound for a missing account) stores nothing.
	SMSAccept(ctx context.Context, msgs []*Message) ([]AcceptResult, error)
	// SMSAcceptIdempotent is SMSAccept under an idempotency key, in one
	// transaction. With rec = p.Record: unless the account rec.PartnerID
	// holds a live record of rec.Key (one whose ExpiresAt is after
	// rec.CreatedAt), it accepts p.Messages as SMSAccept does and stores
	// rec with Results set to their results, replacing an expired record
	// of the key, and returns the results and a nil prev. When the key has
	// a live record it changes nothing and returns that record as prev
	// (and nil results), whatever its RequestHash: comparing is the
	// caller's business. The record, the debits and the messages are
	// stored together or not at all (an error for the whole call, for
	// example ErrNotFound for a missing account, stores none of them).
	// Concurrent calls for the same account and key never both accept:
	// one waits for the other's transaction to end and then finds its
	// record. The messages of p.Messages belong to rec.PartnerID. Stores
	// may delete records once they expired.
	SMSAcceptIdempotent(ctx context.Context, p *AcceptIdempotentParams) (res []AcceptResult, prev *Idempotency, err error)
	// SMSIdempotencyGet returns the record of p.Key in the account
	// p.PartnerID if it is live at p.Now (its ExpiresAt is after p.Now);
	// ErrNotFound if there is none.
	SMSIdempotencyGet(ctx context.Context, p *IdempotencyGetParams) (*Idempotency, error)
	// SMSMessageGet returns the message Number of the account partnerID.
	SMSMessageGet(ctx context.Context, partnerID string, number int64) (*Message, error)
	// SMSMessageByGatewayID returns the message the upstream gateway
	// accepted under gatewayMessageID (its GatewayMessageID), whatever its
	// account; the one with the highest Number if the upstream gave the
	// id twice. ErrNotFound if there is none or gatewayMessageID is
	// empty. It uses an index on the gateway's id.
	SMSMessageByGatewayID(ctx context.Context, gatewayMessageID string) (*Message, error)

	// SMSClaimDue claims up to p.Limit messages whose status is scheduled,
	// queued or sending and whose DueAt is at or before p.Now, oldest DueAt
	// first: each is set to sending with DueAt p.LeaseUntil, ClaimToken
	// p.Token and one more attempt, atomically, so that concurrent claimers
	// never get the same message. A sending message whose lease ran out is
	// claimed again. It uses an index on the due time.
	//
	// The claim durably marks each claimed message as possibly handed
	// over: UnconfirmedSince is set to p.Now when it is nil, or when it
	// is at or before p.RenewMarksBefore (a mark whose confirmation
	// window ended); an other mark is kept. Each returned message carries
	// the mark as it was before the claim (nil: no earlier claim may have
	// handed it over without its outcome being recorded), everything
	// else as stored after the claim.
	SMSClaimDue(ctx context.Context, p *ClaimParams) ([]*Message, error)
	// SMSQueueStats describes the scheduler's queue at p.Now: the
	// messages not handed over yet (scheduled, queued or sending), how
	// many of them are due (DueAt at or before p.Now, as SMSClaimDue
	// sees them) and the oldest DueAt among those. It reads the index of
	// the pending messages only, so it is cheap enough for every metrics
	// scrape.
	SMSQueueStats(ctx context.Context, p *QueueStatsParams) (*QueueStats, error)
	// SMSComplete records the outcomes of claimed messages in one
	// transaction. An outcome whose message is no longer sending under its
	// token gets messaging.ErrStale in its slot and changes nothing. Each
	// outcome clears the message's UnconfirmedSince, except a queued one
	// with Unconfirmed set, which keeps it.
	SMSComplete(ctx context.Context, cs []*Completion) ([]error, error)
	// SMSConfirm records the hand-over of the message p.Number (whatever
	// its account), whose outcome was unknown, as accepted by the
	// upstream under p.GatewayMessageID, in one atomic step: when the
	// message has an UnconfirmedSince mark and is queued or sending, it
	// becomes sent as SMSComplete records StatusSent (GatewayMessageID,
	// NetworkID when p.NetworkID is not empty, SentAt p.At, the failure
	// reason and the claim token cleared) and its mark is cleared; it
	// returns the message after the change and true. Otherwise it changes
	// nothing and returns the message as stored and false. ErrNotFound
	// when there is no message p.Number.
	SMSConfirm(ctx context.Context, p *ConfirmParams) (m *Message, confirmed bool, err error)
	// SMSReportSave stores p.Report as the delivery report of message
	// p.Number of the account p.PartnerID, unless the stored report is
	// final (its Description is one of FinalDeliveryStates): a final
	// report is never replaced, and saving over one changes nothing and
	// returns nil. The check and the write are one atomic step.
	// ErrNotFound if the account has no such message.
	//
	// When p.Push is set (SMS sets it only on an OutboxStore, see there)
	// and the report is stored, p.Push.Event is queued in the same
	// transaction for the webhook endpoint p.Push.EndpointID of the
	// workspace p.Push.Event.WorkspaceID, as
	// driver.Store.WebhookQueueEvent queues one (nothing when the
	// endpoint does not exist or is disabled); pushed tells whether it
	// was. So the report and its push are stored together or not at all,
	// and the push is queued once, by the save that replaced a report that
	// was not final.
	SMSReportSave(ctx context.Context, p *ReportSaveParams) (pushed bool, err error)
}

// AccountUpdate are the arguments of Store.SMSAccountUpdate. Nil and empty
// fields change nothing.
type AccountUpdate struct {
	PartnerID string
	// AddSenders are approved; approving an approved sender does nothing.
	AddSenders     []string
	TimeZone       *string
	CostPerSegment *Credit
	// CallbackEndpointID, when non-nil, replaces the account's callback
	// endpoint id ("" removes it).
	CallbackEndpointID *string
	At                 time.Time
}

// CreditAddParams are the arguments of Store.SMSCreditAdd.
type CreditAddParams struct {
	PartnerID string
	// Amount is positive.
	Amount Credit
	// Reference identifies the top-up for idempotency; empty means none.
	Reference string
	// Max is the largest credit the account may reach.
	Max Credit
	// At is the account's UpdatedAt after the change and the entry's At.
	At time.Time
}

// LedgerParams are the arguments of Store.SMSLedger.
type LedgerParams struct {
	PartnerID string
	// Before bounds the entries' Seq (exclusive); 0 means no bound.
	Before int64
	Limit  int
}

// AccountListParams are the arguments of Store.SMSAccountList.
type AccountListParams struct {
	// After bounds the PartnerIDs (exclusive); empty means no bound.
	After string
	Limit int
}

// MessageListParams are the arguments of Store.SMSMessageList.
type MessageListParams struct {
	PartnerID string
	// Before bounds the messages' Number (exclusive); 0 means no bound.
	Before int64
	Limit  int
}

// Kinds of ledger entries.
const (
	// LedgerOpening is the credit an account was created with (recorded
	// when it is not zero).
	LedgerOpening = "opening"
	// LedgerTopUp is credit added (SMS.TopUp).
	LedgerTopUp = "top_up"
	// LedgerCharge is the cost of an accepted message, debited when it was
	// accepted.
	LedgerCharge = "charge"
	// LedgerRefund is the cost of a failed message, given back.
	LedgerRefund = "refund"
)

// LedgerEntry is one change of an account's credit. Stores record it in
// the transaction that changes the credit: the opening credit in
// SMSAccountCreate, a top-up in SMSCreditAdd, one charge per accepted
// message in SMSAccept and SMSAcceptIdempotent, one refund per failed
// message in SMSComplete. The amounts of an account's entries add up to
// its credit.
type LedgerEntry struct {
	// Seq orders the entries of the store; the store sets it.
	Seq       int64
	PartnerID string
	// Kind is one of LedgerOpening, LedgerTopUp, LedgerCharge and
	// LedgerRefund.
	Kind string
	// Amount is the change: positive for an opening, a top-up or a
	// refund, negative for a charge.
	Amount Credit
	// Balance is the credit after the change.
	Balance Credit
	// Reference is a top-up's reference (empty when it had none).
	Reference string
	// MessageNumber is the Number of a charged or refunded message, 0
	// otherwise.
	MessageNumber int64
	At            time.Time
}

// AcceptIdempotentParams are the arguments of Store.SMSAcceptIdempotent.
type AcceptIdempotentParams struct {
	// Record is the idempotency record to keep; the store sets its
	// Results.
	Record *Idempotency
	// Messages are the messages to accept, all of Record.PartnerID.
	Messages []*Message
}

// IdempotencyGetParams are the arguments of Store.SMSIdempotencyGet.
type IdempotencyGetParams struct {
	PartnerID string
	Key       string
	// Now is the time at which the record must be live.
	Now time.Time
}

// ReportSaveParams are the arguments of Store.SMSReportSave.
type ReportSaveParams struct {
	PartnerID string
	Number    int64
	Report    *Report
	// Push, when set, is the event queued with the report (see
	// Store.SMSReportSave); it is set only for an OutboxStore.
	Push *driver.WebhookQueueParams
}

// AcceptResult is the outcome of one message of Store.SMSAccept.
type AcceptResult struct {
	// Number is the new message's number, 0 when Err is set.
	Number int64
	// Balance is the account's credit after the debit.
	Balance Credit
	// Err is ErrInsufficientCredit or nil.
	Err error
}

// Idempotency is the record of a request made with an idempotency key:
// what it was and what it was answered, kept by Store.SMSAcceptIdempotent
// in the transaction that accepted the request's messages.
type Idempotency struct {
	// PartnerID and Key identify the record: keys are scoped to the account.
	PartnerID string
	Key       string
	// RequestHash identifies the request; SMS compares a repeat's with it.
	RequestHash []byte
	// Answer is the answer as SMS encodes it, but for what the store
	// decides (Results); stores keep it as it is.
	Answer []byte
	// Results are the results of the request's messages, in order: the
	// store sets them as it accepts the messages.
	Results []AcceptResult
	// CreatedAt is when the request was accepted; ExpiresAt is when the
	// record stops counting, after which the key may be used again.
	CreatedAt time.Time
	ExpiresAt time.Time
}

// ClaimParams are the arguments of Store.SMSClaimDue.
type ClaimParams struct {
	Now        time.Time
	LeaseUntil time.Time
	Token      string
	Limit      int
	// RenewMarksBefore: a claimed message's UnconfirmedSince at or
	// before it is replaced by Now (zero: no mark is replaced).
	RenewMarksBefore time.Time
}

// ConfirmParams are the arguments of Store.SMSConfirm.
type ConfirmParams struct {
	Number           int64
	GatewayMessageID string
	// NetworkID, when not empty, replaces the message's network id.
	NetworkID string
	// At is the message's SentAt and UpdatedAt.
	At time.Time
}

// Completion is the outcome of one claimed message, for Store.SMSComplete.
type Completion struct {
	Number int64
	// Token is the claim's token; the outcome applies only while the
	// message is sending under it.
	Token string
	// Status is StatusSent (with GatewayMessageID and NetworkID),
	// StatusQueued (retry at RetryAt) or StatusFailed (FailureReason; the
	// message's Cost goes back to its account in the same transaction).
	Status           string
	GatewayMessageID string
	NetworkID        string
	RetryAt          time.Time
	FailureReason    string
	// Unconfirmed, with StatusQueued, keeps the message's UnconfirmedSince
	// mark: its hand-over's outcome is unknown, or it waits for the
	// confirmation window of an earlier one. Every other outcome clears
	// the mark.
	Unconfirmed bool
	// Untried, with StatusQueued, reports that the claim handed nothing
	// over (the message waited for a confirmation window): the claim's
	// Attempts+1 is taken back.
	Untried bool
	At      time.Time
}

// QueueStatsParams are the arguments of Store.SMSQueueStats.
type QueueStatsParams struct {
	Now time.Time
}

// QueueStats describes the scheduler's queue (see Store.SMSQueueStats).
type QueueStats struct {
	// Pending counts the scheduled, queued and sending messages.
	Pending int64
	// Due counts the pending messages due at Now.
	Due int64
	// OldestDueAt is the earliest DueAt of the due messages; nil when
	// none is due.
	OldestDueAt *time.Time
}
