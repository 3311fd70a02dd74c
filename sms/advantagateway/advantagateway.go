// Package advantagateway is an sms.Gateway for an Advanta-compatible
// bulk-SMS upstream: JSON over HTTPS, credentials (apikey, partnerID) in
// the body, and four endpoints under the base URL:
//
//	POST /api/services/sendsms/    one message
//	POST /api/services/sendbulk/   up to 20 messages, {"count", "smslist"}
//	POST /api/services/getdlr/     a delivery report, by the upstream's message id
//	POST /api/services/getbalance/ the account's credit
//
// Answers carry "response-code" (200 for success) and
// "response-description", per message in "responses" for sends. The codes
// are mapped to sms.GatewayError: refusals of the message itself (1001
// invalid sender id, 1002 network not allowed, 1003 invalid mobile number,
// 1009 and 1010 unsupported data or request) are permanent; the upstream's
// own trouble (1004 low credits, 1005 and 1007 system errors, 1006 and
// 4091/4092 credentials, 4090 internal error, try after 5 minutes) is
// retryable, as are HTTP 401, 403, 408, 429 and 5xx answers and transport
// errors. Other codes are permanent.
//
// The gateway sends the service's message number as clientsmsid and never
// logs or returns the apikey.
//
// Upstreams also push delivery reports to a callback URL; ParseDeliveryReport
// reads them (the shapes it takes are documented there), for httpapi's
// callback route.
package advantagateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/sms"
)

var _ sms.Gateway = (*Gateway)(nil)

// MaxBulk is the most messages the upstream takes in one sendbulk request;
// Send splits larger batches.
const MaxBulk = 20

// maxBody bounds how much of an answer is read.
const maxBody = 1 << 20

// DefaultTimeout is the timeout of the HTTP client made when
// Options.HTTPClient is nil.
const DefaultTimeout = 30 * time.Second

// Options configure a Gateway. BaseURL, PartnerID and APIKey are required.
type Options struct {
	// BaseURL is the upstream's address, for example
	// "https://quicksms.advantasms.com"; the endpoint paths are appended.
	BaseURL string
	// PartnerID and APIKey are the service's credentials at the upstream.
	PartnerID string
	APIKey    string
	// HTTPClient sends the requests. Default: a client of its own with a
	// DefaultTimeout timeout (never http.DefaultClient).
	HTTPClient *http.Client
	// Location is the time zone of the upstream's delivery-time values.
	// Default UTC.
	Location *time.Location
}

// Gateway is the Advanta-compatible gateway. It is safe for concurrent use.
type Gateway struct {
	base      string
	partnerID string
	apikey    string
	client    *http.Client
	loc       *time.Location
}

// New returns a Gateway.
func New(o *Options) (*Gateway, error) {
	if o == nil || o.BaseURL == "" || o.PartnerID == "" || o.APIKey == "" {
		return nil, errors.New("advantagateway: BaseURL, PartnerID and APIKey are required")
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("advantagateway: BaseURL must be an absolute http(s) URL (got %q)", o.BaseURL)
	}
	g := &Gateway{base: strings.TrimSuffix(o.BaseURL, "/"), partnerID: o.PartnerID, apikey: o.APIKey, client: o.HTTPClient, loc: o.Location}
	if g.client == nil {
		g.client = &http.Client{Timeout: DefaultTimeout}
	}
	if g.loc == nil {
		g.loc = time.UTC
	}
	return g, nil
}

// Paths of the upstream's endpoints.
const (
	PathSendSMS    = "/api/services/sendsms/"
	PathSendBulk   = "/api/services/sendbulk/"
	PathGetDLR     = "/api/services/getdlr/"
	PathGetBalance = "/api/services/getbalance/"
)

// bulkItem is an item of sendbulk.
type bulkItem struct {
	PartnerID   string `json:"partnerID"`
	APIKey      string `json:"apikey"`
	PassType    string `json:"pass_type"`
	ClientSMSID int64  `json:"clientsmsid"`
	Mobile      string `json:"mobile"`
	Message     string `json:"message"`
	Shortcode   string `json:"shortcode"`
}

type bulkRequest struct {
	Count   int        `json:"count"`
	SMSList []bulkItem `json:"smslist"`
}

// flexText decodes a JSON string or number as text.
type flexText string

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexText) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexText(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*f = flexText(n.String())
		return nil
	}
	if string(b) == "null" {
		*f = ""
		return nil
	}
	return fmt.Errorf("want a string or a number, got %s", b)
}

// code returns the text as a response code, or 0.
func (f flexText) code() int {
	n, _ := strconv.Atoi(strings.TrimSpace(string(f)))
	return n
}

