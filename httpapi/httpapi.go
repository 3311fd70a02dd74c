// Package httpapi serves the workspace Messaging API (/v1) of the spec over
// HTTP. New returns an http.Handler that can be mounted on any mux or
// server:
//
//	mux := http.NewServeMux()
//	mux.Handle("/v1/", httpapi.New(svc, nil))
//
// Every response carries X-Correlation-ID; every error is the spec's
// envelope {"error": {code, message, statusCode, request_id, docs}}.
// Requests authenticate with the X-API-Key header; each route needs the
// scopes listed in Routes and is rate limited per workspace with a token
// bucket (limits in Options.RateLimits; the buckets live in this process
// unless Options.Limiter shares them between instances).
//
// POST /v1/media takes multipart/form-data instead of JSON, read as it
// streams: its text fields, then the part named file, whose bytes go to
// the provider as they arrive (never held whole); its body is bounded by
// the largest file an upload takes plus 1 MiB, not Options.MaxBodyBytes.
//
// With Options.OperatorToken set, the handler also serves the operator
// routes under /admin/v1 (see OperatorRoutes): workspaces, their first
// key, SMS accounts, sender ids, top-ups and ledgers, for requests with
// the header "Authorization: Bearer <token>". Without it they are absent.
//
// The handler also answers the probes of a load balancer or an
// orchestrator, outside /v1, without authentication or rate limits:
// GET /healthz (the process serves) and GET /readyz (the store answers,
// its schema is current, the background workers run, the server is not
// draining); see Health. Options.MeterProvider and Options.TracerProvider
// record a metric and a span per request.
//
// The handler also mounts the receiver of each of the service's providers
// that offers one (messaging.CallbackReceiver), at the receiver's path:
// metaprovider's receiver of Meta's webhooks (status reports, inbound
// messages and template events of WhatsApp, Messenger and Instagram, at
// /webhooks/meta by default) when its Options.Webhook is set. Mount the
// handler there too.
package httpapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/sms"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is the default request body limit: 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultPublicPerMinute limits requests that carry no valid key (and
	// the public documents) per client address, which also slows down key
	// guessing.
	DefaultPublicPerMinute = 600
	// DefaultDocsURL is the default prefix of error.docs links.
	DefaultDocsURL = "/v1/errors/"
)

