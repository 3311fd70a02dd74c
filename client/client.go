package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Defaults of Options.
const (
	// DefaultUserAgent is the User-Agent of requests when
	// Options.UserAgent is empty.
	DefaultUserAgent = "ujumbe-messaging-go-client/1"
	// DefaultMaxAttempts is how many times a request is made at most,
	// the first attempt included: three retries, after about 1, 2 and 4
	// seconds.
	DefaultMaxAttempts = 4
	// DefaultMaxElapsed caps the time a call spends, retries and their
	// waits included.
	DefaultMaxElapsed = 30 * time.Second
	// DefaultInitialBackoff is the wait before the first retry, as the
	// spec recommends; each further wait doubles it.
	DefaultInitialBackoff = time.Second
	// DefaultMaxBackoff caps one wait of the backoff (a longer
	// Retry-After is still honoured, within MaxElapsed).
	DefaultMaxBackoff = 16 * time.Second
	// JitterFraction is the spread of a backoff wait: plus or minus 20
	// percent.
	JitterFraction = 0.2
)

// Options configure a Client or an SMSClient. The zero value (or nil) means
// the defaults documented on each field.
type Options struct {
	// HTTPClient makes the requests. Default: a new http.Client without
	// a timeout of its own (the context's deadline bounds each call).
	HTTPClient *http.Client
	// UserAgent is sent as the User-Agent header. Default
	// DefaultUserAgent.
	UserAgent string
	// MaxAttempts is how many times a retryable request is made at most.
	// Default DefaultMaxAttempts; 1 turns retries off.
	MaxAttempts int
	// MaxElapsed caps the total time of a call, waits included: no retry
	// starts whose wait would end after it. Default DefaultMaxElapsed.
	MaxElapsed time.Duration
	// InitialBackoff is the wait before the first retry. Default
	// DefaultInitialBackoff (1 second).
	InitialBackoff time.Duration
	// MaxBackoff caps one backoff wait. Default DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Clock returns the current time, for MaxElapsed. Default time.Now.
	Clock func() time.Time
	// Sleep waits d or until ctx is done, returning ctx.Err() then.
	// Default: a timer. Tests pass a sleeper that records d and returns.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) that spreads each backoff wait
	// over [0.8, 1.2) times its nominal length. Default: math/rand/v2.
	Jitter func() float64
	// NewIdempotencyKey returns the idempotency key of a send that has
	// none. Default: a random UUID (uuid.NewString).
	NewIdempotencyKey func() string
}

// transport is what Client and SMSClient share: the base URL, the HTTP
// client and the retry policy.
type transport struct {
	base        *url.URL
	http        *http.Client
	userAgent   string
	maxAttempts int
	maxElapsed  time.Duration
	initial     time.Duration
	maxBackoff  time.Duration
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	jitter      func() float64
	newKey      func() string
}

func newTransport(baseURL string, opts *Options) (*transport, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: baseURL must be an absolute http or https URL such as https://api.example.com (got %q)", baseURL)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	t := &transport{
		base: u, http: o.HTTPClient, userAgent: o.UserAgent, maxAttempts: o.MaxAttempts, maxElapsed: o.MaxElapsed,
		initial: o.InitialBackoff, maxBackoff: o.MaxBackoff, now: o.Clock, sleep: o.Sleep, jitter: o.Jitter, newKey: o.NewIdempotencyKey,
	}
	if t.http == nil {
		t.http = &http.Client{}
	}
	if t.userAgent == "" {
		t.userAgent = DefaultUserAgent
	}
	if t.maxAttempts <= 0 {
		t.maxAttempts = DefaultMaxAttempts
	}
	if t.maxElapsed <= 0 {
		t.maxElapsed = DefaultMaxElapsed
	}
	if t.initial <= 0 {
		t.initial = DefaultInitialBackoff
	}
	if t.maxBackoff <= 0 {
		t.maxBackoff = DefaultMaxBackoff
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.sleep == nil {
		t.sleep = sleepTimer
	}
	if t.jitter == nil {
		t.jitter = rand.Float64
	}
	if t.newKey == nil {
		t.newKey = uuid.NewString
	}
	return t, nil
}

