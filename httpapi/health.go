package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/sms"
)

// Paths of the health probes served by Handler (and by Health itself).
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
)

// DefaultReadyTimeout is the default HealthOptions.Timeout.
const DefaultReadyTimeout = time.Second

// HealthOptions configure a Health. A nil *HealthOptions means all
// defaults.
type HealthOptions struct {
	// SMS, when set, is checked too: its scheduler must be running.
	SMS *sms.SMS
	// Timeout bounds the store's answer to the readiness check. Default
	// DefaultReadyTimeout (1 s).
	Timeout time.Duration
	// WorkersNotRequired makes readiness ignore the background workers,
	// for a program that drives them itself (DispatchDue, RunDue) instead
	// of calling Start. Default false: they must be running.
	WorkersNotRequired bool
	// Logger receives why a check failed (the answer only names it).
	// Default: discard.
	Logger *slog.Logger
}

// Health answers the probes of a load balancer or an orchestrator:
//
//   - GET /healthz: 200 {"status":"ok"} while the process serves.
//   - GET /readyz: 200 when the store answers a trivial query within
//     HealthOptions.Timeout and its schema is at the version the program
//     needs, the background workers run (messaging.Service.Running, and
//     the SMS scheduler's when set), and the server is not draining;
//     otherwise 503 with a JSON body naming what is not ready:
//     {"status":"not_ready","not_ready":["store"],"checks":{"store":"...",...}}.
//
// Neither needs authentication or counts against a rate limit; /readyz
// makes one small store query. Handler serves both; mount a Health alone
// where the API is served elsewhere. It is safe for concurrent use.
type Health struct {
	svc      *messaging.Service
	sms      *sms.SMS
	timeout  time.Duration
	workers  bool
	log      *slog.Logger
	draining atomic.Bool
}

// NewHealth returns the probes of svc.
func NewHealth(svc *messaging.Service, opts *HealthOptions) *Health {
	o := defaults.Of(opts)
	defaults.Positive(&o.Timeout, DefaultReadyTimeout)
	return &Health{svc: svc, sms: o.SMS, timeout: o.Timeout, workers: !o.WorkersNotRequired, log: defaults.Logger(o.Logger)}
}

// SetDraining turns the server's draining on or off. While it is on,
// /readyz answers 503 (draining) so that a load balancer stops sending
// requests; a server sets it when shutting down, waits for the balancer
// to notice, then closes its listener.
func (h *Health) SetDraining(on bool) { h.draining.Store(on) }

// Readiness is the answer of /readyz.
type Readiness struct {
	// Status is "ready" or "not_ready".
	Status string `json:"status"`
	// NotReady names the failed checks, in the order of Checks' keys:
	// draining, store, workers.
	NotReady []string `json:"not_ready,omitempty"`
	// Checks maps each check to "ok" or why it failed.
	Checks map[string]string `json:"checks"`
}

// Ready runs the readiness checks.
func (h *Health) Ready(ctx context.Context) *Readiness {
	out := &Readiness{Status: "ready", Checks: map[string]string{}}
	fail := func(check, why string) {
		out.Checks[check] = why
		out.NotReady = append(out.NotReady, check)
		out.Status = "not_ready"
	}
	if h.draining.Load() {
		fail("draining", "the server is shutting down")
	} else {
		out.Checks["draining"] = "ok"
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	err := h.svc.Ping(ctx)
	cancel()
	switch {
	case err == nil:
		out.Checks["store"] = "ok"
	case errors.Is(err, driver.ErrSchemaVersion):
		h.log.WarnContext(ctx, "readiness: store schema", "err", err)
		fail("store", "the database schema is not at the version this program needs")
	case errors.Is(err, context.DeadlineExceeded):
		h.log.WarnContext(ctx, "readiness: store did not answer", "timeout", h.timeout)
		fail("store", "no answer within "+h.timeout.String())
	default:
		// The error's text may name hosts or files: logged, not shown.
		h.log.WarnContext(ctx, "readiness: store", "err", err)
		fail("store", "not answering")
	}
	switch {
	case !h.workers:
		out.Checks["workers"] = "not required"
	case !h.svc.Running():
		fail("workers", "the dispatcher and webhook sender are not running")
	case h.sms != nil && !h.sms.Running():
		fail("workers", "the SMS scheduler is not running")
	default:
		out.Checks["workers"] = "ok"
	}
	return out
}

// ServeHTTP answers /healthz and /readyz (by the path's last element), so
// a Health can be mounted on its own.
func (h *Health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case HealthzPath:
		h.serveLive(w, r)
	case ReadyzPath:
		h.serveReady(w, r)
	default:
		http.NotFound(w, r)
	}
}

// probeMethod answers a method other than GET and HEAD with 405.
func probeMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"status": "method_not_allowed"})
	return false
}

func (h *Health) serveLive(w http.ResponseWriter, r *http.Request) {
	if !probeMethod(w, r) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *Health) serveReady(w http.ResponseWriter, r *http.Request) {
	if !probeMethod(w, r) {
		return
	}
	rd := h.Ready(r.Context())
	status := http.StatusOK
	if rd.Status != "ready" {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", strconv.Itoa(1))
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, rd)
}

// Health returns the probes the handler serves (Options.Health or its
// own), for SetDraining.
func (h *Handler) Health() *Health { return h.health }