// Options configure the handler. A nil *Options means all defaults.
type Options struct {
	// RateLimits overrides the default per-minute limit of routes, keyed by
	// Route.Name() ("POST /v1/messages"; the SMS routes' names are the keys
	// of SMSRateLimits, limited per account), plus the key
	// "unauthenticated" for requests without a valid key. Routes not in
	// the map keep their default (see Routes); 0 turns a route's limit off.
	RateLimits map[string]int
	// DisableRateLimits turns every rate limit off (for load tests).
	DisableRateLimits bool
	// MaxBodyBytes is the largest accepted request body. Default 1 MiB.
	MaxBodyBytes int64
	// DocsURL prefixes the error code in error.docs. Default "/v1/errors/",
	// which this handler serves.
	DocsURL string
	// Logger receives one line per request (method, path, status,
	// duration, correlation id) and internal errors. Default: discard.
	Logger *slog.Logger
	// DisableRequestLog drops the per-request lines from Logger; warnings
	// and errors (internal errors, panics, a failing limiter) are still
	// logged. Default false: one line per request.
	DisableRequestLog bool
	// Clock returns the current time, for rate limiting. Default: the
	// service's clock.
	Clock func() time.Time
	// TrustedProxies are the reverse proxies in front of the handler
	// (CIDR prefixes): from a peer among them, the client address of
	// unauthenticated rate limits is the right-most X-Forwarded-For entry
	// that is not itself a trusted proxy, so a client cannot choose it by
	// writing the header. Default none: the header is ignored.
	TrustedProxies []netip.Prefix
	// TrustProxy trusts the connection's peer as the one reverse proxy in
	// front of the handler, whatever its address: the client address is
	// the right-most X-Forwarded-For entry (the one the proxy appended).
	// Default false.
	TrustProxy bool
	// SMS, when set, is served as the SMS API under /sms/v1 (see sms.go).
	// Default nil: the SMS routes are absent.
	SMS *sms.SMS
	// SMSCallback, when set with SMS and a Secret, mounts the route
	// receiving the delivery reports the SMS upstream pushes (see
	// SMSCallback). Default nil: no such route.
	SMSCallback *SMSCallback
	// Limiter holds the token buckets of the rate limits. Default nil:
	// buckets in this process, so each server instance limits on its own.
	// Set it to a shared limiter (store/pgstore's RateLimiter) when several
	// instances serve one deployment. A request the limiter cannot decide
	// on (it returned an error) is let through and the error logged:
	// the limits protect the service, an outage of the limiter should not
	// stop it.
	Limiter Limiter
	// OperatorToken, when set, opens the operator routes under /admin/v1
	// (see OperatorRoutes) to requests with the header
	// "Authorization: Bearer <OperatorToken>". The handler keeps only its
	// SHA-256, compares it in constant time and never logs it. The routes
	// of SMS accounts need SMS too. Default empty: the operator routes
	// are absent (404).
	OperatorToken string
	// MeterProvider receives the handler's request metrics (see
	// MetricRequestDuration). Default nil: no-op, which costs nothing.
	MeterProvider metric.MeterProvider
	// TracerProvider receives a server span for each request, named
	// "METHOD route". Default nil: no spans.
	TracerProvider trace.TracerProvider
	// Propagator, when set with TracerProvider, reads the caller's trace
	// context from the request headers (propagation.TraceContext{} for
	// the W3C traceparent), so the request's span joins the caller's
	// trace. Default nil: each request starts a trace; headers are not
	// read.
	Propagator propagation.TextMapPropagator
	// Health answers GET /healthz and GET /readyz (see Health). Default
	// nil: a Health of the service (and of SMS when set) with default
	// options; Handler.Health returns it.
	Health *Health
}

// Handler serves the Messaging API. Create it with New.
type Handler struct {
	svc        *messaging.Service
	mux        *http.ServeMux
	log        *slog.Logger
	requestLog bool
	now        func() time.Time
	docsURL    string
	maxBody    int64
	limits     map[string]int
	noLimits   bool
	trustProxy bool
	proxies    []netip.Prefix
	limiter    Limiter
	// sms is Options.SMS; opHash is the SHA-256 of Options.OperatorToken,
	// nil without one.
	sms    *sms.SMS
	opHash []byte
	// tel records request metrics and spans; health answers the probes.
	tel    *httpTelemetry
	health *Health
	// fields caches the JSON member names of decoded struct types
	// (reflect.Type to map[string]reflect.Type), for the strict decoder.
	fields sync.Map
	// channelPut is the type of the body of PUT /v1/channels/{channel},
	// built from the service's channels (see channelPutType).
	channelPut reflect.Type
}

var _ http.Handler = (*Handler)(nil)

