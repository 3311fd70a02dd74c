// Package sms is the SMS API of the service: single and bulk sends,
// scheduled delivery (timeToSend), delivery reports and balance, over
// prepaid accounts identified by a partnerID and an apikey.
//
// An SMS is created with New over a Store (store/memstore, store/sqlitestore)
// and a Gateway, the upstream SMSC or aggregator (sms/fakegateway,
// sms/advantagateway). Accounts are created with CreateAccount, their sender
// ids approved with ApproveSender (or AddSender) and their credit topped up
// with TopUp, or with AddTopUp once per reference. Every change of an
// account's credit (its opening credit, top-ups, the charge of each
// accepted message, the refund of each failed one) is a LedgerEntry, read
// newest first with Ledger.
//
// A send is validated, its cost (cost per segment times the number of
// parts, see Segments) is debited atomically, and the message is stored as
// queued (or scheduled, with a future timeToSend, see ParseTimeToSend). The
// scheduler (Start, Close) claims due messages from the Store under a lease
// and hands them to the Gateway; messages survive a restart. A message the
// gateway refuses for good is failed and its credit refunded. Delivery
// reports are asked from the gateway (DeliveryReport) or pushed by it
// (ApplyGatewayReport, which httpapi's callback route calls). With
// Options.UpstreamCreditFloor the scheduler also watches the service's own
// credit at the upstream (UpstreamCredit) and, with PauseBelowFloor, holds
// messages back while it is low. A send or a
// bulk request may carry an idempotency key, so that a client retrying it
// after an ambiguous failure is neither charged nor sent twice (see
// ValidateIdempotencyKey and IdempotencyRetention).
//
// Every operation returns *Error on failure, carrying the SMS API's
// response code (CodeInvalidMobile, CodeLowCredit, ...) and a description
// that names the field and the rule. Package httpapi serves the API over
// HTTP under /sms/v1.
package sms

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // account time zones work on hosts without a zoneinfo database
	"unicode/utf8"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/textcheck"
	"github.com/ujumbe/messaging/internal/workqueue"
)

// MaxBulk is the largest number of messages in one bulk request.
const MaxBulk = 20

// Defaults of Options.
const (
	DefaultPollInterval = time.Second
	DefaultLease        = time.Minute
	DefaultBatchSize    = 20
	DefaultMaxAttempts  = 8
	DefaultRetryBackoff = 10 * time.Second
	DefaultMaxSegments  = 10
	// DefaultConfirmWindow is the default of Options.ConfirmWindow.
	DefaultConfirmWindow = 5 * time.Minute
	// MaxRetryBackoff caps the wait between two attempts.
	MaxRetryBackoff = 15 * time.Minute
)

// Policies for a hand-over whose outcome stayed unknown (see
// Options.UnconfirmedPolicy).
const (
	// UnconfirmedResend hands the message over once more.
	UnconfirmedResend = "resend"
	// UnconfirmedFail fails the message with ReasonUnconfirmed and refunds
	// its credit, as for a refusal of the gateway.
	UnconfirmedFail = "fail"
)

// ReasonUnconfirmed is the FailureReason of a message failed by the
// UnconfirmedFail policy.
const ReasonUnconfirmed = "hand-over outcome unknown: the upstream neither answered nor reported the message within the confirmation window"

// Options configure an SMS. A nil *Options means all defaults.
type Options struct {
	// Clock returns the current time. Default: time.Now.
	Clock func() time.Time
	// Sleep is how the scheduler waits after a failed claim and between
	// retries of a failed outcome write: it waits d or until ctx is done
	// (then it returns ctx's error). Default: a timer. Tests that inject
	// Clock pass one that advances their clock instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives the service's logs (never an apikey or a message
	// text). Default: discard.
	Logger *slog.Logger
	// PollInterval is how often the scheduler looks for due messages when
	// nothing wakes it. Immediate sends wake it at once. Default 1 s.
	PollInterval time.Duration
	// Lease is how long a claimed message belongs to its claimer; a message
	// whose claimer died is claimed again after it. Gateway calls time out
	// at half the lease. Default 1 minute.
	Lease time.Duration
	// BatchSize is the most messages claimed and handed to the gateway in
	// one call. Default 20.
	BatchSize int
	// MaxAttempts is how many times a message is handed to the gateway
	// before a retryable failure becomes final. Default 8.
	MaxAttempts int
	// RetryBackoff is the wait before the second attempt; it doubles with
	// each attempt, up to MaxRetryBackoff. Default 10 s.
	RetryBackoff time.Duration
	// MaxSegments is the most parts a message may take. Default 10 (1,530
	// GSM-7 characters or 670 UCS-2 code units).
	MaxSegments int
	// ConfirmWindow is how long a message whose hand-over outcome is
	// unknown (the gateway call timed out or lost its connection after
	// the request was written, the process died, the claim's lease ran
	// out) waits, from the claim that may have handed it over, for a
	// report of the upstream carrying its reference (ApplyUpstreamReport)
	// before UnconfirmedPolicy decides. Meanwhile it is never handed
	// over again and its public state does not change. Default 5 minutes.
	ConfirmWindow time.Duration
	// UnconfirmedPolicy decides what becomes of a message whose
	// hand-over outcome is still unknown when its ConfirmWindow ends:
	// UnconfirmedResend (the default, "") hands it over once more;
	// UnconfirmedFail fails it with ReasonUnconfirmed and refunds its
	// credit. A resend beyond MaxAttempts claims fails it as
	// UnconfirmedFail does.
	UnconfirmedPolicy string
	// UpstreamCreditFloor, when positive, turns on the credit guard: the
	// scheduler reads the service's own credit at the upstream
	// (Gateway.Balance) before its first claim, every
	// UpstreamCreditCheckEvery after, and before the claim that follows a
	// message refused by the upstream for low credit (a *GatewayError with
	// CodeLowCredit). Below the floor it logs a warning, once each time the
	// credit falls below it, and UpstreamCredit reports it low. Default 0:
	// no guard, the balance is never read.
	UpstreamCreditFloor Credit
	// UpstreamCreditCheckEvery is how often the guard reads the upstream
	// credit. Default DefaultUpstreamCreditCheckEvery (5 minutes).
	UpstreamCreditCheckEvery time.Duration
	// PauseBelowFloor makes the scheduler stop handing messages over while
	// the upstream credit is below UpstreamCreditFloor, instead of having
	// the upstream refuse them and spending their attempts: messages stay
	// queued (their credit stays debited once, their attempts untouched)
	// and go out when a later check finds the credit at or above the
	// floor. Default false: the guard only reports.
	PauseBelowFloor bool
	// MeterProvider receives the SMS metrics (see the names Metric*:
	// accepted, sent, failed, retried, segments, credit debited, the
	// scheduler's queue). Default nil: no-op, which costs nothing.
	MeterProvider metric.MeterProvider
	// TracerProvider receives a span for each accept (the store write)
	// and each hand-over to the gateway. Default nil: no spans.
	TracerProvider trace.TracerProvider
	// Callbacks, when set, lets accounts register a callback URL that
	// receives their final delivery reports (see SetCallback). Default
	// nil: no callbacks.
	Callbacks *CallbackOptions
}

