// Package fakeprovider is a deterministic in-memory channel provider. It
// accepts every message, records what it was asked to send, and answers with
// sequential provider message ids ("wamid.fake.000001", ...). It is meant
// for examples and tests.
package fakeprovider

import (
	"context"
	"fmt"
	"sync"

	"github.com/ujumbe/messaging"
)

var _ messaging.Provider = (*Provider)(nil)

// Provider is a fake channel provider. It is safe for concurrent use.
type Provider struct {
	mu   sync.Mutex
	sent []*messaging.Message
}

// New returns a Provider that has sent nothing.
func New() *Provider { return &Provider{} }

// Send records m and returns the next sequential provider message id.
func (p *Provider) Send(ctx context.Context, m *messaging.Message) (*messaging.SendReceipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := *m
	p.sent = append(p.sent, &c)
	return &messaging.SendReceipt{ProviderMessageID: fmt.Sprintf("wamid.fake.%06d", len(p.sent))}, nil
}

// Sent returns copies of the messages sent so far, in order.
func (p *Provider) Sent() []*messaging.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*messaging.Message, len(p.sent))
	for i, m := range p.sent {
		c := *m
		out[i] = &c
	}
	return out
}
