package main

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// lateFallback is the SMS fallback of the server's messaging service
// (messaging.Options.SMSFallback): the SMS service's, bound once that
// service exists. The two services need each other: the SMS service's
// callbacks are delivered by the messaging service, so the messaging
// service is made first, with this, and the SMS service bound to it
// right after (before either serves anything).
type lateFallback struct {
	f atomic.Pointer[sms.Fallback]
}

// errNoSMSService is the answer of a lateFallback not bound yet.
var errNoSMSService = errors.New("the SMS service is not running yet")

// bind makes s the SMS service the fallbacks go through.
func (l *lateFallback) bind(s *sms.SMS) { l.f.Store(sms.NewFallback(s)) }

// Check implements messaging.SMSFallback.
func (l *lateFallback) Check(ctx context.Context, p *messaging.SMSFallbackParams) error {
	f := l.f.Load()
	if f == nil {
		return errNoSMSService
	}
	return f.Check(ctx, p)
}

// Send implements messaging.SMSFallback.
func (l *lateFallback) Send(ctx context.Context, ws string, p *messaging.SMSFallbackSend) (*messaging.SMSFallbackAccepted, error) {
	f := l.f.Load()
	if f == nil {
		return nil, errNoSMSService
	}
	return f.Send(ctx, ws, p)
}

// Status implements messaging.SMSFallback.
func (l *lateFallback) Status(ctx context.Context, partnerID, providerMessageID string) (string, string, error) {
	f := l.f.Load()
	if f == nil {
		return "", "", errNoSMSService
	}
	return f.Status(ctx, partnerID, providerMessageID)
}