// SMS is the SMS service. It is safe for concurrent use.
type SMS struct {
	store Store
	gw    Gateway
	now   func() time.Time
	log   *slog.Logger
	opts  Options

	// queue claims due messages and hands them to the gateway (see
	// scheduler.go).
	queue *workqueue.Queue[*Message]
	// credit watches the service's credit at the upstream (see
	// creditguard.go).
	credit creditGuard
	// tel holds the metric instruments and the tracer.
	tel *smsTelemetry
	// handover holds the scheduler's claim times and its pause after the
	// upstream throttled the account (see scheduler.go).
	handover handoverState

	mu        sync.Mutex
	running   bool
	stop      chan struct{}
	done      chan struct{}
	cancel    context.CancelFunc
	zones     map[string]*time.Location
	dummyHash [sha256.Size]byte
	// pushInTx is true when the callbacks' Service is on store itself:
	// a report's push is then queued in the report's transaction.
	pushInTx bool
}

// New returns an SMS over store and gw. Both are required; a nil opts
// means defaults.
func New(store Store, gw Gateway, opts *Options) (*SMS, error) {
	if store == nil {
		return nil, errors.New("sms: New: store is nil")
	}
	if gw == nil {
		return nil, errors.New("sms: New: gateway is nil")
	}
	o := defaults.Of(opts)
	o.Clock, o.Logger = defaults.Clock(o.Clock), defaults.Logger(o.Logger)
	defaults.Positive(&o.PollInterval, DefaultPollInterval)
	defaults.Positive(&o.Lease, DefaultLease)
	defaults.Positive(&o.BatchSize, DefaultBatchSize)
	defaults.Positive(&o.MaxAttempts, DefaultMaxAttempts)
	defaults.Positive(&o.RetryBackoff, DefaultRetryBackoff)
	defaults.Positive(&o.MaxSegments, DefaultMaxSegments)
	defaults.Positive(&o.ConfirmWindow, DefaultConfirmWindow)
	switch o.UnconfirmedPolicy {
	case "":
		o.UnconfirmedPolicy = UnconfirmedResend
	case UnconfirmedResend, UnconfirmedFail:
	default:
		return nil, fmt.Errorf("sms: New: Options.UnconfirmedPolicy must be %q or %q (got %q)", UnconfirmedResend, UnconfirmedFail, clip(o.UnconfirmedPolicy))
	}
	clock := o.Clock
	s := &SMS{
		store: store, gw: gw, now: func() time.Time { return clock().UTC() }, log: o.Logger, opts: o,
		zones: map[string]*time.Location{},
	}
	if o.UpstreamCreditFloor > 0 {
		defaults.Positive(&o.UpstreamCreditCheckEvery, DefaultUpstreamCreditCheckEvery)
		s.opts.UpstreamCreditCheckEvery = o.UpstreamCreditCheckEvery
		s.credit.floor, s.credit.every, s.credit.pause = o.UpstreamCreditFloor, o.UpstreamCreditCheckEvery, o.PauseBelowFloor
	}
	if cb := o.Callbacks; cb != nil && cb.Service != nil {
		s.pushInTx = sameStore(cb.Service.Store(), store)
	}
	s.queue = s.newQueue()
	tel, err := newSMSTelemetry(s, o.MeterProvider, o.TracerProvider)
	if err != nil {
		return nil, fmt.Errorf("sms: New: creating the metric instruments: %w", err)
	}
	s.tel = tel
	_, _ = rand.Read(s.dummyHash[:])
	return s, nil
}

// Now returns the service clock's current time in UTC.
func (s *SMS) Now() time.Time { return s.now() }

// location returns the time zone named tz, cached.
func (s *SMS) location(tz string) (*time.Location, error) {
	s.mu.Lock()
	loc, ok := s.zones[tz]
	s.mu.Unlock()
	if ok {
		return loc, nil
	}
	loc, err := loadZone(tz)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.zones[tz] = loc
	s.mu.Unlock()
	return loc, nil
}

// loadZone loads an IANA time zone, refusing names LoadLocation would read
// as file paths.
func loadZone(tz string) (*time.Location, error) {
	if tz == "" || tz == "Local" || strings.Contains(tz, "..") || strings.HasPrefix(tz, "/") || len(tz) > 64 {
		return nil, fmt.Errorf("unknown time zone %q", tz)
	}
	return time.LoadLocation(tz)
}

var (
	partnerIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	mobileRe    = regexp.MustCompile(`^[1-9][0-9]{6,14}$`)
	// senderRe: an alphanumeric sender id of at most 11 characters, or a
	// numeric short code or long number of at most 15 digits.
	senderRe = regexp.MustCompile(`^(?:[A-Za-z0-9][A-Za-z0-9 ._&-]{0,9}[A-Za-z0-9._&-]|[A-Za-z0-9]|[0-9]{1,15})$`)
)

