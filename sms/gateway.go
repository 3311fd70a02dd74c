package sms

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Gateway is the upstream SMSC or aggregator the service hands accepted
// messages to. Implementations live in sub-packages: sms/fakegateway (a
// deterministic simulator) and sms/advantagateway (an HTTP adapter for an
// Advanta-compatible upstream).
type Gateway interface {
	// Send hands msgs (at most the scheduler's batch size, 20 by default)
	// to the upstream and returns one result per message, in order, each
	// message carrying its Number as the upstream's client reference
	// (clientsmsid), so that the upstream's reports can be matched to it
	// even when its answer is lost. An error for the whole call, or for
	// one message, that wraps ErrUnknownOutcome (or a context error: the
	// call timed out or was cancelled) means the request may have reached
	// the upstream and its answer is unknown: the scheduler waits for a
	// report carrying the reference before it hands the message over
	// again (see Options.ConfirmWindow). Any other error means the
	// upstream did not accept the message.
	Send(ctx context.Context, msgs []*GatewayMessage) ([]GatewayResult, error)
	// DeliveryReport returns the upstream's delivery report of a message
	// it accepted, by the id it gave. ErrNoReport when it has none yet.
	DeliveryReport(ctx context.Context, gatewayMessageID string) (*Report, error)
	// Balance returns the service's own credit at the upstream.
	Balance(ctx context.Context) (Credit, error)
}

// GatewayMessage is one SMS handed to a Gateway.
type GatewayMessage struct {
	// Reference is the service's message id (Message.ID). A gateway that
	// can drop duplicates uses it as the idempotency key.
	Reference string
	// Number is the service's provider message id (Message.Number), sent
	// upstream as the client reference (clientsmsid): the upstream's
	// reports that carry it confirm a hand-over whose answer was lost.
	Number int64
	// Mobile is the recipient, international format, digits only.
	Mobile string
	Text   string
	// Sender is the approved sender id.
	Sender string
}

// GatewayResult is the upstream's answer for one message.
type GatewayResult struct {
	// MessageID is the upstream's id of an accepted message.
	MessageID string
	// NetworkID is the upstream's network id, when it gives one.
	NetworkID string
	// Err is nil when the message was accepted, else a *GatewayError (or
	// any other error, taken as retryable).
	Err error
}

// GatewayError is a message refused or failed by the upstream.
type GatewayError struct {
	// Code is the upstream's response code, for example 1003.
	Code int
	// Description is the upstream's text.
	Description string
	// Retryable reports whether sending again later may succeed.
	Retryable bool
	// RetryAfter, when positive, is the wait the upstream asked for.
	RetryAfter time.Duration
	// Throttled reports that the upstream asks the service's account to
	// slow down (HTTP 429, or the upstream's throttling code): the
	// scheduler pauses every hand-over for RetryAfter (or
	// Options.RetryBackoff when it is not given), not only this
	// message's.
	Throttled bool
}

// Error implements the error interface.
func (e *GatewayError) Error() string {
	return fmt.Sprintf("gateway error %d: %s", e.Code, e.Description)
}

// Retryable reports whether err, a gateway failure, may succeed on a later
// attempt: a *GatewayError says so itself; any other error (transport,
// timeout) is retryable.
func Retryable(err error) bool {
	var ge *GatewayError
	if errors.As(err, &ge) {
		return ge.Retryable
	}
	return true
}

// ErrUnknownOutcome is wrapped by a Gateway's error when the request may
// have reached the upstream and its answer is unknown: a timeout or a
// lost connection after the request was written, an answer that could
// not be read, an accepted message without the upstream's id. See
// UnknownOutcome.
var ErrUnknownOutcome = errors.New("sms: the upstream may have accepted the message; its answer is unknown")

// UnknownOutcome reports whether err, the error of a hand-over, leaves
// its outcome unknown: it wraps ErrUnknownOutcome, context.Canceled or
// context.DeadlineExceeded.
func UnknownOutcome(err error) bool {
	return errors.Is(err, ErrUnknownOutcome) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// ErrNoReport is returned by Gateway.DeliveryReport when the upstream has no
// delivery report for the message yet.
var ErrNoReport = errors.New("sms: no delivery report yet")

// Delivery states: the delivery-status number and delivery-description of a
// report. Only DeliveredToTerminal is a successful delivery.
const (
	DeliveryUnknown               = "Unknown"
	DeliveryScheduled             = "Scheduled"
	DeliverySentToNetwork         = "SentToNetwork"
	DeliveryAbsentSubscriber      = "AbsentSubscriber"
	DeliveryImpossible            = "DeliveryImpossible"
	DeliverySenderNameBlacklisted = "SenderName Blacklisted"
	DeliveredToTerminal           = "DeliveredToTerminal"
)

// deliveryStatuses numbers the delivery states. 32 for DeliveredToTerminal
// is the upstream convention; the others are this service's.
var deliveryStatuses = []struct {
	desc   string
	status int
	final  bool
}{
	{DeliveryUnknown, 0, false},
	{DeliveryScheduled, 1, false},
	{DeliverySentToNetwork, 2, false},
	{DeliveryAbsentSubscriber, 3, true},
	{DeliveryImpossible, 4, true},
	{DeliverySenderNameBlacklisted, 5, true},
	{DeliveredToTerminal, 32, true},
}

// DeliveryStatus returns the delivery-status number of a delivery
// description: 0 Unknown, 1 Scheduled, 2 SentToNetwork, 3 AbsentSubscriber,
// 4 DeliveryImpossible, 5 SenderName Blacklisted, 32 DeliveredToTerminal.
// An unknown description gives 0.
func DeliveryStatus(description string) int {
	for _, d := range deliveryStatuses {
		if d.desc == description {
			return d.status
		}
	}
	return 0
}

// DeliveryDescription returns the delivery description of a
// delivery-status number (see DeliveryStatus), or "" for a number it does
// not know.
func DeliveryDescription(status int) string {
	for _, d := range deliveryStatuses {
		if d.status == status {
			return d.desc
		}
	}
	return ""
}

// Final reports whether r is a final delivery state, which no later report
// changes: DeliveredToTerminal, AbsentSubscriber, DeliveryImpossible or
// SenderName Blacklisted.
func (r *Report) Final() bool {
	for _, d := range deliveryStatuses {
		if d.desc == r.Description {
			return d.final
		}
	}
	return false
}

// FinalDeliveryStates returns the descriptions of the final delivery
// states (see Report.Final), for stores that keep a final report from
// being replaced.
func FinalDeliveryStates() []string {
	var out []string
	for _, d := range deliveryStatuses {
		if d.final {
			out = append(out, d.desc)
		}
	}
	return out
}

// Delivered reports whether r is a successful delivery: only
// DeliveredToTerminal is.
func (r *Report) Delivered() bool { return r.Description == DeliveredToTerminal }
