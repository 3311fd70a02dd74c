package messaging

import (
	"context"
	"crypto/cipher"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/workqueue"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Service. A nil *Options means all defaults.
type Options struct {
	// Clock returns the current time. Default: time.Now.
	Clock func() time.Time
	// Sleep is how the background workers wait after a failed claim and
	// between retries of a failed outcome write: it waits d or until ctx is
	// done (then it returns ctx's error). Default: a timer. Tests that
	// inject Clock pass one that advances their clock instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives the service's logs. Default: a logger that discards.
	Logger *slog.Logger
	// Dispatch configures the dispatcher started by Start.
	Dispatch DispatchOptions
	// Webhooks configures the delivery of events to webhook endpoints.
	Webhooks WebhookOptions
	// SecretKey is a 32-byte key that encrypts webhook signing secrets at
	// rest (AES-256-GCM). Required to create webhook endpoints and to
	// deliver to them; keep it outside the database.
	SecretKey []byte
	// TemplateSync configures the refresh of the cached template list
	// (see Service.SyncTemplates).
	TemplateSync TemplateSyncOptions
	// ConnectionChecks configure the verification of stored channel
	// connections with the provider (see Channels.Verify).
	ConnectionChecks ConnectionCheckOptions
	// PendingReportRetention is how long a provider's status report about
	// a provider message id that no message carries yet is kept, waiting
	// for the dispatcher to record that id (Meta may report a message
	// delivered before its answer to the send is recorded; see
	// Service.ApplyProviderStatus). Older reports are discarded. At most
	// MaxPendingReports reports are kept per id. Zero or negative means
	// the default: DefaultPendingReportRetention (24 h).
	PendingReportRetention time.Duration
	// MeterProvider receives the service's metrics (see the names
	// Metric*: messages accepted, status changes, latencies, provider
	// errors, retries, the dispatch queue, webhook deliveries). Default
	// nil: no-op instruments, which cost nothing.
	MeterProvider metric.MeterProvider
	// TracerProvider receives the service's spans: the store write that
	// accepts a message, each dispatch with its provider call (in the
	// trace of the accept), each webhook delivery. Default nil: no spans
	// are started.
	TracerProvider trace.TracerProvider
	// MaxMediaBytes is the largest media of an inbound message that
	// Messages.Media streams. Default DefaultMaxMediaBytes.
	MaxMediaBytes int64
	// CacheTTL is how long the service reuses the API keys and the
	// workspaces (connected channels, settings) it read from the store,
	// measured on Clock: the two reads of every request. Changes made
	// through this Service are seen at once; changes made through another
	// Service on the same store (another instance behind a load balancer,
	// another process on the SQLite file) are seen within CacheTTL: a key
	// revoked or a channel disconnected elsewhere stops working within it.
	// Zero means DefaultCacheTTL (500 ms); negative turns the cache off;
	// more than MaxCacheTTL (1 s) is refused by New.
	CacheTTL time.Duration
	// SMSFallback sends the SMS fallbacks of template sends
	// (SendTemplateParams.Fallback; see sms.NewFallback). Nil: a send
	// naming a fallback is refused.
	SMSFallback SMSFallback
	// SMSFallbackAfter is how long a template send with an SMS fallback
	// has to be delivered before its SMS goes out, when the send names no
	// wait. Zero or negative means DefaultSMSFallbackAfter (10 minutes).
	SMSFallbackAfter time.Duration
	// SMSFallbackSweep is how often Start's sweeper sends the fallbacks
	// whose wait ended (RunFallbacks). Zero means DefaultSMSFallbackSweep;
	// negative turns the sweeper off.
	SMSFallbackSweep time.Duration
}

// Service is the messaging service. It is safe for concurrent use.
type Service struct {
	// store is raw with the reads of every request cached (see
	// cachingStore); raw is the store New was given.
	store driver.Store
	raw   driver.Store
	// channels are the channels the service serves, with their
	// providers.
	channels *channelSet
	now      func() time.Time
	log      *slog.Logger
	events   *eventBus
	aead     cipher.AEAD
	dispatch *dispatcher
	hooks    *webhookSender
	// statuses is the one way status changes reach the store (see
	// statusBatch).
	statuses *statusBatch
	// touches records the last use of API keys (see Authenticate).
	touches *keyToucher
	// retention is Options.PendingReportRetention with its default.
	retention time.Duration
	// syncOpts is Options.TemplateSync with its defaults.
	syncOpts TemplateSyncOptions
	// checkOpts is Options.ConnectionChecks with its defaults.
	checkOpts ConnectionCheckOptions
	// sleep is Options.Sleep with its default.
	sleep func(ctx context.Context, d time.Duration) error
	// owner names this service in leases held in the store.
	owner string
	// tel holds the metric instruments and the tracer.
	tel *telemetry
	// maxMedia is Options.MaxMediaBytes with its default.
	maxMedia int64
	// smsFallback, fallbackAfter and fallbackSweep are Options.SMSFallback*
	// with their defaults (see fallback.go).
	smsFallback   SMSFallback
	fallbackAfter time.Duration
	fallbackSweep time.Duration

	runMu sync.Mutex
	stop  chan struct{}
	done  chan struct{}
}

// New returns a Service over store and provider. Both are required. The
// service serves the channels the provider declares: a ChannelProvider
// (such as metaprovider's), or a ProviderMux of several providers, each
// serving its channels.
func New(store driver.Store, provider Provider, opts *Options) (*Service, error) {
	if store == nil {
		return nil, fmt.Errorf("messaging: New: store is nil")
	}
	if provider == nil {
		return nil, fmt.Errorf("messaging: New: provider is nil")
	}
	channels, err := newChannelSet(provider)
	if err != nil {
		return nil, fmt.Errorf("messaging: New: %w", err)
	}
	o := defaults.Of(opts)
	o.Clock, o.Logger = defaults.Clock(o.Clock), defaults.Logger(o.Logger)
	defaults.Positive(&o.PendingReportRetention, defaults.DefaultPendingReportRetention)
	if o.CacheTTL > defaults.MaxCacheTTL {
		return nil, fmt.Errorf("messaging: New: CacheTTL %v is longer than MaxCacheTTL (%v)", o.CacheTTL, defaults.MaxCacheTTL)
	}
	if o.CacheTTL == 0 {
		o.CacheTTL = defaults.DefaultCacheTTL
	}
	s := &Service{raw: store, channels: channels, now: func() time.Time { return o.Clock().UTC() }, log: o.Logger, events: &eventBus{},
		retention: o.PendingReportRetention}
	if o.SecretKey != nil {
		aead, err := newAEAD(o.SecretKey)
		if err != nil {
			return nil, err
		}
		s.aead = aead
	}
	s.maxMedia = o.MaxMediaBytes
	if s.maxMedia <= 0 {
		s.maxMedia = defaults.DefaultMaxMediaBytes
	}
	s.syncOpts = o.TemplateSync
	if s.syncOpts.Every == 0 {
		s.syncOpts.Every = defaults.DefaultTemplateSyncEvery
	}
	defaults.Positive(&s.syncOpts.Lease, defaults.DefaultTemplateSyncLease)
	defaults.Positive(&s.syncOpts.ResubmitAfter, time.Minute)
	s.checkOpts = o.ConnectionChecks
	if s.checkOpts.Every == 0 {
		s.checkOpts.Every = defaults.DefaultConnectionCheckEvery
	}
	defaults.Positive(&s.checkOpts.Recheck, defaults.DefaultConnectionRecheck)
	defaults.Positive(&s.checkOpts.Timeout, defaults.DefaultVerifyTimeout)
	s.smsFallback, s.fallbackAfter, s.fallbackSweep = o.SMSFallback, o.SMSFallbackAfter, o.SMSFallbackSweep
	defaults.Positive(&s.fallbackAfter, DefaultSMSFallbackAfter)
	if s.fallbackSweep == 0 {
		s.fallbackSweep = DefaultSMSFallbackSweep
	}
	s.sleep = o.Sleep
	if s.sleep == nil {
		s.sleep = workqueue.RealSleep
	}
	s.owner = record.NewID("svc")
	s.store = newCachingStore(store, s.now, o.CacheTTL)
	tel, err := newTelemetry(s, o.MeterProvider, o.TracerProvider)
	if err != nil {
		return nil, fmt.Errorf("messaging: New: creating the metric instruments: %w", err)
	}
	s.tel = tel
	s.statuses = &statusBatch{store: s.store, take: s.takeKept}
	s.dispatch = newDispatcher(s, o.Dispatch, o.Sleep)
	s.hooks = newWebhookSender(s, o.Webhooks, o.Sleep)
	s.touches = newKeyToucher(s)
	return s, nil
}

// Ping checks that the service's store answers (Store.Ping) within ctx,
// for readiness probes: nil, or the store's error, which wraps
// ErrSchemaVersion when the database schema is not at the version this
// library needs.
func (s *Service) Ping(ctx context.Context) error { return s.raw.Ping(ctx) }

// UsesStore reports whether the service runs on store: the very value
// given to New, compared with == (false for a wrapper of it, and for
// values of a type == cannot compare). A service built beside this one
// on the same store, as sms.SMS is, may then write this service's records
// in its own transactions.
func (s *Service) UsesStore(store any) (same bool) {
	if store == nil {
		return false
	}
	// == panics on two values of one type it cannot compare (a struct
	// holding a slice): those are not known to be the same store.
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return any(s.raw) == store
}

// Now returns the service clock's current time in UTC.
func (s *Service) Now() time.Time { return s.now() }

// Workspace is a handle on one workspace. Its Messages, Contacts and
// Templates only see the data of that workspace: an id of another workspace
// is not found. Creating a handle does no I/O and does not check that the
// workspace exists.
type Workspace struct {
	// ID is the workspace id.
	ID string
	// Messages sends and reads messages.
	Messages *Messages
	// Contacts creates, lists, reads and updates contacts.
	Contacts *Contacts
	// Templates lists and reads templates and manages their review state.
	Templates *Templates
	// Conversations lists conversations and their messages.
	Conversations *Conversations
	// Webhooks manages the webhook endpoints and their deliveries.
	Webhooks *Webhooks
	// APIKeys creates, lists, changes and revokes API keys.
	APIKeys *APIKeys
	// Channels connects, reads, verifies and disconnects channels.
	Channels *Channels
	// MediaUploads uploads files to the provider to send by id.
	MediaUploads *MediaUploads
}

// Workspace returns a handle on the workspace with the given id.
func (s *Service) Workspace(id string) *Workspace {
	return &Workspace{
		ID:        id,
		Messages:  &Messages{svc: s, ws: id},
		Contacts:  &Contacts{svc: s, ws: id},
		Templates: &Templates{svc: s, ws: id},

		Conversations: &Conversations{svc: s, ws: id},
		Webhooks:      &Webhooks{svc: s, ws: id},
		APIKeys:       &APIKeys{svc: s, ws: id},
		Channels:      &Channels{svc: s, ws: id},
		MediaUploads:  &MediaUploads{svc: s, ws: id},
	}
}

// Start starts the background work of the service: the dispatcher that
// hands queued messages to the provider, and the delivery of webhooks. It
// returns at once. Cancelling ctx stops everything abruptly, as a crash
// would (leased work is picked up again after its lease); Close stops
// gracefully. Start may be called once.
func (s *Service) Start(ctx context.Context) error {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.stop != nil {
		return fmt.Errorf("messaging: Start called twice")
	}
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		var wg sync.WaitGroup
		wg.Add(6)
		go func() { defer wg.Done(); s.runFallbackSweeper(ctx, s.stop) }()
		go func() { defer wg.Done(); s.listenChanges(ctx, s.stop) }()
		go func() { defer wg.Done(); s.runTemplateSync(ctx, s.stop) }()
		go func() { defer wg.Done(); s.runConnectionChecks(ctx, s.stop) }()
		go func() { defer wg.Done(); s.dispatch.queue.Run(ctx, s.stop) }()
		go func() { defer wg.Done(); s.hooks.queue.Run(ctx, s.stop) }()
		wg.Wait()
	}()
	return nil
}

// Running reports whether the background work started by Start is
// running: Start was called, Close was not, and the workers have not
// stopped (ctx of Start not done). Readiness probes use it.
func (s *Service) Running() bool {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.stop == nil {
		return false
	}
	select {
	case <-s.stop:
		return false
	case <-s.done:
		return false
	default:
		return true
	}
}

// Close stops claiming new work and waits until in-flight sends, webhook
// deliveries and the recording of API key uses (APIKey.LastUsedAt) finish,
// or ctx ends. It does not close the store.
func (s *Service) Close(ctx context.Context) error {
	if err := s.touches.flush(ctx); err != nil {
		return err
	}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.stop == nil {
		return nil
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
