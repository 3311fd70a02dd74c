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
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // account time zones work on hosts without a zoneinfo database
	"unicode/utf8"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/callingcode"
	"github.com/ujumbe/messaging/internal/defaults"
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
	// outbox queues the callbacks' events (CallbackOptions.Outbox, or
	// Service); nil without callbacks.
	outbox Outbox
	// pushInTx is true when store keeps the outbox's events itself: a
	// report's push is then queued in the report's transaction (see
	// OutboxStore).
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
		s.outbox = cb.Outbox
		if s.outbox == nil {
			s.outbox = cb.Service
		}
		s.pushInTx = pushesInTx(store, s.outbox)
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
	cc, _ := callingcode.Of(mobile)
	return cc, nil
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
