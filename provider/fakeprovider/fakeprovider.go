// Package fakeprovider is a deterministic, in-memory simulator of the
// channel provider (Meta's WhatsApp Cloud API, Messenger and Instagram). It
// applies Meta's rules and error codes without any network, so examples and
// tests see the same outcomes a real provider gives, at times they control.
//
// # Sending
//
// Send checks a message and either refuses it with a *messaging.SendError
// (never retryable, unless scripted with FailNext) or accepts it and returns
// a sequential provider message id ("wamid.fake.000001", ...; the prefix is
// Options.IDPrefix). The checks, in order:
//
//   - A malformed message (nil, unknown channel or type, missing recipient,
//     text or media link, a template outside WhatsApp, a WhatsApp recipient
//     not in E.164 form) is refused with 100 "Invalid parameter".
//   - When Options.Templates is set, a template send is checked against the
//     provider's own copy of the template: an unknown name or language, or a
//     template that is not approved, is 132001 "Template name does not exist
//     in the translation"; a paused template is 132015 "Template is paused"
//     and a disabled one 132016 "Template is disabled"; a header or body
//     parameter count that differs from the template's variables is 132000
//     "Number of parameters does not match the expected number of params"; a
//     media header without its media parameter, or a dynamic URL button (URL
//     ending in {{1}}) or COPY_CODE button without its button component, is
//     131008 "Required parameter is missing"; a media parameter of the wrong
//     kind is 132012 "Parameter format does not match format in the created
//     template"; a button component naming a button the template does not
//     have (or of another kind) is 131009 "Parameter value is not valid".
//     Without Options.Templates, template sends are not checked.
//   - A rich message (Message.Outbound) is checked against what its channel
//     carries, as metaprovider.ChannelSpecs says (ChannelSpec.Outbound):
//     an interactive type, header or footer, a location, contacts, reaction,
//     sticker, reaction emoji or quoted message (Outbound.Context) the
//     channel does not carry, a member of another type than the message's,
//     a missing member, or both a media link and an uploaded media id, is
//     refused with 100 "Invalid parameter"; too many buttons, list rows or
//     body characters with 131009 "Parameter value is not valid".
//   - An uploaded media id (Outbound.Media.ProviderMediaID, or an
//     interactive header's) that UploadMedia did not give (a template
//     sample handle included, or another workspace's upload), that expired
//     by the fake's clock, or whose MIME type WhatsApp does not send as the
//     message's type (a sticker must be image/webp; an image JPEG or PNG; a
//     video MP4 or 3GPP; an audio any audio/*; a document anything) is
//     refused with 131009. So is a reaction or a quote of a provider
//     message id the fake did not give to a send or a received message, or
//     was not given by Receive.
//   - With Options.CustomerServiceWindow, a free-form (non-template) WhatsApp
//     message to a number that has not written in the last 24 hours (as told
//     with Inbound) is refused with 131047 "Re-engagement message".
//
// Accepted messages are recorded in order (see Sent). The magic numbers
// below (0000, 0408) act on messages of every type.
//
// # Uploads and read marks
//
// UploadMedia (messaging.MediaUploader) and UploadTemplateSample
// (messaging.TemplateSampleUploader) read the whole body, streaming,
// and keep only its length, SHA-256 and type (see Uploads); their ids
// ("fake-media-1", ...) and handles ("fake-handle-1", ...) live
// MediaLifetime (30 days) by the fake's clock. FetchMedia serves an
// uploaded id with its type and size. MarkRead (messaging.ReadMarker)
// accepts the ids of received messages only, and records each call (see
// ReadMarks).
//
// # Status reports
//
// Like Meta, the fake reports what happens to an accepted message later and
// asynchronously, as provider status reports applied to a Sink
// (*messaging.Service is one): delivered Options.DeliveredAfter after the
// send, then read Options.ReadAfter after that. A recipient whose E.164
// number ends in 0000 is accepted by Send but then reported failed with
// 131026 "Message undeliverable" (at the time delivered would have come), as
// Meta does through its status webhook. Every report carries the message's
// workspace and id (messaging.ProviderStatus.WorkspaceID and MessageID), as
// Meta echoes biz_opaque_callback_data, so that a report confirms a send
// whose answer the service never recorded.
//
// # Accepted, then no answer
//
// A recipient whose number ends in 0408, and the next n sends after
// HangNext(n), are accepted (recorded, their reports scheduled) and then
// not answered: Send waits until its context ends and returns the
// context's error, as a provider that took the message and answered after
// the caller's timeout. The service then waits for the report to confirm
// the send rather than send it again.
//
// Reports are never sent from inside Send and never by a timer of their
// own: the fake keeps a schedule of pending reports, each with a due time,
// and Flush applies every report due at Options.Clock(), oldest first. This
// keeps tests deterministic (advance the injected clock, call Flush) and
// guarantees that a report never overtakes the dispatcher: if the Sink says
// not_found because the dispatcher has not yet recorded sent and the
// provider message id, the report (and every later report of the same
// message) stays scheduled and is tried again by the next Flush, for up to
// Options.RetryFor. (*messaging.Service never says so: it keeps such a
// report itself and applies it when the id is recorded.) Run calls Flush
// periodically, for long-running servers.
//
// # Verifying connections
//
// VerifyConnection (messaging.ConnectionVerifier) answers as Meta would
// for the given account and token, with no network: a token that begins
// with "deny_" is refused as Meta's 190 "Invalid OAuth access token"; a
// token that begins with "unreachable_" cannot be verified (an error that
// tells nothing, as an outage would; the connection stays pending); an
// account named in Options.Accounts (or SetAccountToken) is proven only by
// its token there, any other is refused naming the account's field; any
// other token proves the account. Channels connected without credentials
// are never verified and send as before. A WhatsApp number is reported
// with the quality rating GREEN and the messaging tier TIER_1K
// (DefaultQualityRating, DefaultMessagingTier) unless SetAccountHealth
// says otherwise.
//
// # Inbound messages
//
// Receive simulates a contact writing to the workspace: the message goes
// at once to the Sink's RecordInbound (*messaging.Service records it and
// announces it with a message.received event), as Meta's webhook would.
//
// # Template review
//
// The fake reviews templates like Meta, deterministically (see
// SubmitTemplate): a template whose media header has no live sample handle
// of UploadTemplateSample is refused at once with 100 "Invalid parameter";
// any other submitted template is approved Options.ReviewAfter
// later, except a template whose name starts with "reject_", which is
// rejected with reason INVALID_FORMAT. TemplateEvent schedules a later
// event (PAUSED, DISABLED, REINSTATED, ...). Review events reach a Sink
// that is a TemplateSink (*messaging.Service is one) through Flush, like
// status reports.
//
// # Scripted failures
//
// FailNext queues errors that the next Send calls return instead of
// sending, for example a retryable 130429 rate limit, so that callers can
// test their retry paths.
package fakeprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/defaults"
)

