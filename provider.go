package messaging

import (
	"context"
	"fmt"
	"time"
)

// Provider is the channel provider the service hands accepted messages to
// (WhatsApp Cloud API, Messenger, Instagram, or a simulator). Implementations
// live in sub-packages such as provider/fakeprovider.
type Provider interface {
	// Send hands one outbound message to the channel provider and returns
	// the provider's message id. A failure is reported as *SendError; any
	// other error is treated as a retryable transport failure.
	Send(ctx context.Context, m *Message) (*SendReceipt, error)
}

// SendReceipt is the provider's answer to an accepted send.
type SendReceipt struct {
	// ProviderMessageID is the provider's id for the message, for example a
	// WhatsApp "wamid".
	ProviderMessageID string
}

// SendError is a send refused or failed by the channel provider.
type SendError struct {
	// Code is the provider's error code, for example "131026".
	Code string
	// Text is the provider's error text.
	Text string
	// Retryable reports whether sending again later may succeed.
	Retryable bool
	// RetryAfter, when positive, is the wait the provider asked for.
	RetryAfter time.Duration
}

// Error implements the error interface.
func (e *SendError) Error() string {
	return fmt.Sprintf("provider error %s", FailureReason(e.Code, e.Text))
}