// sleepTimer waits d or until ctx is done.
func sleepTimer(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// idempotencyKey returns key, or a new key (Options.NewIdempotencyKey)
// when key is empty.
func (t *transport) idempotencyKey(key string) string {
	if key == "" {
		return t.newKey()
	}
	return key
}

// request is one call of the API.
type request struct {
	method string
	path   string
	query  url.Values
	// path is the escaped path below the base URL (see pathf).
	// body is marshalled to JSON once; nil sends no body.
	body any
	// header holds extra headers (X-API-Key, Idempotency-Key).
	header http.Header
	// retryable says that repeating the request is safe: GET, PUT and
	// DELETE, read-only POSTs, and POSTs with an idempotency key.
	retryable bool
	// decodeError turns an answer with an error status into an error.
	decodeError func(resp *http.Response, body []byte) error
	// stream keeps the body of a successful answer unread, in
	// response.stream, for the caller to read and close; accept is then
	// the Accept header ("" is application/json).
	stream bool
	accept string
	// reader, when set, is the body, streamed once with the Content-Type
	// contentType (an upload): such a request is never retried.
	reader      io.Reader
	contentType string
}

// response is a successful answer.
type response struct {
	status int
	header http.Header
	body   []byte
	// stream is the unread body when request.stream is set.
	stream io.ReadCloser
}

// maxResponse is the largest answer read.
const maxResponse = 16 << 20

// do sends req, retrying per the policy, and returns the first successful
// (2xx) answer or the last error.
func (t *transport) do(ctx context.Context, req *request) (*response, error) {
	if ctx == nil {
		return nil, errors.New("client: a nil context")
	}
	var payload []byte
	if req.body != nil {
		b, err := json.Marshal(req.body)
		if err != nil {
			return nil, fmt.Errorf("client: encoding the request body: %w", err)
		}
		payload = b
	}
	u := t.base.String() + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	start := t.now()
	for attempt := 1; ; attempt++ {
		resp, err := t.once(ctx, req, u, payload)
		if err == nil {
			return resp, nil
		}
		retryAfter, retry := t.shouldRetry(ctx, req, err)
		if !retry || attempt >= t.maxAttempts {
			return nil, err
		}
		wait := max(t.backoff(attempt), retryAfter)
		if t.now().Add(wait).After(start.Add(t.maxElapsed)) {
			return nil, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// The deadline wins: a retry could not start before it.
			// Deadlines are on the wall clock, not Options.Clock.
			return nil, err
		}
		if serr := t.sleep(ctx, wait); serr != nil {
			return nil, err
		}
	}
}

// once makes one attempt. A non-2xx answer is returned as the error of
// req.decodeError. With req.stream, a 2xx answer's body is returned
// unread: the attempt is the last one, as do never retries a success.
func (t *transport) once(ctx context.Context, req *request, u string, payload []byte) (*response, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	if req.reader != nil {
		body = req.reader
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	hr.Header.Set("Accept", cmp.Or(req.accept, "application/json"))
	hr.Header.Set("User-Agent", t.userAgent)
	if payload != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.reader != nil {
		hr.Header.Set("Content-Type", req.contentType)
	}
	for k, vs := range req.header {
		hr.Header[k] = vs
	}
	resp, err := t.http.Do(hr)
	if err != nil {
		return nil, &networkError{err: err}
	}
	if req.stream && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return &response{status: resp.StatusCode, header: resp.Header, stream: resp.Body}, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, &networkError{err: err, status: resp.StatusCode, header: resp.Header}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := req.decodeError(resp, b)
		var e *Error
		if errors.As(err, &e) {
			e.RetryAfter = retryAfter(resp.Header, t.now())
		}
		return nil, err
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// networkError is a request that got no complete answer: the connection
// failed or was dropped. It is retried like a 5xx.
type networkError struct {
	err    error
	status int
	header http.Header
}

func (e *networkError) Error() string { return "client: " + e.err.Error() }

func (e *networkError) Unwrap() error { return e.err }

// shouldRetry reports whether err is worth another attempt of req, and the
// Retry-After the server asked for.
func (t *transport) shouldRetry(ctx context.Context, req *request, err error) (time.Duration, bool) {
	if !req.retryable || req.reader != nil || ctx.Err() != nil {
		return 0, false
	}
	var ne *networkError
	if errors.As(err, &ne) {
		return 0, !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter, e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
	}
	return 0, false
}

// backoff returns the wait before retry number n (1 for the first retry):
// InitialBackoff doubled n-1 times, capped at MaxBackoff, times a jitter
// factor in [1-JitterFraction, 1+JitterFraction).
func (t *transport) backoff(n int) time.Duration {
	d := t.initial
	for i := 1; i < n && d < t.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, t.maxBackoff)
	f := 1 - JitterFraction + 2*JitterFraction*t.jitter()
	return time.Duration(float64(d) * f)
}

// retryAfter parses a Retry-After header: seconds, or an HTTP date
// (relative to now). It returns 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(min(secs, int64(24*time.Hour/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// decodeJSON decodes an answer into v. A v that records replays is told
// whether the server answered with the answer of an earlier request with
// the same idempotency key (its Idempotent-Replayed header).
func decodeJSON(resp *response, v any) error {
	if err := json.Unmarshal(resp.body, v); err != nil {
		return fmt.Errorf("client: decoding the answer (status %d): %w", resp.status, err)
	}
	if r, ok := v.(replayable); ok {
		r.setReplayed(resp.header.Get("Idempotent-Replayed") == "true")
	}
	return nil
}

// replayable is an answer with a Replayed field, set by decodeJSON.
type replayable interface {
	setReplayed(bool)
}