var _ messaging.Provider = (*Provider)(nil)

// Error codes and texts of the provider, as Meta's Graph API uses them.
const (
	CodeInvalidParameter = "100"
	TextInvalidParameter = "Invalid parameter"
	CodeUndeliverable    = "131026"
	TextUndeliverable    = "Message undeliverable"
	CodeReengagement     = "131047"
	TextReengagement     = "Re-engagement message"
	CodeParamCount       = "132000"
	TextParamCount       = "Number of parameters does not match the expected number of params"
	CodeTemplateNotFound = "132001"
	TextTemplateNotFound = "Template name does not exist in the translation"
	CodeParamMissing     = "131008"
	TextParamMissing     = "Required parameter is missing"
	CodeParamInvalid     = "131009"
	TextParamInvalid     = "Parameter value is not valid"
	CodeParamFormat      = "132012"
	TextParamFormat      = "Parameter format does not match format in the created template"
	CodeTemplatePaused   = "132015"
	TextTemplatePaused   = "Template is paused"
	CodeTemplateDisabled = "132016"
	TextTemplateDisabled = "Template is disabled"
)

const (
	// undeliverableSuffix ends the numbers whose messages fail with 131026.
	undeliverableSuffix = "0000"
	// hangSuffix ends the numbers whose sends are accepted and not answered.
	hangSuffix = "0408"
	// serviceWindow is WhatsApp's customer service window.
	serviceWindow        = 24 * time.Hour
	defaultIDPrefix      = "wamid.fake."
	defaultFlushInterval = time.Second
	defaultRetryFor      = 24 * time.Hour
)

// TemplateLookup returns the provider's copy of the template with exactly
// this name and language in a workspace. A template that does not exist is
// reported as (nil, nil) or as an error matching messaging.ErrNotFound; any
// other error makes Send fail with that (retryable) error.
type TemplateLookup func(ctx context.Context, workspaceID, name, language string) (*messaging.Template, error)

// Sink receives the provider's status reports. *messaging.Service satisfies
// it. A Sink may report an unknown provider message id as an error matching
// messaging.ErrNotFound, and the report is tried again later (see Flush);
// *messaging.Service instead keeps the report and answers no error.
type Sink interface {
	ApplyProviderStatus(ctx context.Context, s *messaging.ProviderStatus) (bool, error)
}