// answer is every shape the upstream answers in: a flat status, a list of
// per-message responses, a delivery report or a balance.
type answer struct {
	ResponseCode        flexText `json:"response-code"`
	ResponseDescription string   `json:"response-description"`
	Responses           []struct {
		ResponseCode        flexText `json:"response-code"`
		ResponseDescription string   `json:"response-description"`
		Mobile              flexText `json:"mobile"`
		MessageID           flexText `json:"messageid"`
		ClientSMSID         flexText `json:"clientsmsid"`
		NetworkID           flexText `json:"networkid"`
	} `json:"responses"`
	MessageID           flexText `json:"message-id"`
	DeliveryStatus      flexText `json:"delivery-status"`
	DeliveryDescription string   `json:"delivery-description"`
	DeliveryNetworkID   flexText `json:"delivery-networkid"`
	DeliveryTime        string   `json:"delivery-time"`
	Credit              flexText `json:"credit"`
}

// errUnreadable is wrapped by post's error for a 2xx answer it could not
// read.
var errUnreadable = errors.New("the answer could not be read")

// post sends body to path and decodes the answer. A transport failure, or
// an HTTP status that is not 2xx and carries no response-code, is an error
// (a *sms.GatewayError for HTTP statuses; one wrapping errUnreadable for a
// 2xx answer that could not be read).
func (g *Gateway) post(ctx context.Context, path string, body any) (*answer, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		// The error names the URL, never the body (and so never the key).
		return nil, fmt.Errorf("advantagateway: %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("advantagateway: %s: reading the answer: %w: %w", path, errUnreadable, err)
	}
	var a answer
	decodeErr := json.Unmarshal(raw, &a)
	if resp.StatusCode/100 != 2 {
		if decodeErr == nil && a.ResponseCode.code() != 0 && a.ResponseCode.code() != 200 {
			return &a, nil
		}
		return nil, httpError(resp)
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("advantagateway: %s: answer is not the expected JSON: %w: %w", path, errUnreadable, decodeErr)
	}
	return &a, nil
}

// httpError maps a non-2xx answer without a response code.
func httpError(resp *http.Response) *sms.GatewayError {
	e := &sms.GatewayError{Code: resp.StatusCode, Description: "HTTP " + resp.Status, Throttled: resp.StatusCode == http.StatusTooManyRequests}
	switch {
	case resp.StatusCode >= 500, resp.StatusCode == 401, resp.StatusCode == 403, resp.StatusCode == 408, resp.StatusCode == 429:
		e.Retryable = true
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	return e
}

// codeError maps an upstream response code other than 200.
func codeError(code int, desc string) *sms.GatewayError {
	e := &sms.GatewayError{Code: code, Description: desc}
	switch code {
	case 1004, 1005, 1006, 1007, 4091, 4092:
		e.Retryable = true
	case 4090:
		e.Retryable, e.RetryAfter = true, 5*time.Minute
	case sms.CodeRateLimited:
		e.Retryable, e.Throttled = true, true
	}
	if e.Description == "" {
		e.Description = sms.CodeText(code)
	}
	return e
}

// Send implements sms.Gateway: the messages go through sendbulk in chunks
// of MaxBulk (one message too), each with its Number as clientsmsid. An
// answer for the whole request (a flat response-code) applies to each of
// its messages.
func (g *Gateway) Send(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	out := make([]sms.GatewayResult, 0, len(msgs))
	for start := 0; start < len(msgs); start += MaxBulk {
		chunk := msgs[start:min(start+MaxBulk, len(msgs))]
		res, err := g.sendChunk(ctx, chunk)
		if err != nil {
			if start == 0 {
				return nil, err
			}
			// Earlier chunks went through: report this chunk's messages
			// as failed with the error instead of failing the call.
			for range chunk {
				out = append(out, sms.GatewayResult{Err: err})
			}
			continue
		}
		out = append(out, res...)
	}
	return out, nil
}

// sendError classifies the error of a send request: unless the request
// cannot have reached the upstream (it could not connect) or the
// upstream answered (an HTTP status), its outcome is unknown.
func sendError(err error) error {
	var ge *sms.GatewayError
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &ge) && !errors.Is(err, errUnreadable):
		return err
	case errors.As(err, &dns), errors.As(err, &op) && op.Op == "dial":
		return err
	}
	return fmt.Errorf("%w: %w", sms.ErrUnknownOutcome, err)
}