// New returns a handler serving the Messaging API of svc.
func New(svc *messaging.Service, opts *Options) *Handler {
	o := defaults.Of(opts)
	h := &Handler{
		svc: svc, mux: http.NewServeMux(), log: defaults.Logger(o.Logger), requestLog: !o.DisableRequestLog, now: o.Clock,
		docsURL: cmp.Or(o.DocsURL, DefaultDocsURL), maxBody: o.MaxBodyBytes, limits: map[string]int{"unauthenticated": DefaultPublicPerMinute},
		noLimits: o.DisableRateLimits, trustProxy: o.TrustProxy, proxies: slices.Clone(o.TrustedProxies), limiter: o.Limiter,
	}
	if h.limiter == nil {
		h.limiter = &limiterSet{}
	}
	h.channelPut = channelPutType(svc.ChannelSpecs())
	h.tel = newHTTPTelemetry(o.MeterProvider, o.TracerProvider)
	h.tel.propagator = o.Propagator
	h.health = o.Health
	if h.health == nil {
		h.health = NewHealth(svc, &HealthOptions{SMS: o.SMS, Logger: o.Logger})
	}
	h.mux.HandleFunc(HealthzPath, h.health.serveLive)
	h.mux.HandleFunc(ReadyzPath, h.health.serveReady)
	if h.now == nil {
		h.now = svc.Now
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	h.sms = o.SMS
	if o.OperatorToken != "" {
		sum := sha256.Sum256([]byte(o.OperatorToken))
		h.opHash = sum[:]
	}
	for _, ep := range endpoints() {
		h.limits[ep.Name()] = ep.PerMinute
	}
	for k, v := range o.RateLimits {
		h.limits[k] = v
	}
	h.mountRoutes()
	h.mux.HandleFunc("/", h.notFound)
	if o.SMS != nil && o.SMSCallback != nil {
		h.mountSMSCallback(o.SMSCallback)
	}
	h.mountReceivers()
	return h
}

// notFound answers a path with no endpoint: 404 not_found.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeError(w, r, &apiError{code: messaging.CodeNotFound, status: http.StatusNotFound, message: "no endpoint at " + strconv.Quote(r.URL.Path)})
}

// cleanPath reports whether p is already in the form http.ServeMux routes
// (rooted, no "//", "." or ".." elements); ServeMux answers other paths
// with a bare redirect instead of the error envelope.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

type ctxKey struct{}

// requestState is what the handler keeps of a request while serving it:
// its correlation id, and whether it is a request of the SMS API, whose
// errors writeError answers with flat bodies instead of the envelope.
type requestState struct {
	id  string
	sms bool
}

// stateOf returns the state of r, empty for a request that ServeHTTP did
// not start serving.
func stateOf(r *http.Request) *requestState {
	if st, ok := r.Context().Value(ctxKey{}).(*requestState); ok {
		return st
	}
	return &requestState{}
}

// markSMS marks r as a request of the SMS API, from routing on: its
// errors, a panic's included, are answered with flat bodies.
func markSMS(r *http.Request) { stateOf(r).sms = true }

// correlationID returns the request's correlation id.
func correlationID(r *http.Request) string { return stateOf(r).id }

var saneTokenRe = regexp.MustCompile(`^[A-Za-z0-9._:/+=-]{1,128}$`)

// statusWriter records the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ServeHTTP implements http.Handler: it assigns the correlation id, logs
// the request, recovers from panics and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ids := r.Header[hdrCorrelationID]
	var id string
	if len(ids) > 0 {
		id = ids[0]
	}
	if len(ids) != 1 || !saneTokenRe.MatchString(id) {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = "req_" + hex.EncodeToString(b[:])
	}
	ctx, span := h.tel.startRequest(r)
	r = r.WithContext(context.WithValue(ctx, ctxKey{}, &requestState{id: id}))
	w.Header()[hdrCorrelationID] = []string{id}
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				h.tel.endRequest(r.Context(), span, r, http.StatusInternalServerError, start)
				panic(p)
			}
			h.log.ErrorContext(r.Context(), "panic", "correlation_id", id, "path", r.URL.Path, "panic", fmt.Sprint(p))
			if sw.status == 0 {
				h.writeError(sw, r, fmt.Errorf("panic: %v", p))
			}
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		h.tel.endRequest(r.Context(), span, r, status, start)
		if h.requestLog {
			h.log.InfoContext(r.Context(), "request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"duration_ms", float64(time.Since(start).Microseconds())/1000, "correlation_id", id)
		}
	}()
	if !cleanPath(r.URL.Path) {
		h.notFound(sw, r)
		return
	}
	h.mux.ServeHTTP(sw, r)
}