// Options configure a Provider. A nil *Options means all defaults.
type Options struct {
	// Clock returns the current time; reports are due relative to it.
	// Default: time.Now.
	Clock func() time.Time
	// DeliveredAfter is the time from an accepted send to its delivered
	// (or, for undeliverable numbers, failed) report. Default 0: due at
	// once, applied by the next Flush. Negative: messages are never
	// reported delivered (an undeliverable number still fails at once).
	DeliveredAfter time.Duration
	// ReadAfter is the time from the delivered report to the read report.
	// Default 0. Negative: messages are never reported read.
	ReadAfter time.Duration
	// Templates is the provider's own copy of the templates, against which
	// template sends are checked. Default nil: template sends are accepted
	// unchecked.
	Templates TemplateLookup
	// Sink receives status reports. It may also be set later with SetSink
	// (the usual case, since a *messaging.Service is created after its
	// provider). Default nil: reports stay scheduled until a Sink is set.
	Sink Sink
	// CustomerServiceWindow enforces WhatsApp's 24-hour customer service
	// window on free-form messages (see the package comment). Default off.
	CustomerServiceWindow bool
	// IDPrefix starts every provider message id. Default "wamid.fake.". A
	// server that keeps messages across restarts should make it unique per
	// process (for example with the start time), since the sequence
	// restarts at 1.
	IDPrefix string
	// FlushInterval is how often Run flushes. Default 1 s.
	FlushInterval time.Duration
	// RetryFor is how long after its due time a report whose message the
	// Sink does not know yet is retried before it is dropped. Default 24 h.
	RetryFor time.Duration
	// Logger receives Run's flush errors and dropped reports. Default:
	// discard.
	Logger *slog.Logger
	// Accounts, when it names an account id (a phone-number, page or
	// Instagram account id), is the only access token that proves that
	// account (VerifyConnection); the default (nil, or an account it does
	// not name) accepts any token but those VerifyConnection always
	// refuses (see "Verifying connections" in the package comment).
	Accounts map[string]string
	// KeepSent bounds the accepted messages Sent returns to the latest
	// KeepSent. Default 0: every one, which suits tests; a long-running
	// server should set a bound (or a negative value: none), since each is
	// kept in memory.
	KeepSent int
	// MaxPending bounds the scheduled reports: while that many are
	// pending, Send first drops the oldest reports of messages the Sink
	// reported unknown (logging how many), and, if none are, waits (until
	// Flush applies some, or its context ends) before it accepts a message.
	// A dispatcher that sends faster than the Sink takes reports then keeps
	// its backlog in its own queue, not in the provider's memory, and
	// reports nobody will take never block sends. Default 0: no bound,
	// which suits tests.
	MaxPending int
	// FlushWorkers is how many messages' reports Flush applies at once.
	// Default 1: one report after the other, in due order. With more,
	// each message's reports are still applied in due order, and a server
	// whose Sink stores each report keeps up with more messages a second.
	FlushWorkers int
	// ReviewAfter is the time from a template's submission to its review
	// result (see SubmitTemplate). Default 0: due at once, applied by the
	// next Flush. Negative: templates stay pending.
	ReviewAfter time.Duration
	// TemplateIDPrefix starts every template id the fake gives. Default
	// "fake-tpl-". Like IDPrefix, a server that keeps templates across
	// restarts should make it unique per process.
	TemplateIDPrefix string
	// MediaIDPrefix starts every media id UploadMedia gives, and
	// HandlePrefix every template sample handle UploadTemplateSample
	// gives. Defaults "fake-media-" and "fake-handle-". Uploads are kept
	// in memory only, so a server that keeps messages across restarts
	// should make them unique per process: an id of an earlier process is
	// then refused, as an upload Meta forgot, instead of naming another
	// file.
	MediaIDPrefix, HandlePrefix string
}

// Report is a status report the provider has scheduled.
type Report struct {
	// Due is when the report becomes deliverable.
	Due time.Time
	// Status is the report itself.
	Status messaging.ProviderStatus
	seq    uint64
}

