package advantagateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
)

const (
	partner = "9876"
	key     = "upstream-secret-key-0123456789"
)

// mockResponse is one canned answer of the upstream.
type mockResponse struct {
	status int
	header map[string]string
	body   string
}

// recorded is one request the upstream received.
type recorded struct {
	Path string
	Body map[string]any
}

// upstream is an httptest server answering in the upstream's shapes, one
// canned answer per request, in order.
type upstream struct {
	mu        sync.Mutex
	srv       *httptest.Server
	responses []mockResponse
	requests  []recorded
	// handle, when set, answers every request instead of responses.
	handle func(path string, body map[string]any) mockResponse
}

func newUpstream(t *testing.T, responses ...mockResponse) *upstream {
	t.Helper()
	u := &upstream{responses: responses}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s with Content-Type %q; want POST application/json", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("request body %s: %v", b, err)
		}
		u.requests = append(u.requests, recorded{Path: r.URL.Path, Body: body})
		var resp mockResponse
		switch {
		case u.handle != nil:
			resp = u.handle(r.URL.Path, body)
		case len(u.responses) == 0:
			t.Errorf("unexpected request %s %s", r.URL.Path, b)
			w.WriteHeader(500)
			return
		default:
			resp = u.responses[0]
			u.responses = u.responses[1:]
		}
		for k, v := range resp.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.status)
		_, _ = io.WriteString(w, resp.body)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) gateway(t *testing.T) *advantagateway.Gateway {
	t.Helper()
	nairobi, _ := time.LoadLocation("Africa/Nairobi")
	g, err := advantagateway.New(&advantagateway.Options{BaseURL: u.srv.URL + "/", PartnerID: partner, APIKey: key, HTTPClient: u.srv.Client(), Location: nairobi})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func msg(n int64, mobile string) *sms.GatewayMessage {
	return &sms.GatewayMessage{Reference: "sms_x", Number: n, Mobile: mobile, Text: "Hello", Sender: "ACME"}
}

// result is a GatewayResult with its error reduced to comparable fields.
type result struct {
	ID, Network string
	Code        int
	Retryable   bool
	RetryAfter  time.Duration
	Err         bool
}

func reduce(rs []sms.GatewayResult) []result {
	var out []result
	for _, r := range rs {
		x := result{ID: r.MessageID, Network: r.NetworkID}
		if r.Err != nil {
			x.Err = true
			x.Retryable = sms.Retryable(r.Err)
			var ge *sms.GatewayError
			if errors.As(r.Err, &ge) {
				x.Code, x.RetryAfter = ge.Code, ge.RetryAfter
			}
		}
		out = append(out, x)
	}
	return out
}

func TestSend(t *testing.T) {
	t.Parallel()
	item := func(n float64, mobile string) map[string]any {
		return map[string]any{"apikey": key, "partnerID": partner, "pass_type": "plain", "clientsmsid": n, "mobile": mobile, "message": "Hello", "shortcode": "ACME"}
	}
	tests := []struct {
		label    string
		msgs     []*sms.GatewayMessage
		mock     []mockResponse
		requests []recorded
		want     []result
		// callErr: the whole call fails; callRetryable: and is retryable.
		callErr, callRetryable bool
	}{
		{
			label:    "one message through sendbulk, with its clientsmsid",
			msgs:     []*sms.GatewayMessage{msg(1, "254712345678")},
			mock:     []mockResponse{{200, nil, `{"responses":[{"response-code":200,"response-description":"Success","mobile":254712345678,"messageid":8290842,"networkid":"1"}]}`}},
			requests: []recorded{{advantagateway.PathSendBulk, map[string]any{"count": 1.0, "smslist": []any{item(1, "254712345678")}}}},
			want:     []result{{ID: "8290842", Network: "1"}},
		},
		{
			label: "bulk, answers matched by clientsmsid",
			msgs:  []*sms.GatewayMessage{msg(11, "254712345678"), msg(12, "254712345679")},
			mock: []mockResponse{{200, nil, `{"responses":[
				{"response-code":1003,"response-description":"Invalid mobile number","mobile":"254712345679","clientsmsid":"12"},
				{"response-code":"200","response-description":"Success","mobile":"254712345678","messageid":"777","clientsmsid":11,"networkid":2}]}`}},
			requests: []recorded{{advantagateway.PathSendBulk, map[string]any{"count": 2.0, "smslist": []any{item(11, "254712345678"), item(12, "254712345679")}}}},
			want:     []result{{ID: "777", Network: "2"}, {Err: true, Code: 1003}},
		},
		{
			label: "bulk of 21 in two requests",
			msgs: func() []*sms.GatewayMessage {
				var ms []*sms.GatewayMessage
				for i := range 21 {
					ms = append(ms, msg(int64(100+i), "254712345678"))
				}
				return ms
			}(),
			mock: []mockResponse{
				{200, nil, `{"responses":[` + strings.TrimSuffix(strings.Repeat(`{"response-code":200,"response-description":"Success","messageid":5,"networkid":"1"},`, 20), ",") + `]}`},
				{200, nil, `{"responses":[{"response-code":200,"response-description":"Success","messageid":6,"networkid":"1"}]}`},
			},
			want: append(func() []result {
				var rs []result
				for range 20 {
					rs = append(rs, result{ID: "5", Network: "1"})
				}
				return rs
			}(), result{ID: "6", Network: "1"}),
		},
		{
			label:   "flat invalid credentials is retryable for the whole call",
			msgs:    []*sms.GatewayMessage{msg(1, "254712345678")},
			mock:    []mockResponse{{200, nil, `{"response-code":1006,"response-description":"Invalid credentials"}`}},
			callErr: true, callRetryable: true,
		},
		{
			label:   "flat unsupported data type is permanent",
			msgs:    []*sms.GatewayMessage{msg(1, "254712345678"), msg(2, "254712345678")},
			mock:    []mockResponse{{400, nil, `{"response-code":1009,"response-description":"Unsupported data type"}`}},
			callErr: true, callRetryable: false,
		},
		{
			label: "per-message codes",
			msgs:  []*sms.GatewayMessage{msg(1, "a"), msg(2, "b"), msg(3, "c"), msg(4, "d"), msg(5, "e")},
			mock: []mockResponse{{200, nil, `{"responses":[
				{"response-code":1001,"response-description":"Invalid sender id"},
				{"response-code":1004,"response-description":"Low bulk credits"},
				{"response-code":4090,"response-description":"Internal Error. Try again after 5 minutes"},
				{"response-code":1002,"response-description":"Network not allowed"},
				{"response-code":200,"response-description":"Success"}]}`}},
			want: []result{
				{Err: true, Code: 1001},
				{Err: true, Code: 1004, Retryable: true},
				{Err: true, Code: 4090, Retryable: true, RetryAfter: 5 * time.Minute},
				{Err: true, Code: 1002},
				{Err: true, Retryable: true}, // success without a messageid
			},
		},
		{
			label:   "503 with Retry-After and an HTML body",
			msgs:    []*sms.GatewayMessage{msg(1, "254712345678")},
			mock:    []mockResponse{{503, map[string]string{"Retry-After": "30"}, `<html>busy</html>`}},
			callErr: true, callRetryable: true,
		},
		{
			label:   "404 without a response code is permanent",
			msgs:    []*sms.GatewayMessage{msg(1, "254712345678")},
			mock:    []mockResponse{{404, nil, `not found`}},
			callErr: true, callRetryable: false,
		},
		{
			label:   "200 with garbage",
			msgs:    []*sms.GatewayMessage{msg(1, "254712345678")},
			mock:    []mockResponse{{200, nil, `{"responses":`}},
			callErr: true, callRetryable: true,
		},
		{
			label:   "200 success without responses",
			msgs:    []*sms.GatewayMessage{msg(1, "254712345678")},
			mock:    []mockResponse{{200, nil, `{"response-code":200,"response-description":"Success"}`}},
			callErr: true, callRetryable: true,
		},
		{
			label: "fewer answers than messages",
			msgs:  []*sms.GatewayMessage{msg(1, "a"), msg(2, "b")},
			mock:  []mockResponse{{200, nil, `{"responses":[{"response-code":200,"response-description":"Success","messageid":9}]}`}},
			want:  []result{{ID: "9"}, {Err: true, Retryable: true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			t.Parallel()
			u := newUpstream(t, tc.mock...)
			res, err := u.gateway(t).Send(context.Background(), tc.msgs)
			if tc.callErr {
				if err == nil {
					t.Fatalf("Send = %+v, want an error for the call", reduce(res))
				}
				if sms.Retryable(err) != tc.callRetryable {
					t.Errorf("Send error %v: retryable %v, want %v", err, sms.Retryable(err), tc.callRetryable)
				}
				if strings.Contains(err.Error(), key) {
					t.Errorf("the error %q contains the apikey", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if d := cmp.Diff(tc.want, reduce(res)); d != "" {
				t.Errorf("results (-want +got):\n%s", d)
			}
			if tc.requests != nil {
				if d := cmp.Diff(tc.requests, u.requests); d != "" {
					t.Errorf("requests (-want +got):\n%s", d)
				}
			}
			if len(u.responses) != 0 {
				t.Errorf("%d canned answers unused", len(u.responses))
			}
		})
	}
}

func TestSendRetryAfterHeader(t *testing.T) {
	u := newUpstream(t, mockResponse{429, map[string]string{"Retry-After": "30"}, ``})
	_, err := u.gateway(t).Send(context.Background(), []*sms.GatewayMessage{msg(1, "254712345678")})
	var ge *sms.GatewayError
	if !errors.As(err, &ge) || !ge.Retryable || ge.RetryAfter != 30*time.Second || ge.Code != 429 {
		t.Errorf("429: %v, want retryable after 30 s", err)
	}
}

func TestDeliveryReport(t *testing.T) {
	t.Parallel()
	u := newUpstream(t,
		mockResponse{200, nil, `{"response-code":200,"message-id":"89999","response-description":"Success","delivery-status":32,"delivery-description":"DeliveredToTerminal","delivery-tat":"6s","delivery-networkid":1,"delivery-time":"2020-02-16 10:15:13"}`},
		mockResponse{200, nil, `{"response-code":1008,"response-description":"No Delivery Report"}`},
		mockResponse{404, nil, `{"response-code":4093,"response-description":"Details Not Found"}`},
	)
	g := u.gateway(t)
	ctx := context.Background()
	r, err := g.DeliveryReport(ctx, "89999")
	if err != nil {
		t.Fatal(err)
	}
	want := &sms.Report{Status: 32, Description: "DeliveredToTerminal", NetworkID: "1", Time: time.Date(2020, 2, 16, 7, 15, 13, 0, time.UTC)}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	if _, err := g.DeliveryReport(ctx, "89999"); !errors.Is(err, sms.ErrNoReport) {
		t.Errorf("1008: %v, want ErrNoReport", err)
	}
	var ge *sms.GatewayError
	if _, err := g.DeliveryReport(ctx, "1"); !errors.As(err, &ge) || ge.Code != 4093 || ge.Retryable {
		t.Errorf("4093: %v", err)
	}
	wantReq := recorded{advantagateway.PathGetDLR, map[string]any{"apikey": key, "partnerID": partner, "messageID": "89999"}}
	if d := cmp.Diff(wantReq, u.requests[0]); d != "" {
		t.Errorf("getdlr request (-want +got):\n%s", d)
	}
}

func TestBalance(t *testing.T) {
	t.Parallel()
	u := newUpstream(t,
		mockResponse{200, nil, `{"response-code":200,"credit":"545.00","partner-id":"9876"}`},
		mockResponse{200, nil, `{"response-code":200,"credit":12.5,"partner-id":"9876"}`},
		mockResponse{401, nil, `{"response-code":1006,"response-description":"Invalid credentials"}`},
		mockResponse{200, nil, `{"response-code":200,"credit":"lots"}`},
	)
	g := u.gateway(t)
	ctx := context.Background()
	if c, err := g.Balance(ctx); err != nil || c.String() != "545.00" {
		t.Errorf("Balance = %s, %v; want 545.00", c, err)
	}
	if c, err := g.Balance(ctx); err != nil || c.String() != "12.50" {
		t.Errorf("Balance with a number = %s, %v; want 12.50", c, err)
	}
	var ge *sms.GatewayError
	if _, err := g.Balance(ctx); !errors.As(err, &ge) || ge.Code != 1006 {
		t.Errorf("Balance with bad credentials: %v", err)
	}
	if _, err := g.Balance(ctx); err == nil {
		t.Error("Balance with a credit of \"lots\" succeeded")
	}
	if d := cmp.Diff(recorded{advantagateway.PathGetBalance, map[string]any{"apikey": key, "partnerID": partner}}, u.requests[0]); d != "" {
		t.Errorf("getbalance request (-want +got):\n%s", d)
	}
}

func TestTransportErrorIsRetryableAndHidesTheKey(t *testing.T) {
	u := newUpstream(t)
	g := u.gateway(t)
	u.srv.Close()
	_, err := g.Send(context.Background(), []*sms.GatewayMessage{msg(1, "254712345678")})
	if err == nil || !sms.Retryable(err) || strings.Contains(err.Error(), key) {
		t.Errorf("Send to a closed server: %v; want a retryable error without the key", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Balance(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Balance with a canceled context: %v", err)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	for _, o := range []*advantagateway.Options{
		nil,
		{PartnerID: "1", APIKey: "k"},
		{BaseURL: "https://x", APIKey: "k"},
		{BaseURL: "https://x", PartnerID: "1"},
		{BaseURL: "ftp://x", PartnerID: "1", APIKey: "k"},
		{BaseURL: "not a url", PartnerID: "1", APIKey: "k"},
	} {
		if _, err := advantagateway.New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}
