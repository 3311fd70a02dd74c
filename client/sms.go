package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Response codes of the SMS API (response-code, Error.ResponseCode,
// SMSBulkEntry.ResponseCode).
const (
	// SMSCodeSuccess is the response-code of a successful request or bulk
	// item.
	SMSCodeSuccess = 200
	// SMSCodeInvalidSender: the shortcode is not an approved sender id of
	// the account.
	SMSCodeInvalidSender = 1001
	// SMSCodeInvalidMobile: the mobile number is missing, malformed or not
	// a valid number.
	SMSCodeInvalidMobile = 1003
	// SMSCodeLowCredit: the account's credit cannot cover the message.
	SMSCodeLowCredit = 1004
	// SMSCodeSystemError: an unexpected failure of the service.
	SMSCodeSystemError = 1005
	// SMSCodeInvalidCredentials: the partnerID and apikey do not match an
	// account.
	SMSCodeInvalidCredentials = 1006
	// SMSCodeNoDeliveryReport: the message has no delivery report yet.
	SMSCodeNoDeliveryReport = 1008
	// SMSCodeUnsupportedDataType: a field has the wrong JSON type or a
	// value that cannot be used.
	SMSCodeUnsupportedDataType = 1009
	// SMSCodeUnsupportedRequest: the request is not a JSON object of the
	// endpoint's shape.
	SMSCodeUnsupportedRequest = 1010
	// SMSCodeTooManyMessages: a bulk request's smslist is empty, longer
	// than SMSMaxBulk, or does not hold count items.
	SMSCodeTooManyMessages = 1012
	// SMSCodeNoPartnerID: the partnerID is missing.
	SMSCodeNoPartnerID = 4091
	// SMSCodeNoAPIKey: the apikey is missing.
	SMSCodeNoAPIKey = 4092
	// SMSCodeNotFound: the message id is unknown to the account.
	SMSCodeNotFound = 4093
	// SMSCodeIdempotencyConflict: the Idempotency-Key was used by the
	// account with a different request.
	SMSCodeIdempotencyConflict = 4094
	// SMSCodeRateLimited: too many requests; Error.RetryAfter says how
	// long to wait.
	SMSCodeRateLimited = 4095
)

// SMSMaxBulk is the largest number of items of a bulk send.
const SMSMaxBulk = 20

// SMSDeliveredToTerminal is the delivery-description of a delivered
// message: the only successful delivery state.
const SMSDeliveredToTerminal = "DeliveredToTerminal"

// SMSSendParams is a single SMS (SMSClient.Send).
type SMSSendParams struct {
	// APIKey and PartnerID default to the client's.
	APIKey    string
	PartnerID string
	// Mobile: international format, digits only, no plus sign.
	Mobile  string
	Message string
	// Shortcode is an approved sender id of the account.
	Shortcode string
	// TimeToSend, optional, schedules the message ("YYYY-MM-DD HH:MM" in
	// the account's time zone, or a Unix time).
	TimeToSend string
	// PassType must be empty or "plain" (the apikey is sent as is).
	PassType string
	// IdempotencyKey, optional, makes a retry safe; Send sets one when it
	// is empty.
	IdempotencyKey string
}

// SMSBulkParams is a bulk send (SMSClient.Bulk).
type SMSBulkParams struct {
	// Items are the messages, 1 to SMSMaxBulk.
	Items []*SMSBulkItem
	// IdempotencyKey, optional, makes a retry safe, as for Send. A bulk
	// request with a key must name one partnerID in all its items.
	IdempotencyKey string
}

// SMSBulkItem is a message of a bulk send.
type SMSBulkItem struct {
	// PartnerID and APIKey default to the client's.
	PartnerID string
	APIKey    string
	// PassType must be empty or "plain"; empty is sent as "plain".
	PassType string
	// ClientSMSID is the client's reference, echoed in the item's entry.
	ClientSMSID string
	Mobile      string
	Message     string
	Shortcode   string
	// TimeToSend, optional, as for SMSSendParams.
	TimeToSend string
}

// SMSReportParams asks a delivery report (SMSClient.DeliveryReport).
type SMSReportParams struct {
	// APIKey and PartnerID default to the client's.
	APIKey    string
	PartnerID string
	// MessageID is the provider message id
	// (SMSSendResult.ProviderMessageID, SMSBulkEntry.MessageID).
	MessageID string
}

// Credit is an amount of SMS credit in hundredths of a credit, so that
// sums and differences are exact: Credit(500) is five credits, written
// "5.00".
type Credit int64

// Credits returns n whole credits.
func Credits(n int64) Credit { return Credit(n * 100) }

// String renders c with two decimals, for example "545.00" or "0.50".
func (c Credit) String() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// ParseCredit parses a non-negative decimal amount of credits with at
// most two decimals ("100", "100.5", "0.25"), as the API writes them.
func ParseCredit(s string) (Credit, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if !digits(whole) || (hasDot && (len(frac) > 2 || !digits(frac))) {
		return 0, fmt.Errorf("client: credit: must be a non-negative amount with at most two decimals (got %q)", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > (1<<63-1-99)/100 {
		return 0, fmt.Errorf("client: credit: too large (got %q)", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	return Credit(w*100 + f), nil
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// SMSClient calls the SMS API (/sms/v1) of a server. Its credentials, a
// messaging account's partnerID and apikey, travel in each request body as
// the API requires: keep them on the server, never in browser or mobile
// code. A request's own APIKey and PartnerID, when set, replace the
// client's. An SMSClient is safe for concurrent use.
type SMSClient struct {
	t         *transport
	partnerID string
	apiKey    string
}

// NewSMS returns a client of the SMS API at baseURL (the server's root;
// the client adds /sms/v1/...) with the account's partnerID and apiKey.
// opts may be nil for the defaults.
func NewSMS(baseURL, partnerID, apiKey string, opts *Options) (*SMSClient, error) {
	t, err := newTransport(baseURL, opts)
	if err != nil {
		return nil, err
	}
	return &SMSClient{t: t, partnerID: partnerID, apiKey: apiKey}, nil
}

// SMSSendResult is the answer of a single send.
type SMSSendResult struct {
	ResponseCode        int    `json:"response-code"`
	ResponseDescription string `json:"response-description"`
	// ID is the service's message id.
	ID string `json:"id"`
	// Status is "sent", or "scheduled" for a send with a timeToSend.
	Status string `json:"status"`
	Mobile string `json:"mobile"`
	// ProviderMessageID is the id to ask delivery reports with; keep it
	// with ID for reconciliation.
	ProviderMessageID string `json:"providerMessageId"`
	// Replayed is true when the answer is that of an earlier request with
	// the same idempotency key: nothing was sent or debited this time.
	Replayed bool `json:"-"`
}

func (r *SMSSendResult) setReplayed(v bool) { r.Replayed = v }

// SMSBulkEntry is the outcome of one item of a bulk send. Each entry must
// be inspected: one request can hold accepted and refused items.
type SMSBulkEntry struct {
	// ResponseCode is SMSCodeSuccess (200) for an accepted item, else the
	// item's error code; ResponseDescription its text.
	ResponseCode        int    `json:"response-code"`
	ResponseDescription string `json:"response-description"`
	Mobile              string `json:"mobile"`
	// MessageID is the provider message id (0 when refused).
	MessageID int64 `json:"messageid"`
	// ClientSMSID echoes the item's client reference.
	ClientSMSID string `json:"-"`
	// NetworkID is the recipient's country calling code ("" when
	// refused).
	NetworkID string `json:"networkid"`
}

// Err returns nil for an accepted item, else its refusal as an *Error of
// status 200 with the item's ResponseCode and ResponseDescription (so
// errors.Is(e.Err(), &Error{ResponseCode: SMSCodeInvalidMobile}) works).
func (e *SMSBulkEntry) Err() error {
	if e.ResponseCode == SMSCodeSuccess {
		return nil
	}
	return &Error{StatusCode: http.StatusOK, ResponseCode: e.ResponseCode, ResponseDescription: e.ResponseDescription}
}

// UnmarshalJSON implements json.Unmarshaler: clientsmsid may be a string
// or a number.
func (e *SMSBulkEntry) UnmarshalJSON(b []byte) error {
	type plain SMSBulkEntry
	var v struct {
		plain
		ClientSMSID json.RawMessage `json:"clientsmsid"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = SMSBulkEntry(v.plain)
	var s string
	switch {
	case len(v.ClientSMSID) == 0 || string(v.ClientSMSID) == "null":
	case json.Unmarshal(v.ClientSMSID, &s) == nil:
		e.ClientSMSID = s
	default:
		e.ClientSMSID = string(v.ClientSMSID)
	}
	return nil
}

// SMSBulkResult is the answer of a bulk send: one entry per item, in
// order.
type SMSBulkResult struct {
	Responses []*SMSBulkEntry `json:"responses"`
	// Replayed is true when the answer is that of an earlier request with
	// the same idempotency key.
	Replayed bool `json:"-"`
}

func (r *SMSBulkResult) setReplayed(v bool) { r.Replayed = v }

// SMSDeliveryReport is the answer of a delivery-report request.
type SMSDeliveryReport struct {
	ResponseCode        int    `json:"response-code"`
	ResponseDescription string `json:"response-description"`
	MessageID           string `json:"message-id"`
	// DeliveryStatus and DeliveryDescription are the delivery state (a
	// number and its name). Only SMSDeliveredToTerminal is a successful
	// delivery (Delivered).
	DeliveryStatus      int    `json:"delivery-status"`
	DeliveryDescription string `json:"delivery-description"`
	// DeliveryTAT is the turnaround ("12s"); empty when unknown.
	DeliveryTAT       string `json:"delivery-tat"`
	DeliveryNetworkID string `json:"delivery-networkid"`
	// DeliveryTime is "YYYY-MM-DD HH:MM:SS" in the account's time zone;
	// empty when unknown.
	DeliveryTime string `json:"delivery-time"`
}

// Delivered reports whether the report explicitly says the message was
// delivered.
func (r *SMSDeliveryReport) Delivered() bool { return r.DeliveryDescription == SMSDeliveredToTerminal }

// SMSBalance is the answer of a balance request.
type SMSBalance struct {
	ResponseCode        int    `json:"response-code"`
	ResponseDescription string `json:"response-description"`
	PartnerID           string `json:"partner-id"`
	// Credit is the account's credit as the API writes it ("100.00").
	Credit string `json:"credit"`
}

// Amount returns Credit parsed (ParseCredit).
func (b *SMSBalance) Amount() (Credit, error) { return ParseCredit(b.Credit) }

// smsCreds are the credentials that open the body of a single send, a
// delivery-report or a balance request (a bulk item names them the other
// way round).
type smsCreds struct {
	APIKey    string `json:"apikey"`
	PartnerID string `json:"partnerID"`
}

// smsSendBody is the body of POST /sms/v1/messages.
type smsSendBody struct {
	smsCreds
	Mobile     string `json:"mobile"`
	Message    string `json:"message"`
	Shortcode  string `json:"shortcode"`
	TimeToSend string `json:"timeToSend,omitempty"`
	PassType   string `json:"pass_type,omitempty"`
}

// smsBulkWireItem is an item of POST /sms/v1/messages/bulk.
type smsBulkWireItem struct {
	PartnerID   string `json:"partnerID"`
	APIKey      string `json:"apikey"`
	PassType    string `json:"pass_type"`
	ClientSMSID string `json:"clientsmsid,omitempty"`
	Mobile      string `json:"mobile"`
	Message     string `json:"message"`
	Shortcode   string `json:"shortcode"`
	TimeToSend  string `json:"timeToSend,omitempty"`
}

// creds returns apiKey and partnerID, or the client's where empty.
func (c *SMSClient) creds(apiKey, partnerID string) smsCreds {
	cr := smsCreds{APIKey: apiKey, PartnerID: partnerID}
	if cr.APIKey == "" {
		cr.APIKey = c.apiKey
	}
	if cr.PartnerID == "" {
		cr.PartnerID = c.partnerID
	}
	return cr
}

// smsCall posts body to path and decodes the answer into a new T; its
// response-code must be 200: another code, even with HTTP status 200 (no
// delivery report yet), is an *Error.
//
// A request with an idempotency key is retried, and so are the read-only
// ones (readOnly); a send without a key is not.
func smsCall[T any](ctx context.Context, c *SMSClient, path, key string, readOnly bool, body any) (*T, error) {
	req := &request{method: http.MethodPost, path: path, body: body, retryable: readOnly || key != "", decodeError: smsAnswerError}
	if key != "" {
		req.header = http.Header{"Idempotency-Key": {key}}
	}
	resp, err := c.t.do(ctx, req)
	if err != nil {
		return nil, err
	}
	var a struct {
		Code int `json:"response-code"`
	}
	if err := decodeJSON(resp, &a); err != nil {
		return nil, err
	}
	if a.Code != 0 && a.Code != SMSCodeSuccess {
		hr := &http.Response{StatusCode: resp.status, Header: resp.header}
		return nil, smsAnswerError(hr, resp.body)
	}
	var out T
	if err := decodeJSON(resp, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Send sends one SMS (POST /sms/v1/messages). p.APIKey and p.PartnerID
// default to the client's. When p has no IdempotencyKey the client gives
// the request one (a UUID), sent as the Idempotency-Key header and reused
// across retries, so a retried send is never sent or debited twice.
func (c *SMSClient) Send(ctx context.Context, p *SMSSendParams) (*SMSSendResult, error) {
	if p == nil {
		return nil, errors.New("client: SMSClient.Send needs params")
	}
	body := smsSendBody{smsCreds: c.creds(p.APIKey, p.PartnerID), Mobile: p.Mobile, Message: p.Message, Shortcode: p.Shortcode,
		TimeToSend: p.TimeToSend, PassType: p.PassType}
	return smsCall[SMSSendResult](ctx, c, "/sms/v1/messages", c.t.idempotencyKey(p.IdempotencyKey), false, &body)
}

// Bulk sends up to SMSMaxBulk SMS in one request (POST
// /sms/v1/messages/bulk); each item's outcome is its entry of the answer
// (SMSBulkEntry.Err). An item's empty APIKey and PartnerID default to the
// client's; PassType defaults to "plain". When p has no IdempotencyKey and
// every item names the same partnerID, the client gives the request one,
// as Send does; a request mixing accounts gets none (the API refuses a key
// on it) and is then not retried.
func (c *SMSClient) Bulk(ctx context.Context, p *SMSBulkParams) (*SMSBulkResult, error) {
	if p == nil {
		return nil, errors.New("client: SMSClient.Bulk needs params")
	}
	body := struct {
		Count   int               `json:"count"`
		SMSList []smsBulkWireItem `json:"smslist"`
	}{Count: len(p.Items), SMSList: make([]smsBulkWireItem, len(p.Items))}
	partners := map[string]bool{}
	for i, it := range p.Items {
		if it == nil {
			return nil, fmt.Errorf("client: smslist[%d]: is nil", i)
		}
		cr := c.creds(it.APIKey, it.PartnerID)
		b := smsBulkWireItem{PartnerID: cr.PartnerID, APIKey: cr.APIKey, PassType: it.PassType, ClientSMSID: it.ClientSMSID,
			Mobile: it.Mobile, Message: it.Message, Shortcode: it.Shortcode, TimeToSend: it.TimeToSend}
		if b.PassType == "" {
			b.PassType = "plain"
		}
		partners[b.PartnerID] = true
		body.SMSList[i] = b
	}
	key := p.IdempotencyKey
	if len(partners) == 1 {
		key = c.t.idempotencyKey(key)
	}
	return smsCall[SMSBulkResult](ctx, c, "/sms/v1/messages/bulk", key, false, &body)
}

// DeliveryReport returns the delivery report of a message (POST
// /sms/v1/messages/delivery-report), asked by its provider message id
// (SMSSendResult.ProviderMessageID, SMSBulkEntry.MessageID). A message
// without a report yet is an *Error with SMSCodeNoDeliveryReport.
func (c *SMSClient) DeliveryReport(ctx context.Context, p *SMSReportParams) (*SMSDeliveryReport, error) {
	if p == nil {
		return nil, errors.New("client: SMSClient.DeliveryReport needs params")
	}
	body := struct {
		smsCreds
		MessageID string `json:"messageID"`
	}{c.creds(p.APIKey, p.PartnerID), p.MessageID}
	return smsCall[SMSDeliveryReport](ctx, c, "/sms/v1/messages/delivery-report", "", true, &body)
}

// Balance returns the account's credit (POST /sms/v1/account/balance).
func (c *SMSClient) Balance(ctx context.Context) (*SMSBalance, error) {
	return smsCall[SMSBalance](ctx, c, "/sms/v1/account/balance", "", true, c.creds("", ""))
}