// Provider is the fake channel provider. Create it with New or
// NewWithOptions. It is safe for concurrent use.
type Provider struct {
	opts Options

	flushMu sync.Mutex // serialises Flush

	mu       sync.Mutex
	sink     Sink
	seq      int
	sent     []*messaging.Message
	pending  []Report
	nextSeq  uint64
	failNext []error
	hangNext int
	inbound  map[string]time.Time // workspace + "\x00" + number -> last inbound
	inSeq    int                  // numbers the inbound messages of Receive
	drained  chan struct{}        // closed, and replaced, when Flush takes reports off pending
	// unknown holds the provider message ids the Sink last reported as
	// not found; their reports are the first dropped when pending is full.
	unknown map[string]bool
	// tplSeq numbers submitted templates; tplEvents holds the scheduled
	// template review events (templates.go).
	tplSeq    int
	tplEvents []templateEvent
	// accounts is Options.Accounts with SetAccountToken's changes.
	accounts map[string]string
	// health holds SetAccountHealth's quality rating and tier by account.
	health map[string][2]string
	// received holds the provider message ids given to Receive (the ids
	// it gives are known by inSeq); uploads the media and template
	// samples uploaded, by id; mediaSeq and handleSeq number them; reads
	// holds MarkRead's calls (upload.go).
	received  map[string]bool
	uploads   map[string]*Upload
	uploadIDs []string
	mediaSeq  int
	handleSeq int
	reads     []ReadMark
}

// New returns a Provider with default Options: it accepts every well-formed
// message, does not check templates, and schedules delivered and read
// reports due at once, delivered to a Sink set with SetSink.
func New() *Provider { return NewWithOptions(nil) }

// NewWithOptions returns a Provider configured by opts (nil means defaults).
func NewWithOptions(opts *Options) *Provider {
	o := defaults.Of(opts)
	o.Clock, o.Logger = defaults.Clock(o.Clock), defaults.Logger(o.Logger)
	o.IDPrefix = cmp.Or(o.IDPrefix, defaultIDPrefix)
	o.TemplateIDPrefix = cmp.Or(o.TemplateIDPrefix, "fake-tpl-")
	o.MediaIDPrefix, o.HandlePrefix = cmp.Or(o.MediaIDPrefix, "fake-media-"), cmp.Or(o.HandlePrefix, "fake-handle-")
	defaults.Positive(&o.FlushInterval, defaultFlushInterval)
	defaults.Positive(&o.RetryFor, defaultRetryFor)
	accounts := map[string]string{}
	for k, v := range o.Accounts {
		accounts[k] = v
	}
	return &Provider{opts: o, sink: o.Sink, inbound: map[string]time.Time{}, drained: make(chan struct{}), unknown: map[string]bool{}, accounts: accounts,
		received: map[string]bool{}, uploads: map[string]*Upload{}}
}

// SetSink sets the Sink that Flush applies status reports to.
func (p *Provider) SetSink(s Sink) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sink = s
}

// FailNext queues errors that the next Send calls return, one per call and
// in order, before any other check; such sends are not recorded. Use a
// *messaging.SendError to simulate a provider error (for example
// {Code: "130429", Retryable: true, RetryAfter: time.Minute}) or any other
// error to simulate a transport failure.
func (p *Provider) FailNext(errs ...error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failNext = append(p.failNext, errs...)
}

// HangNext makes the next n sends that the provider accepts go unanswered:
// each is recorded and its reports scheduled, and then Send waits until
// its context ends and returns the context's error.
func (p *Provider) HangNext(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hangNext += n
}

// Inbound tells the provider that from wrote to the workspace at time at,
// which opens the 24-hour customer service window for free-form messages to
// from (see Options.CustomerServiceWindow). from is an E.164 number; a
// missing leading '+' is added.
func (p *Provider) Inbound(workspaceID, from string, at time.Time) {
	key := workspaceID + "\x00" + withPlus(from)
	p.mu.Lock()
	defer p.mu.Unlock()
	if last, ok := p.inbound[key]; !ok || at.After(last) {
		p.inbound[key] = at
	}
}

// InboundSink records inbound messages; *messaging.Service is one.
type InboundSink interface {
	RecordInbound(ctx context.Context, in *messaging.InboundMessage) (*messaging.Message, error)
}