// sameStore reports whether a and b are the same store value, false for
// values of one type that == cannot compare (it would panic).
func sameStore(a, b any) bool {
	if a == nil || reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}

// ValidMobile checks a recipient: international format, digits only, no
// plus sign (for example 254712345678), a valid number for its country code
// according to libphonenumber's metadata. It returns the country calling
// code, or an *Error with CodeInvalidMobile.
func ValidMobile(mobile string) (countryCode int, err error) {
	if mobile == "" {
		return 0, NewError(CodeInvalidMobile, "mobile", "is required")
	}
	if !mobileRe.MatchString(mobile) {
		return 0, NewError(CodeInvalidMobile, "mobile", "must be in international format, 7 to 15 digits only, country code first, no plus sign or leading zero, for example 254712345678 (got %q)", clip(mobile))
	}
	// The same verdict as libphonenumber's (phonenumbers.Parse,
	// IsValidNumber, and Format giving the number back as written),
	// mostly without its general-purpose parser (see NormalizePhone).
	e164 := "+" + mobile
	if _, err := messaging.NormalizePhone(e164); err != nil {
		return 0, NewError(CodeInvalidMobile, "mobile", "%s is not a valid phone number for its country code", mobile)
	}
	return messaging.CountryCallingCode(e164), nil
}

// ValidSender reports whether s has the shape of a sender id: 1 to 11
// letters, digits, spaces, '.', '_', '&' or '-' (starting with a letter or
// digit and not ending with a space), or 1 to 15 digits.
func ValidSender(s string) bool { return senderRe.MatchString(s) }

// clip shortens s for an error message.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "..."
}

func hashKey(apikey string) [sha256.Size]byte { return sha256.Sum256([]byte(apikey)) }

// CreateAccountParams are the arguments of CreateAccount.
type CreateAccountParams struct {
	// PartnerID: 1 to 64 letters, digits, '_' or '-'.
	PartnerID string
	// APIKey: 20 to 128 visible ASCII characters; empty means generate one.
	APIKey string
	// Senders are approved sender ids (see ValidSender).
	Senders []string
	// Credit is the opening balance.
	Credit Credit
	// TimeZone is an IANA name; default "UTC".
	TimeZone string
	// CostPerSegment is what one SMS part costs, checked by
	// CheckCostPerSegment; 0 (the zero value) means Credits(1). A
	// surface that can tell an explicit 0 from an absent value refuses
	// the 0 with CheckCostPerSegment before calling CreateAccount.
	CostPerSegment Credit
}

// CreateAccount creates an account and returns it with its apikey in
// clear. The apikey is returned only here; the store keeps its SHA-256.
// Generated keys look like "smsk_" and 43 characters (256 random bits).
func (s *SMS) CreateAccount(ctx context.Context, p *CreateAccountParams) (*Account, string, error) {
	if p == nil {
		return nil, "", NewError(CodeUnsupportedDataType, "", "parameters are required")
	}
	if !partnerIDRe.MatchString(p.PartnerID) {
		return nil, "", NewError(CodeUnsupportedDataType, "partnerID", "must be 1 to 64 letters, digits, '_' or '-'")
	}
	key := p.APIKey
	if key == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, "", systemError(err)
		}
		key = "smsk_" + base64.RawURLEncoding.EncodeToString(b[:])
	} else if !messaging.WellFormedKey(key) {
		return nil, "", NewError(CodeUnsupportedDataType, "apikey", "must be 20 to 128 visible ASCII characters")
	}
	for _, sd := range p.Senders {
		if !ValidSender(sd) {
			return nil, "", NewError(CodeInvalidSender, "shortcodes", "%q is not a sender id: use 1 to 11 letters, digits, spaces, '.', '_', '&' or '-', or 1 to 15 digits", clip(sd))
		}
	}
	if p.Credit < 0 || p.Credit > MaxCredit {
		return nil, "", NewError(CodeUnsupportedDataType, "credit", "must be from 0 to %s", MaxCredit)
	}
	tz := p.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	if _, err := s.location(tz); err != nil {
		return nil, "", NewError(CodeUnsupportedDataType, "timezone", "must be an IANA time zone name such as Africa/Nairobi (got %q)", clip(tz))
	}
	cost := p.CostPerSegment
	if cost == 0 {
		cost = Credits(1)
	}
	if err := CheckCostPerSegment(cost); err != nil {
		return nil, "", err
	}
	senders := slices.Clone(p.Senders)
	slices.Sort(senders)
	senders = slices.Compact(senders)
	if senders == nil {
		senders = []string{}
	}
	now := s.now()
	sum := hashKey(key)
	a := &Account{
		PartnerID: p.PartnerID, KeyHash: sum[:], Senders: senders, Credit: p.Credit,
		TimeZone: tz, CostPerSegment: cost, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.store.SMSAccountCreate(ctx, a); err != nil {
		if errors.Is(err, messaging.ErrConflict) {
			e := NewError(CodeUnsupportedDataType, "partnerID", "an account %q exists already", p.PartnerID)
			e.Err = err
			return nil, "", e
		}
		return nil, "", systemError(err)
	}
	return a, key, nil
}

// GetAccount returns an account (with its key hash, never the key).
func (s *SMS) GetAccount(ctx context.Context, partnerID string) (*Account, error) {
	a, err := s.store.SMSAccountGet(ctx, partnerID)
	if err != nil {
		return nil, s.accountError(err, partnerID)
	}
	return a, nil
}

func (s *SMS) accountError(err error, partnerID string) error {
	if errors.Is(err, messaging.ErrNotFound) {
		return NewError(CodeNotFound, "partnerID", "no account %q", clip(partnerID))
	}
	return systemError(err)
}

// ApproveSender approves a sender id (shortcode) for an account. Approving
// an approved sender does nothing.
func (s *SMS) ApproveSender(ctx context.Context, partnerID, sender string) error {
	_, err := s.AddSender(ctx, partnerID, sender)
	return err
}

