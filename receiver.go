package messaging

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
)

// CallbackReceiver is an optional capability of a Provider that receives
// the channel provider's callbacks over HTTP (status reports, inbound
// messages, template events) and applies them to the service. A host
// serving the service over HTTP (httpapi) mounts the receiver of each of
// the service's providers that offers one (see Service.Receivers), so a
// new channel's receiver needs no change to the host.
type CallbackReceiver interface {
	// Receiver returns the provider's receiver applying callbacks to
	// svc, with what the host gives it; nil when the provider is
	// configured to receive nothing.
	Receiver(svc *Service, host *ReceiverHost) *Receiver
}

// ReceiverHost is what the host of a provider's receiver gives it.
type ReceiverHost struct {
	// MaxBodyBytes is the largest request body the host accepts (a
	// receiver may accept less); zero means the receiver's default.
	MaxBodyBytes int64
	// Logger receives the receiver's logs; nil discards them.
	Logger *slog.Logger
	// LogAttrs returns attributes (alternating keys and values) put first
	// on a receiver's log lines about a request, for example the host's
	// correlation id; nil means none.
	LogAttrs func(r *http.Request) []any
}

// Receiver is a provider's receiver of callbacks, as a host mounts it.
type Receiver struct {
	// Name names the receiver in the host's logs, for example "meta
	// webhook".
	Name string
	// Path is where the receiver is mounted, for example
	// "/webhooks/meta": a clean path of its own, outside the host's
	// routes (a host refuses another, and logs it).
	Path string
	// Serve serves one request. It answers a request it accepts itself.
	// For a request it refuses it writes no answer (only headers, such as
	// Allow on a 405) and returns the refusal for the host to answer its
	// own way: a *ReceiverError (405, 413), a *Error with the code (400
	// for a malformed body; 401 and 403 wrapping ErrReceiverUnverified
	// for a request that failed the provider's verification), or a
	// failure of the service.
	Serve func(w http.ResponseWriter, r *http.Request) error
}

// ErrReceiverUnverified is wrapped by a receiver's refusal of a request
// that failed the provider's verification (a missing or wrong signature, a
// failed handshake). A host can count such requests against the client's
// rate limit, as httpapi does.
var ErrReceiverUnverified = errors.New("messaging: request not verified as the provider's")

// ReceiverError is a receiver's refusal that no Code describes, with its
// HTTP status: 405 for a method the receiver does not take (it has set the
// Allow header) and 413 for a body over its size limit.
type ReceiverError struct {
	// Status is the HTTP status: http.StatusMethodNotAllowed or
	// http.StatusRequestEntityTooLarge.
	Status int
	// Message says what was refused, for the caller.
	Message string
}

// Error implements the error interface.
func (e *ReceiverError) Error() string { return strconv.Itoa(e.Status) + ": " + e.Message }

// Receivers returns the receivers of the service's providers: of each
// distinct provider (in the order of the channels) that is a
// CallbackReceiver and offers one.
func (s *Service) Receivers(host *ReceiverHost) []*Receiver {
	if host == nil {
		host = &ReceiverHost{}
	}
	var out []*Receiver
	for _, p := range s.channels.providers {
		if cr, ok := p.(CallbackReceiver); ok {
			if rc := cr.Receiver(s, host); rc != nil {
				out = append(out, rc)
			}
		}
	}
	return out
}