// Receive simulates a message a contact sends to the workspace, as Meta's
// webhook would report it: it opens the customer-service window of the
// sender (as Inbound does, for WhatsApp) and hands the message at once to
// the Sink, which must be an InboundSink (*messaging.Service is one), and
// returns the message as recorded. An empty in.ProviderMessageID gets a
// sequential one (Options.IDPrefix + "in.000001", ...); an empty
// in.Channel is whatsapp and an empty in.Type text. Reporting the same
// ProviderMessageID again is a repeated report: the Sink records it once.
func (p *Provider) Receive(ctx context.Context, in *messaging.InboundMessage) (*messaging.Message, error) {
	if in == nil {
		return nil, errors.New("fakeprovider: Receive of a nil message")
	}
	msg := *in
	msg.Channel = cmp.Or(msg.Channel, messaging.ChannelWhatsApp)
	msg.Type = cmp.Or(msg.Type, record.TypeText)
	p.mu.Lock()
	sink, _ := p.sink.(InboundSink)
	switch {
	case sink != nil && msg.ProviderMessageID == "":
		p.inSeq++
		msg.ProviderMessageID = fmt.Sprintf("%sin.%06d", p.opts.IDPrefix, p.inSeq)
	case sink != nil:
		p.received[msg.ProviderMessageID] = true
	}
	p.mu.Unlock()
	if sink == nil {
		return nil, errors.New("fakeprovider: Receive needs a Sink that records inbound messages (SetSink with a *messaging.Service)")
	}
	if msg.Channel == messaging.ChannelWhatsApp {
		p.Inbound(msg.WorkspaceID, msg.From, p.opts.Clock())
	}
	return sink.RecordInbound(ctx, &msg)
}

func withPlus(n string) string {
	if n != "" && !strings.HasPrefix(n, "+") {
		return "+" + n
	}
	return n
}

func refuse(code, text string) *messaging.SendError {
	return &messaging.SendError{Code: code, Text: text}
}

// Send checks m under the provider's rules (see the package comment) and,
// if it is accepted, records it, schedules its status reports and returns
// its provider message id. A refusal is a *messaging.SendError. The
// sender is not looked at: the simulator needs no credentials.
func (p *Provider) Send(ctx context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if len(p.failNext) > 0 {
		err := p.failNext[0]
		p.failNext = p.failNext[1:]
		p.mu.Unlock()
		return nil, err
	}
	p.mu.Unlock()
	if m == nil {
		return nil, refuse(CodeInvalidParameter, TextInvalidParameter)
	}
	if err := checkShape(m); err != nil {
		return nil, err
	}
	if m.Type == record.TypeTemplate && p.opts.Templates != nil {
		if err := p.checkTemplate(ctx, m); err != nil {
			return nil, err
		}
	}
	if err := p.waitForRoom(ctx); err != nil {
		return nil, err
	}
	now := p.opts.Clock()

	id, hang, err := p.accept(m, now)
	if err != nil {
		return nil, err
	}
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &messaging.SendReceipt{ProviderMessageID: id}, nil
}

// accept records an accepted send of m at now and schedules its reports;
// hang reports that the send is not to be answered.
func (p *Provider) accept(m *messaging.Message, now time.Time) (id string, hang bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkIDs(m, now); err != nil {
		return "", false, err
	}
	if p.opts.CustomerServiceWindow && m.Channel == messaging.ChannelWhatsApp && m.Type != record.TypeTemplate {
		last, ok := p.inbound[m.WorkspaceID+"\x00"+m.To]
		if !ok || now.Sub(last) >= serviceWindow {
			return "", false, refuse(CodeReengagement, TextReengagement)
		}
	}
	p.seq++
	id = fmt.Sprintf("%s%06d", p.opts.IDPrefix, p.seq)
	if k := p.opts.KeepSent; k >= 0 {
		p.sent = append(p.sent, m.Clone())
		if k > 0 && len(p.sent) >= 2*k {
			// Drop the oldest, copying once per k sends.
			p.sent = append([]*messaging.Message(nil), p.sent[len(p.sent)-k:]...)
		}
	}

	d, r := p.opts.DeliveredAfter, p.opts.ReadAfter
	report := func(status string) messaging.ProviderStatus {
		return messaging.ProviderStatus{ProviderMessageID: id, Status: status, WorkspaceID: m.WorkspaceID, MessageID: m.ID}
	}
	switch {
	case strings.HasPrefix(m.To, "+") && strings.HasSuffix(m.To, undeliverableSuffix):
		st := report(messaging.StatusFailed)
		st.Code, st.Text = CodeUndeliverable, TextUndeliverable
		p.schedule(now.Add(max(d, 0)), st)
	case d >= 0:
		p.schedule(now.Add(d), report(messaging.StatusDelivered))
		if r >= 0 {
			p.schedule(now.Add(d+r), report(messaging.StatusRead))
		}
	}
	hang = strings.HasSuffix(m.To, hangSuffix)
	if !hang && p.hangNext > 0 {
		p.hangNext--
		hang = true
	}
	return id, hang, nil
}