// AddSender is ApproveSender, returning the account after the change.
func (s *SMS) AddSender(ctx context.Context, partnerID, sender string) (*Account, error) {
	if !ValidSender(sender) {
		return nil, NewError(CodeInvalidSender, "shortcode", "%q is not a sender id: use 1 to 11 letters, digits, spaces, '.', '_', '&' or '-', or 1 to 15 digits", clip(sender))
	}
	a, err := s.store.SMSAccountUpdate(ctx, &AccountUpdate{PartnerID: partnerID, AddSenders: []string{sender}, At: s.now()})
	if err != nil {
		return nil, s.accountError(err, partnerID)
	}
	return a, nil
}

// SetTimeZone sets the IANA time zone in which an account's timeToSend
// values are read and its report times written.
func (s *SMS) SetTimeZone(ctx context.Context, partnerID, tz string) error {
	if _, err := s.location(tz); err != nil {
		return NewError(CodeUnsupportedDataType, "timezone", "must be an IANA time zone name such as Africa/Nairobi (got %q)", clip(tz))
	}
	_, err := s.store.SMSAccountUpdate(ctx, &AccountUpdate{PartnerID: partnerID, TimeZone: &tz, At: s.now()})
	if err != nil {
		return s.accountError(err, partnerID)
	}
	return nil
}

// CheckCostPerSegment is the rule of a cost per SMS part: from 0.01 to
// MaxCredit. 0 is refused (CodeUnsupportedDataType naming
// "cost_per_segment"): an account never sends for free by mistake.
func CheckCostPerSegment(cost Credit) error {
	if cost <= 0 || cost > MaxCredit {
		return NewError(CodeUnsupportedDataType, "cost_per_segment", "must be from 0.01 to %s (got %s)", MaxCredit, cost)
	}
	return nil
}

// SetCostPerSegment sets what one SMS part costs an account, for the sends
// that follow (see CheckCostPerSegment).
func (s *SMS) SetCostPerSegment(ctx context.Context, partnerID string, cost Credit) error {
	if err := CheckCostPerSegment(cost); err != nil {
		return err
	}
	_, err := s.store.SMSAccountUpdate(ctx, &AccountUpdate{PartnerID: partnerID, CostPerSegment: &cost, At: s.now()})
	if err != nil {
		return s.accountError(err, partnerID)
	}
	return nil
}

// TopUp adds amount (positive) to an account's credit, recording it in the
// account's ledger without a reference, and returns the new balance. A
// top-up that would take the credit above MaxCredit is refused.
func (s *SMS) TopUp(ctx context.Context, partnerID string, amount Credit) (Credit, error) {
	if err := checkTopUpAmount(amount); err != nil {
		return 0, err
	}
	e, _, err := s.creditAdd(ctx, &CreditAddParams{PartnerID: partnerID, Amount: amount})
	if err != nil {
		return 0, err
	}
	return e.Balance, nil
}

func checkTopUpAmount(amount Credit) error {
	if amount <= 0 || amount > MaxCredit {
		return NewError(CodeUnsupportedDataType, "amount", "must be from 0.01 to %s", MaxCredit)
	}
	return nil
}

// creditAdd calls Store.SMSCreditAdd with p (its Max and At set here) and
// turns its errors into *Error.
func (s *SMS) creditAdd(ctx context.Context, p *CreditAddParams) (e, prev *LedgerEntry, err error) {
	p.Max, p.At = MaxCredit, s.now()
	e, prev, err = s.store.SMSCreditAdd(ctx, p)
	switch {
	case errors.Is(err, ErrCreditOverflow):
		ce := NewError(CodeUnsupportedDataType, "amount", "would take the credit above the maximum of %s", MaxCredit)
		ce.Err = err
		return nil, nil, ce
	case err != nil:
		return nil, nil, s.accountError(err, p.PartnerID)
	}
	return e, prev, nil
}

var referenceRe = regexp.MustCompile(`^[\x21-\x7e]{1,128}$`)

// TopUpParams are the arguments of AddTopUp.
type TopUpParams struct {
	PartnerID string
	// Amount is positive, at most MaxCredit.
	Amount Credit
	// Reference identifies the top-up (an invoice or payment number): 1
	// to 128 visible ASCII characters, unique in the account.
	Reference string
}

// TopUpResult is the outcome of AddTopUp.
type TopUpResult struct {
	// Entry is the top-up's ledger entry; its Balance is the credit just
	// after it.
	Entry *LedgerEntry
	// Replayed is true when Entry is the top-up an earlier call made with
	// the same reference: nothing was added this time.
	Replayed bool
}

// AddTopUp adds p.Amount to an account's credit once per p.Reference: a
// repeat with the same reference and amount adds nothing and returns the
// first top-up (Replayed), so that an operator retrying after a lost
// answer never credits twice. The same reference with another amount is
// CodeIdempotencyConflict naming "reference"; a top-up that would take the
// credit above MaxCredit is CodeUnsupportedDataType naming "amount".
func (s *SMS) AddTopUp(ctx context.Context, p *TopUpParams) (*TopUpResult, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedDataType, "", "parameters are required")
	}
	if err := checkTopUpAmount(p.Amount); err != nil {
		return nil, err
	}
	if !referenceRe.MatchString(p.Reference) {
		return nil, NewError(CodeUnsupportedDataType, "reference", "must be 1 to 128 visible ASCII characters")
	}
	e, prev, err := s.creditAdd(ctx, &CreditAddParams{PartnerID: p.PartnerID, Amount: p.Amount, Reference: p.Reference})
	if err != nil {
		return nil, err
	}
	if prev != nil {
		if prev.Amount != p.Amount {
			return nil, NewError(CodeIdempotencyConflict, "reference", "%q was used by a top-up of %s, not %s", clip(p.Reference), prev.Amount, p.Amount)
		}
		return &TopUpResult{Entry: prev, Replayed: true}, nil
	}
	return &TopUpResult{Entry: e}, nil
}