func (g *Gateway) sendChunk(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	path := PathSendBulk
	req := bulkRequest{Count: len(msgs), SMSList: make([]bulkItem, len(msgs))}
	for i, m := range msgs {
		req.SMSList[i] = bulkItem{PartnerID: g.partnerID, APIKey: g.apikey, PassType: "plain", ClientSMSID: m.Number,
			Mobile: m.Mobile, Message: m.Text, Shortcode: m.Sender}
	}
	a, err := g.post(ctx, path, req)
	if err != nil {
		return nil, sendError(err)
	}
	if len(a.Responses) == 0 {
		code := a.ResponseCode.code()
		if code == 0 || code == 200 {
			return nil, fmt.Errorf("%w: advantagateway: %s: answer has no responses", sms.ErrUnknownOutcome, path)
		}
		return nil, codeError(code, a.ResponseDescription)
	}
	// Match answers to messages by clientsmsid where the upstream echoes
	// it, else by position.
	byRef := map[string]int{}
	for i, r := range a.Responses {
		if r.ClientSMSID != "" {
			byRef[string(r.ClientSMSID)] = i
		}
	}
	out := make([]sms.GatewayResult, len(msgs))
	for i, m := range msgs {
		j, ok := byRef[strconv.FormatInt(m.Number, 10)]
		if !ok || len(msgs) == 1 {
			j = i
		}
		if j >= len(a.Responses) {
			out[i].Err = fmt.Errorf("%w: advantagateway: %s: no answer for message %d", sms.ErrUnknownOutcome, path, m.Number)
			continue
		}
		r := a.Responses[j]
		if c := r.ResponseCode.code(); c != 200 {
			out[i].Err = codeError(c, r.ResponseDescription)
			continue
		}
		if r.MessageID == "" {
			out[i].Err = fmt.Errorf("%w: advantagateway: %s: accepted message %d has no messageid", sms.ErrUnknownOutcome, path, m.Number)
			continue
		}
		out[i].MessageID, out[i].NetworkID = string(r.MessageID), string(r.NetworkID)
	}
	return out, nil
}

// DeliveryReport implements sms.Gateway. 1008 (No Delivery Report) is
// sms.ErrNoReport.
func (g *Gateway) DeliveryReport(ctx context.Context, id string) (*sms.Report, error) {
	a, err := g.post(ctx, PathGetDLR, map[string]string{"apikey": g.apikey, "partnerID": g.partnerID, "messageID": id})
	if err != nil {
		return nil, err
	}
	switch c := a.ResponseCode.code(); c {
	case 200:
	case 1008:
		return nil, sms.ErrNoReport
	default:
		return nil, codeError(c, a.ResponseDescription)
	}
	return g.report(a.DeliveryStatus, a.DeliveryDescription, a.DeliveryNetworkID, a.DeliveryTime, false)
}

// reportTimeLayout is the layout of the upstream's delivery times, in its
// local time (Options.Location).
const reportTimeLayout = "2006-01-02 15:04:05"

// report makes the sms.Report of a delivery report's fields, from getdlr's
// answer or a pushed report. A description missing is the status's
// (sms.DeliveryDescription), or Unknown. A delivery time the upstream's
// layout cannot read is left out, unless strict (a pushed report), where it
// is an error.
func (g *Gateway) report(status flexText, desc string, network flexText, at string, strict bool) (*sms.Report, error) {
	r := &sms.Report{Description: desc, NetworkID: string(network)}
	if status != "" {
		n, err := strconv.Atoi(strings.TrimSpace(string(status)))
		if err != nil && strict {
			return nil, fmt.Errorf("deliveryStatus %q is not a number", clipText(string(status)))
		}
		r.Status = n
	}
	if at != "" {
		t, err := time.ParseInLocation(reportTimeLayout, at, g.loc)
		switch {
		case err == nil:
			r.Time = t.UTC()
		case strict:
			return nil, fmt.Errorf("timestamp %q is not a time like 2020-02-16 10:15:13", clipText(at))
		}
	}
	if r.Description == "" && status != "" {
		r.Description = sms.DeliveryDescription(r.Status)
	}
	if r.Description == "" {
		r.Description = sms.DeliveryUnknown
	}
	return r, nil
}

// clipText shortens s for an error message.
func clipText(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "..."
	}
	return s
}

// Balance implements sms.Gateway.
func (g *Gateway) Balance(ctx context.Context) (sms.Credit, error) {
	a, err := g.post(ctx, PathGetBalance, map[string]string{"apikey": g.apikey, "partnerID": g.partnerID})
	if err != nil {
		return 0, err
	}
	if c := a.ResponseCode.code(); c != 200 {
		return 0, codeError(c, a.ResponseDescription)
	}
	c, err := sms.ParseCredit(strings.TrimSpace(string(a.Credit)))
	if err != nil {
		return 0, fmt.Errorf("advantagateway: getbalance: credit %w", err)
	}
	return c, nil
}