// waitForRoom waits while Options.MaxPending reports are scheduled, after
// dropping the oldest reports of unknown messages to make room.
func (p *Provider) waitForRoom(ctx context.Context) error {
	for {
		p.mu.Lock()
		full, drained := p.opts.MaxPending > 0 && len(p.pending) >= p.opts.MaxPending, p.drained
		dropped := 0
		if full {
			dropped = p.dropUnknown()
			full = len(p.pending) >= p.opts.MaxPending
		}
		p.mu.Unlock()
		if dropped > 0 {
			p.opts.Logger.WarnContext(ctx, "fakeprovider: pending reports at MaxPending: dropped the oldest reports of unknown messages",
				"dropped", dropped, "max_pending", p.opts.MaxPending)
		}
		if !full {
			return nil
		}
		select {
		case <-drained:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// dropUnknown removes the oldest reports of messages the Sink reported
// unknown, a tenth of MaxPending at least, and returns how many it
// removed; p.mu is held.
func (p *Provider) dropUnknown() int {
	want := len(p.pending) - p.opts.MaxPending + max(1, p.opts.MaxPending/10)
	dropped := 0
	p.pending = slices.DeleteFunc(p.pending, func(r Report) bool {
		if dropped < want && p.unknown[r.Status.ProviderMessageID] {
			dropped++
			return true
		}
		return false
	})
	// Forget the ids that no longer have reports.
	left := map[string]bool{}
	for _, r := range p.pending {
		if p.unknown[r.Status.ProviderMessageID] {
			left[r.Status.ProviderMessageID] = true
		}
	}
	p.unknown = left
	return dropped
}

// schedule adds a report; p.mu is held.
func (p *Provider) schedule(due time.Time, s messaging.ProviderStatus) {
	p.nextSeq++
	r := Report{Due: due, Status: s, seq: p.nextSeq}
	// Reports are scheduled in nearly due order: the place of a new one is
	// found by binary search, usually at the end.
	i, _ := slices.BinarySearchFunc(p.pending, r, compareReports)
	p.pending = slices.Insert(p.pending, i, r)
}

// compareReports orders reports by due time, then by scheduling order.
func compareReports(a, b Report) int {
	if c := a.Due.Compare(b.Due); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

func sortReports(rs []Report) {
	slices.SortFunc(rs, compareReports)
}

// checkShape refuses malformed messages with 100 Invalid parameter.
func checkShape(m *messaging.Message) error {
	bad := func(detail string) error {
		return refuse(CodeInvalidParameter, TextInvalidParameter+": "+detail)
	}
	switch m.Channel {
	case messaging.ChannelWhatsApp, messaging.ChannelMessenger, messaging.ChannelInstagram:
	default:
		return bad(fmt.Sprintf("unknown channel %q", m.Channel))
	}
	if m.To == "" {
		return bad("the recipient is required")
	}
	if m.Channel == messaging.ChannelWhatsApp && !isE164(m.To) {
		return bad("the recipient must be a phone number in E.164 form")
	}
	switch m.Type {
	case record.TypeText:
		if strings.TrimSpace(m.Text) == "" {
			return bad("text.body is required")
		}
	case record.TypeImage, record.TypeVideo, record.TypeDocument, record.TypeAudio, record.TypeSticker,
		record.TypeInteractive, record.TypeLocation, record.TypeContacts, record.TypeReaction:
		// checkRich checks them against the channel.
	case record.TypeTemplate:
		if m.Channel != messaging.ChannelWhatsApp {
			return bad("templates are sent on whatsapp only")
		}
		if m.TemplateName == "" || m.Language == "" {
			return bad("template.name and template.language.code are required")
		}
	default:
		return bad(fmt.Sprintf("unknown message type %q", m.Type))
	}
	return checkRich(m)
}

func isE164(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkTemplate checks a template send against the provider's copy.
func (p *Provider) checkTemplate(ctx context.Context, m *messaging.Message) error {
	t, err := p.opts.Templates(ctx, m.WorkspaceID, m.TemplateName, m.Language)
	if err != nil && !errors.Is(err, messaging.ErrNotFound) {
		return fmt.Errorf("fakeprovider: template lookup: %w", err)
	}
	if err != nil || t == nil || t.Name != m.TemplateName || t.Language != m.Language {
		return refuse(CodeTemplateNotFound, TextTemplateNotFound)
	}
	switch t.Status {
	case record.TemplateApproved:
	case record.TemplatePaused:
		return refuse(CodeTemplatePaused, TextTemplatePaused)
	case record.TemplateDisabled:
		return refuse(CodeTemplateDisabled, TextTemplateDisabled)
	default:
		return refuse(CodeTemplateNotFound, TextTemplateNotFound)
	}
	if err := checkTextParams(t, m); err != nil {
		return err
	}
	return checkButtonParams(t, m)
}

// checkTextParams checks the header and body parameters of the template
// send m against t: one per variable of a text header and of the body, one
// media link of the header's format for a media header.
func checkTextParams(t *messaging.Template, m *messaging.Message) error {
	count := func(typ string) (n int) {
		for _, c := range m.Components {
			if c.Type == typ {
				n += len(c.Parameters)
			}
		}
		return n
	}
	var header *messaging.TemplateComponent
	bodyVars, headerVars := 0, 0
	for i := range t.Components {
		c := &t.Components[i]
		switch c.Type {
		case "HEADER":
			header = c
			if c.Format == "" || c.Format == "TEXT" {
				headerVars = countVars(c.Text)
			}
		case "BODY":
			bodyVars = countVars(c.Text)
		}
	}
	mediaHeader := header != nil && header.Format != "" && header.Format != "TEXT"
	if !mediaHeader && count("header") != headerVars {
		return refuse(CodeParamCount, TextParamCount)
	}
	if count("body") != bodyVars {
		return refuse(CodeParamCount, TextParamCount)
	}
	if !mediaHeader {
		return nil
	}
	var ps []messaging.SendParameter
	for _, c := range m.Components {
		if c.Type == "header" {
			ps = append(ps, c.Parameters...)
		}
	}
	switch {
	case len(ps) == 0:
		return refuse(CodeParamMissing, TextParamMissing)
	case len(ps) > 1:
		return refuse(CodeParamCount, TextParamCount)
	case ps[0].Type != strings.ToLower(header.Format) || ps[0].Link == "":
		return refuse(CodeParamFormat, TextParamFormat)
	}
	return nil
}

// checkButtonParams checks the button components of the template send m
// against t's buttons: each must name a button of the right kind, and a
// URL button with a variable and a copy-code button need their one
// parameter.
func checkButtonParams(t *messaging.Template, m *messaging.Message) error {
	var buttons []messaging.TemplateButton
	for _, c := range t.Components {
		if c.Type == "BUTTONS" {
			buttons = c.Buttons
		}
	}
	given := map[int]messaging.SendComponent{}
	for _, c := range m.Components {
		if c.Type != "button" {
			continue
		}
		if c.Index == nil || *c.Index < 0 || *c.Index >= len(buttons) || !buttonKindMatches(buttons[*c.Index], c.SubType) {
			return refuse(CodeParamInvalid, TextParamInvalid)
		}
		given[*c.Index] = c
	}
	for i, b := range buttons {
		need := ""
		switch {
		case b.Type == "URL" && strings.HasSuffix(b.URL, "{{1}}"):
			need = "text"
		case b.Type == "COPY_CODE":
			need = "coupon_code"
		default:
			continue
		}
		c, ok := given[i]
		if !ok || len(c.Parameters) == 0 {
			return refuse(CodeParamMissing, TextParamMissing)
		}
		if len(c.Parameters) != 1 || c.Parameters[0].Type != need {
			return refuse(CodeParamFormat, TextParamFormat)
		}
	}
	return nil
}

func buttonKindMatches(b messaging.TemplateButton, subType string) bool {
	switch subType {
	case "url":
		return b.Type == "URL"
	case "copy_code":
		return b.Type == "COPY_CODE"
	case "quick_reply":
		return b.Type == "QUICK_REPLY"
	}
	return false
}

// countVars returns the number of distinct variables ({{1}}, {{2}}, ...) in
// text; a malformed text counts its well-formed variables.
func countVars(text string) int {
	seen := map[int]bool{}
	for rest := text; ; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			break
		}
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			break
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil && n > 0 {
			seen[n] = true
		}
		rest = rest[j+2:]
	}
	return len(seen)
}

// Flush applies the template review events due at Clock() to the Sink
// (when it is a TemplateSink; see SubmitTemplate), then, in due order,
// every scheduled report due at Clock() to the Sink, and returns how many
// were applied (including reports the Sink
// ignored as out of order or repeated). A report the Sink answers with
// not_found, or with another error, stays scheduled together with every
// later report of the same message, and is tried again by the next Flush;
// a not_found report is dropped RetryFor after its due time. The error
// joins the Sink's errors other than not_found. Concurrent Flush calls run
// one after the other. Without a Sink, Flush applies nothing and returns
// an error if reports are due.
func (p *Provider) Flush(ctx context.Context) (int, error) {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	now := p.opts.Clock()

	p.mu.Lock()
	sink := p.sink
	p.mu.Unlock()
	var tplApplied int
	var errs []error
	if sink != nil {
		tplApplied, errs = p.flushTemplates(ctx, sink, now)
	}

	p.mu.Lock()
	n := 0
	for n < len(p.pending) && !p.pending[n].Due.After(now) {
		n++
	}
	if n > 0 && sink == nil {
		p.mu.Unlock()
		return 0, fmt.Errorf("fakeprovider: %d status reports are due but no Sink is set (see SetSink)", n)
	}
	due := slices.Clone(p.pending[:n])
	p.pending = slices.Delete(p.pending, 0, n)
	if n > 0 {
		close(p.drained)
		p.drained = make(chan struct{})
	}
	p.mu.Unlock()

	applied := tplApplied
	var keep []Report
	if workers := p.opts.FlushWorkers; workers <= 1 {
		a, k, e := p.apply(ctx, sink, now, due)
		applied, keep, errs = applied+a, k, append(errs, e...)
	} else {
		// Each message's reports, in due order, go to one worker.
		var ids []string
		byID := map[string][]Report{}
		for _, r := range due {
			id := r.Status.ProviderMessageID
			if byID[id] == nil {
				ids = append(ids, id)
			}
			byID[id] = append(byID[id], r)
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, workers)
		for _, id := range ids {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				a, k, e := p.apply(ctx, sink, now, byID[id])
				mu.Lock()
				applied, keep, errs = applied+a, append(keep, k...), append(errs, e...)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	if len(keep) > 0 {
		p.mu.Lock()
		p.pending = append(p.pending, keep...)
		sortReports(p.pending)
		p.mu.Unlock()
	}
	return applied, errors.Join(errs...)
}

// apply applies due reports in order, holding back every later report of
// a message whose report failed. It returns how many were applied, the
// reports to keep scheduled and the errors to report.
func (p *Provider) apply(ctx context.Context, sink Sink, now time.Time, due []Report) (applied int, keep []Report, errs []error) {
	held := map[string]bool{}
	for i, r := range due {
		if err := ctx.Err(); err != nil {
			keep = append(keep, due[i:]...)
			errs = append(errs, err)
			break
		}
		id := r.Status.ProviderMessageID
		if held[id] {
			keep = append(keep, r)
			continue
		}
		st := r.Status
		_, err := sink.ApplyProviderStatus(ctx, &st)
		switch {
		case err == nil:
			applied++
			p.markUnknown(id, false)
		case errors.Is(err, messaging.ErrNotFound):
			held[id] = true
			p.markUnknown(id, true)
			if now.Sub(r.Due) > p.opts.RetryFor {
				p.opts.Logger.WarnContext(ctx, "fakeprovider: dropping a status report of an unknown message",
					"provider_message_id", id, "status", r.Status.Status, "due", r.Due)
				p.markUnknown(id, false)
				continue
			}
			keep = append(keep, r)
		default:
			held[id] = true
			keep = append(keep, r)
			errs = append(errs, fmt.Errorf("fakeprovider: applying %s to %s: %w", r.Status.Status, id, err))
		}
	}
	return applied, keep, errs
}

// markUnknown records whether the Sink knows a provider message id.
func (p *Provider) markUnknown(id string, unknown bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if unknown {
		p.unknown[id] = true
	} else {
		delete(p.unknown, id)
	}
}

// Run calls Flush every Options.FlushInterval until ctx is done, logging
// errors, and returns ctx's error. The interval is real time; due times
// follow Options.Clock.
func (p *Provider) Run(ctx context.Context) error {
	t := time.NewTicker(p.opts.FlushInterval)
	defer t.Stop()
	for {
		if _, err := p.Flush(ctx); err != nil && ctx.Err() == nil {
			p.opts.Logger.WarnContext(ctx, "fakeprovider: flush", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Pending returns the scheduled reports in due order.
func (p *Provider) Pending() []Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.pending)
}

// Sent returns copies of the messages accepted so far, in order (the
// latest Options.KeepSent of them when that is set).
func (p *Provider) Sent() []*messaging.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	sent := p.sent
	if k := p.opts.KeepSent; k > 0 && len(sent) > k {
		sent = sent[len(sent)-k:]
	}
	out := make([]*messaging.Message, len(sent))
	for i, m := range sent {
		out[i] = m.Clone()
	}
	return out
}

// StaticTemplates returns a TemplateLookup over a fixed list of templates,
// for tests. A template with an empty WorkspaceID is found in every
// workspace.
func StaticTemplates(ts ...*messaging.Template) TemplateLookup {
	list := slices.Clone(ts)
	return func(_ context.Context, workspaceID, name, language string) (*messaging.Template, error) {
		for _, t := range list {
			if t != nil && t.Name == name && t.Language == language && (t.WorkspaceID == "" || t.WorkspaceID == workspaceID) {
				return t, nil
			}
		}
		return nil, messaging.ErrNotFound
	}
}