// MaxLedgerPage is the largest page of Ledger.
const MaxLedgerPage = 100

// Ledger returns a page of an account's ledger (top-ups, charges, refunds
// and its opening credit), newest first: at most limit (1 to
// MaxLedgerPage; 0 means 50) after the cursor (empty: from the newest).
// next is the cursor of the following page, empty when there is none.
func (s *SMS) Ledger(ctx context.Context, partnerID, cursor string, limit int) (entries []*LedgerEntry, next string, err error) {
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > MaxLedgerPage {
		return nil, "", NewError(CodeUnsupportedDataType, "limit", "must be 1 to %d", MaxLedgerPage)
	}
	var before int64
	if cursor != "" {
		before, err = strconv.ParseInt(cursor, 10, 64)
		if err != nil || before < 1 {
			return nil, "", NewError(CodeUnsupportedDataType, "cursor", "is not a cursor this API returned")
		}
	}
	if _, err := s.GetAccount(ctx, partnerID); err != nil {
		return nil, "", err
	}
	list, err := s.store.SMSLedger(ctx, &LedgerParams{PartnerID: partnerID, Before: before, Limit: limit + 1})
	if err != nil {
		return nil, "", systemError(err)
	}
	if len(list) > limit {
		list = list[:limit]
		next = strconv.FormatInt(list[limit-1].Seq, 10)
	}
	if list == nil {
		list = []*LedgerEntry{}
	}
	return list, next, nil
}

// Authenticate checks a partnerID and apikey and returns the account. A
// missing partnerID is CodeNoPartnerID, a missing apikey CodeNoAPIKey; an
// unknown partnerID and a wrong apikey give the same CodeInvalidCredentials
// answer after the same work: one read of the key hash (Store.SMSAccountKey)
// and a constant-time comparison of the key's SHA-256, against a random
// hash when the account does not exist. The rest of the account (its
// senders included) is read only once the key matched.
func (s *SMS) Authenticate(ctx context.Context, partnerID, apikey string) (*Account, error) {
	sum, err := s.checkKey(ctx, partnerID, apikey)
	if err != nil {
		return nil, err
	}
	a, err := s.store.SMSAccountGet(ctx, partnerID)
	if errors.Is(err, messaging.ErrNotFound) {
		return nil, errCredentials()
	}
	if err != nil {
		return nil, systemError(err)
	}
	if subtle.ConstantTimeCompare(sum[:], a.KeyHash) != 1 {
		return nil, errCredentials() // the key was replaced in between
	}
	return a, nil
}

// CheckCredentials returns nil when partnerID and apikey match an account,
// else the error Authenticate gives, after the same work as its first
// step (one read of the key hash, a constant-time comparison) and
// without reading the account. The REST layer uses it to charge a
// request to its account's rate limit before serving it.
func (s *SMS) CheckCredentials(ctx context.Context, partnerID, apikey string) error {
	_, err := s.checkKey(ctx, partnerID, apikey)
	return err
}

// checkKey is the first step of Authenticate: it checks the presence of
// partnerID and apikey, then the key against the account's key hash, and
// returns the key's SHA-256.
func (s *SMS) checkKey(ctx context.Context, partnerID, apikey string) ([32]byte, error) {
	var none [32]byte
	if partnerID == "" {
		return none, NewError(CodeNoPartnerID, "partnerID", "is required")
	}
	if apikey == "" {
		return none, NewError(CodeNoAPIKey, "apikey", "is required")
	}
	if err := unstorable("partnerID", partnerID, "apikey", apikey); err != nil {
		return none, err
	}
	sum := hashKey(apikey)
	want, found := s.dummyHash[:], false
	if partnerIDRe.MatchString(partnerID) {
		h, err := s.store.SMSAccountKey(ctx, partnerID)
		switch {
		case err == nil:
			want, found = h, true
		case !errors.Is(err, messaging.ErrNotFound):
			return none, systemError(err)
		}
	}
	if subtle.ConstantTimeCompare(sum[:], want) != 1 || !found {
		return none, errCredentials()
	}
	return sum, nil
}

// SendParams are the fields of POST /sms/v1/messages.
type SendParams struct {
	APIKey    string
	PartnerID string
	// Mobile: international format, digits only, no plus sign.
	Mobile  string
	Message string
	// Shortcode is an approved sender id of the account.
	Shortcode string
	// TimeToSend, optional, see ParseTimeToSend.
	TimeToSend string
	// PassType must be empty or "plain" (the apikey is sent as is).
	PassType string
	// IdempotencyKey, optional, makes a retry safe: a repeat of the same
	// request with the same key gets the first answer (Replayed) and sends
	// nothing. See ValidateIdempotencyKey and IdempotencyRetention.
	IdempotencyKey string
}

// SendResult is an accepted send.
type SendResult struct {
	// ID is the service's message id.
	ID string
	// Status is "sent" when accepted for immediate sending, "scheduled"
	// when due later.
	Status string
	Mobile string
	// ProviderMessageID is Number in decimal: the id to ask delivery
	// reports with.
	ProviderMessageID string
	Number            int64
	// NetworkID is the recipient's country calling code.
	NetworkID string
	Encoding  string
	Segments  int
	// Cost is what was debited; Balance is the credit left after it.
	Cost    Credit
	Balance Credit
	// DueAt is when the message is due (now for immediate sends).
	DueAt time.Time
	// Replayed is true when the result is that of an earlier request with
	// the same idempotency key: nothing was debited or stored this time.
	Replayed bool
}

// Send statuses of SendResult.
const (
	SendStatusSent      = "sent"
	SendStatusScheduled = "scheduled"
)

// item is the validated content of one send.
// unstorable refuses, with 1009 naming the field, a value that no store can
// keep: a NUL character or bytes that are not UTF-8. fields alternate
// names and values, checked in that order.
func unstorable(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if p := textcheck.Find(fields[i+1]); p != nil {
			return NewError(CodeUnsupportedDataType, fields[i], "%s", p.Rule)
		}
	}
	return nil
}

type item struct {
	mobile, text, sender, clientRef, timeToSend, passType string
}

// prepare validates it for account a and returns the message to store,
// without Number.
func (s *SMS) prepare(a *Account, it *item) (*Message, error) {
	if err := unstorable("clientsmsid", it.clientRef, "message", it.text, "mobile", it.mobile,
		"pass_type", it.passType, "shortcode", it.sender, "timeToSend", it.timeToSend); err != nil {
		return nil, err
	}
	cc, err := ValidMobile(it.mobile)
	if err != nil {
		return nil, err
	}
	if it.passType != "" && it.passType != "plain" {
		return nil, NewError(CodeUnsupportedDataType, "pass_type", "only \"plain\" is supported (got %q)", clip(it.passType))
	}
	if strings.TrimSpace(it.text) == "" {
		return nil, NewError(CodeUnsupportedDataType, "message", "is required and must not be blank")
	}
	if !utf8.ValidString(it.text) || strings.ContainsRune(it.text, 0) {
		return nil, NewError(CodeUnsupportedDataType, "message", "must be valid UTF-8 without NUL characters")
	}
	enc, parts := Segments(it.text)
	if parts > s.opts.MaxSegments {
		return nil, NewError(CodeUnsupportedDataType, "message", "takes %d SMS parts in %s, at most %d are allowed", parts, enc, s.opts.MaxSegments)
	}
	if it.sender == "" {
		return nil, NewError(CodeInvalidSender, "shortcode", "is required")
	}
	if _, ok := slices.BinarySearch(a.Senders, it.sender); !ok {
		return nil, NewError(CodeInvalidSender, "shortcode", "%q is not an approved sender id of this account", clip(it.sender))
	}
	loc, err := s.location(a.TimeZone)
	if err != nil {
		return nil, systemError(err)
	}
	now := s.now()
	due, scheduled, err := ParseTimeToSend(it.timeToSend, loc, now)
	if err != nil {
		return nil, err
	}
	status := StatusQueued
	if scheduled {
		status = StatusScheduled
	}
	return &Message{
		ID: messaging.NewID("sms"), PartnerID: a.PartnerID, Mobile: it.mobile, Text: it.text,
		Sender: it.sender, ClientSMSID: it.clientRef, Encoding: enc, Segments: parts,
		Cost: a.CostPerSegment * Credit(parts), Status: status, DueAt: due,
		NetworkID: strconv.Itoa(cc), CreatedAt: now, UpdatedAt: now,
	}, nil
}

func sendStatus(m *Message) string {
	if m.Status == StatusScheduled {
		return SendStatusScheduled
	}
	return SendStatusSent
}

// Send authenticates, validates and accepts one SMS: its cost is debited
// (CodeLowCredit, taking nothing, when the credit cannot cover it) and it is
// stored for the scheduler, due at once or at timeToSend. With an
// IdempotencyKey, a repeat of a request the account made with the key
// gets its answer again (see IdempotencyRetention), and the key with a
// different request is CodeIdempotencyConflict.
func (s *SMS) Send(ctx context.Context, p *SendParams) (*SendResult, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedRequest, "", "a body is required")
	}
	key := p.IdempotencyKey
	if key != "" {
		if err := ValidateIdempotencyKey(key); err != nil {
			return nil, err
		}
	}
	a, err := s.Authenticate(ctx, p.PartnerID, p.APIKey)
	if err != nil {
		return nil, err
	}
	var hash []byte
	if key != "" {
		hash = sendHash(p)
		rec, err := s.remembered(ctx, a.PartnerID, key)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			return replaySend(rec, hash)
		}
	}
	m, err := s.prepare(a, &item{mobile: p.Mobile, text: p.Message, sender: p.Shortcode, timeToSend: p.TimeToSend, passType: p.PassType})
	if err != nil {
		return nil, err
	}
	ans := &answer{Items: []answerItem{pendingItem(1, a, m)}}
	res, prev, err := s.accept(ctx, a.PartnerID, key, hash, ans, []*Message{m})
	if err != nil {
		return nil, systemError(err)
	}
	if prev != nil {
		return replaySend(prev, hash)
	}
	if res[0].Err == nil && m.Status == StatusQueued {
		s.wakeScheduler()
	}
	return ans.sendResult(res, false)
}

// replaySend answers a repeat of the single send rec remembers.
func replaySend(rec *Idempotency, hash []byte) (*SendResult, error) {
	ans, err := replay(rec, hash)
	if err != nil {
		return nil, err
	}
	if len(ans.Items) != 1 || ans.Items[0].Msg != 1 {
		return nil, systemError(fmt.Errorf("idempotency record %q of %s is not a single send", rec.Key, rec.PartnerID))
	}
	return ans.sendResult(rec.Results, true)
}

// lowCredit is the refusal of m, of account a, when the credit cannot cover
// it.
func lowCredit(a *Account, m *Message) *Error {
	return NewError(CodeLowCredit, "message", "costs %s credits (%d %s parts at %s), more than the account's balance", m.Cost, m.Segments, m.Encoding, a.CostPerSegment)
}

// BulkItem is one item of POST /sms/v1/messages/bulk.
type BulkItem struct {
	PartnerID string
	APIKey    string
	// PassType must be empty or "plain".
	PassType string
	// ClientSMSID is the client's reference, kept with the message.
	ClientSMSID string
	Mobile      string
	Message     string
	Shortcode   string
	// TimeToSend, optional, as for Send.
	TimeToSend string
	// Err, when set, is why the item could not be read (for example a
	// member of the wrong type): the item is refused with it (see AsError),
	// neither authenticated nor sent. Its Mobile and ClientSMSID, when
	// known, are still echoed.
	Err error
}

// BulkResult is the outcome of one bulk item.
type BulkResult struct {
	// Code is CodeSuccess or the item's error code; Description its text.
	Code        int
	Description string
	Mobile      string
	// MessageID is the provider message id (0 when refused).
	MessageID int64
	// ID is the service's message id ("" when refused).
	ID          string
	ClientSMSID string
	// NetworkID is the recipient's country calling code ("" when refused).
	NetworkID string
	// Status is "sent" or "scheduled" when accepted.
	Status string
}

// SendBulk accepts up to MaxBulk items. Each is authenticated and validated
// on its own and gets its own result, in order; one bad item never fails
// the others. Each distinct (partnerID, apikey) is authenticated once, and
// the accepted items are debited and stored in one store transaction, in
// order (so when credit runs short, the later items of that account get
// CodeLowCredit). An empty list or more than MaxBulk items is an *Error with
// CodeTooManyMessages. SendBulk is Bulk without an idempotency key.
func (s *SMS) SendBulk(ctx context.Context, items []*BulkItem) ([]*BulkResult, error) {
	r, err := s.Bulk(ctx, &BulkParams{Items: items})
	if err != nil {
		return nil, err
	}
	return r.Results, nil
}

// BulkParams are the arguments of Bulk.
type BulkParams struct {
	// Items are the messages, 1 to MaxBulk.
	Items []*BulkItem
	// IdempotencyKey, optional, makes a retry safe, as for Send. A bulk
	// request with a key must name one partnerID in all the items that
	// could be read: the key is that account's.
	IdempotencyKey string
}

// BulkResponse is the answer of Bulk.
type BulkResponse struct {
	// Results are the outcomes of the items, in order.
	Results []*BulkResult
	// Replayed is true when the results are those of an earlier request
	// with the same idempotency key: nothing was debited or stored this
	// time.
	Replayed bool
}

// Bulk is SendBulk with an optional idempotency key. With a key, a repeat
// of a bulk request the account made with the key gets its results again
// (Replayed), and the key with a different request is
// CodeIdempotencyConflict; items naming different partnerIDs are refused
// whole with CodeUnsupportedRequest. A repeat is recognised once an item
// of the account authenticated. The results of a request of which no item
// reached the store (every item refused before) are not remembered.
func (s *SMS) Bulk(ctx context.Context, p *BulkParams) (*BulkResponse, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedRequest, "", "a body is required")
	}
	items, key := p.Items, p.IdempotencyKey
	if len(items) == 0 || len(items) > MaxBulk {
		return nil, NewError(CodeTooManyMessages, "smslist", "must hold 1 to %d messages (got %d)", MaxBulk, len(items))
	}
	if key != "" {
		if err := ValidateIdempotencyKey(key); err != nil {
			return nil, err
		}
		if err := onePartner(items); err != nil {
			return nil, err
		}
	}
	type authResult struct {
		a   *Account
		err error
	}
	auth := map[[2]string]authResult{}
	var account *Account // the account of the key, once an item authenticated
	for _, it := range items {
		if it == nil || it.Err != nil {
			continue
		}
		k := [2]string{it.PartnerID, it.APIKey}
		if _, ok := auth[k]; ok {
			continue
		}
		a, err := s.Authenticate(ctx, it.PartnerID, it.APIKey)
		auth[k] = authResult{a, err}
		if err == nil && account == nil {
			account = a
		}
	}
	var hash []byte
	if key != "" && account != nil {
		hash = bulkHash(items)
		rec, err := s.remembered(ctx, account.PartnerID, key)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			return replayBulk(rec, hash)
		}
	}
	ans := &answer{Items: make([]answerItem, len(items))}
	var msgs []*Message
	for i, it := range items {
		switch {
		case it == nil:
			ans.Items[i] = refusedItem(NewError(CodeUnsupportedDataType, "", "item must be a JSON object"), "", "")
			continue
		case it.Err != nil:
			ans.Items[i] = refusedItem(it.Err, it.Mobile, it.ClientSMSID)
			continue
		}
		ar := auth[[2]string{it.PartnerID, it.APIKey}]
		if ar.err != nil {
			ans.Items[i] = refusedItem(ar.err, it.Mobile, it.ClientSMSID)
			continue
		}
		m, err := s.prepare(ar.a, &item{mobile: it.Mobile, text: it.Message, sender: it.Shortcode,
			clientRef: it.ClientSMSID, timeToSend: it.TimeToSend, passType: it.PassType})
		if err != nil {
			ans.Items[i] = refusedItem(err, it.Mobile, it.ClientSMSID)
			continue
		}
		msgs = append(msgs, m)
		ans.Items[i] = pendingItem(len(msgs), ar.a, m)
	}
	if len(msgs) == 0 {
		return &BulkResponse{Results: ans.bulkResults(nil)}, nil
	}
	// A message was prepared, so an item authenticated: account is set.
	res, prev, err := s.accept(ctx, account.PartnerID, key, hash, ans, msgs)
	if err != nil {
		// Nothing was stored: the items handed to the store get 1005.
		s.log.ErrorContext(ctx, "sms: bulk accept failed", "err", err.Error())
		res = make([]AcceptResult, len(msgs))
		for j := range res {
			res[j].Err = err
		}
		return &BulkResponse{Results: ans.bulkResults(res)}, nil
	}
	if prev != nil {
		return replayBulk(prev, hash)
	}
	wake := false
	for j, m := range msgs {
		wake = wake || (res[j].Err == nil && m.Status == StatusQueued)
	}
	if wake {
		s.wakeScheduler()
	}
	return &BulkResponse{Results: ans.bulkResults(res)}, nil
}

// replayBulk answers a repeat of the bulk request rec remembers.
func replayBulk(rec *Idempotency, hash []byte) (*BulkResponse, error) {
	ans, err := replay(rec, hash)
	if err != nil {
		return nil, err
	}
	return &BulkResponse{Results: ans.bulkResults(rec.Results), Replayed: true}, nil
}

// onePartner checks that the items that could be read name one partnerID,
// the scope of a bulk request's idempotency key.
func onePartner(items []*BulkItem) error {
	first := ""
	seen := false
	for _, it := range items {
		if it == nil || it.Err != nil {
			continue
		}
		if !seen {
			first, seen = it.PartnerID, true
			continue
		}
		if it.PartnerID != first {
			return NewError(CodeUnsupportedRequest, keyField, "a bulk request with an Idempotency-Key must name one partnerID in all its items (got %q and %q); send the items of each account in a request of its own",
				clip(first), clip(it.PartnerID))
		}
	}
	return nil
}

func setErr(r *BulkResult, err error) {
	e := AsError(err)
	r.Code, r.Description = e.Code, e.Description
}

// ReportParams are the fields of POST /sms/v1/messages/delivery-report.
type ReportParams struct {
	APIKey    string
	PartnerID string
	// MessageID is the provider message id (providerMessageId, messageid).
	MessageID string
}

// DeliveryReport is the answer of a delivery-report request.
type DeliveryReport struct {
	// MessageID is the provider message id asked about.
	MessageID string
	// Status and Description: see DeliveryStatus. Only DeliveredToTerminal
	// is a successful delivery.
	Status      int
	Description string
	NetworkID   string
	// TAT is the turnaround from the hand-over to the gateway to Time;
	// negative when unknown.
	TAT time.Duration
	// Time is when the state was reached, in the account's time zone; zero
	// when unknown.
	Time time.Time
}

// Delivered reports whether the report is a successful delivery.
func (r *DeliveryReport) Delivered() bool { return r.Description == DeliveredToTerminal }

// DeliveryReport returns the delivery report of a message of the account:
// Scheduled while it waits for its timeToSend, the gateway's report once it
// was handed over (asked from the gateway until it is final, and stored),
// DeliveryImpossible when the gateway refused it. A message not handed over
// yet, or without a report from the gateway, is an *Error with
// CodeNoDeliveryReport; an id unknown to the account is CodeNotFound.
func (s *SMS) DeliveryReport(ctx context.Context, p *ReportParams) (*DeliveryReport, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedRequest, "", "a body is required")
	}
	a, err := s.Authenticate(ctx, p.PartnerID, p.APIKey)
	if err != nil {
		return nil, err
	}
	if p.MessageID == "" {
		return nil, NewError(CodeUnsupportedDataType, "messageID", "is required: the providerMessageId or messageid of a send")
	}
	n, perr := strconv.ParseInt(p.MessageID, 10, 64)
	if perr != nil || n <= 0 || !allDigits(p.MessageID) {
		return nil, NewError(CodeNotFound, "messageID", "no message %q in this account", clip(p.MessageID))
	}
	m, err := s.store.SMSMessageGet(ctx, a.PartnerID, n)
	if errors.Is(err, messaging.ErrNotFound) {
		return nil, NewError(CodeNotFound, "messageID", "no message %q in this account", p.MessageID)
	}
	if err != nil {
		return nil, systemError(err)
	}
	loc, err := s.location(a.TimeZone)
	if err != nil {
		return nil, systemError(err)
	}
	r := m.Report
	if r == nil || !r.Final() {
		switch m.Status {
		case StatusScheduled:
			r = &Report{Status: DeliveryStatus(DeliveryScheduled), Description: DeliveryScheduled, NetworkID: m.NetworkID}
		case StatusFailed:
			r = &Report{Status: DeliveryStatus(DeliveryImpossible), Description: DeliveryImpossible, NetworkID: m.NetworkID, Time: m.UpdatedAt}
		case StatusSent:
			r = s.fetchReport(ctx, m)
		default:
			r = nil // queued or sending: not handed over yet
		}
	}
	if r == nil {
		return nil, NewError(CodeNoDeliveryReport, "", "")
	}
	out := &DeliveryReport{MessageID: p.MessageID, Status: r.Status, Description: r.Description, NetworkID: r.NetworkID, TAT: -1}
	if !r.Time.IsZero() {
		out.Time = r.Time.In(loc)
		if m.SentAt != nil && !r.Time.Before(*m.SentAt) {
			out.TAT = r.Time.Sub(*m.SentAt)
		}
	}
	return out, nil
}

// fetchReport asks the gateway for the report of a sent message, stores it
// when it changed, and returns the newest known report (nil when none).
func (s *SMS) fetchReport(ctx context.Context, m *Message) *Report {
	if m.GatewayMessageID == "" {
		return m.Report
	}
	r, err := s.gw.DeliveryReport(ctx, m.GatewayMessageID)
	if err != nil {
		if !errors.Is(err, ErrNoReport) {
			s.log.WarnContext(ctx, "sms: gateway delivery report failed", "number", m.Number, "err", err.Error())
		}
		return m.Report
	}
	nr := normalReport(m, r)
	if m.Report == nil || !sameReport(m.Report, &nr) {
		if err := s.saveReport(ctx, m, m.Report, &nr); err != nil {
			s.log.WarnContext(ctx, "sms: storing delivery report failed", "number", m.Number, "err", err.Error())
		}
	}
	return &nr
}

// normalReport returns the gateway's report r of m with the service's
// status number for its description and m's network when r has none.
func normalReport(m *Message, r *Report) Report {
	nr := *r
	if st := DeliveryStatus(nr.Description); st != 0 || nr.Description == DeliveryUnknown {
		nr.Status = st
	}
	if nr.NetworkID == "" {
		nr.NetworkID = m.NetworkID
	}
	return nr
}

func sameReport(a, b *Report) bool {
	return a.Status == b.Status && a.Description == b.Description && a.NetworkID == b.NetworkID && a.Time.Equal(b.Time)
}

// BalanceResult is the answer of a balance request.
type BalanceResult struct {
	PartnerID string
	Credit    Credit
}

// Balance returns the credit of the account.
func (s *SMS) Balance(ctx context.Context, partnerID, apikey string) (*BalanceResult, error) {
	a, err := s.Authenticate(ctx, partnerID, apikey)
	if err != nil {
		return nil, err
	}
	return &BalanceResult{PartnerID: a.PartnerID, Credit: a.Credit}, nil
}
