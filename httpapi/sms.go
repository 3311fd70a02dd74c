package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// The SMS API (/sms/v1) is mounted by New when Options.SMS is set. Its
// credentials travel in the JSON body, so it has no header authentication
// or scopes. Its rate limits are per account and route, like /v1's per
// workspace and route (see SMSRateLimits and smsAdmit). Every answer, success or error, is a
// flat JSON object carrying "response-code" and "response-description"
// (never the /v1 error envelope), and X-Correlation-ID like every response.
//
// Decoding is strict: the body must be one JSON object (Content-Type
// application/json, at most the body limit, valid UTF-8) with no unknown
// members; a request that is not that shape is 1010 (unsupported request
// type), a member of the wrong JSON type, or a string holding NUL, is 1009
// (unsupported data type); in a bulk, for that item alone.
// Member names match case-insensitively, as in the gateways the API is
// modelled on. partnerID, mobile, timeToSend and messageID are accepted as a
// string or an integer number; clientsmsid as a string or a number, echoed
// exactly as given.
//
// The two sends (POST /sms/v1/messages and /sms/v1/messages/bulk) take an
// optional Idempotency-Key header (see package sms for its rules): a
// repeat of a request made with the key gets the first answer again, same
// status and same body, with the header Idempotent-Replayed: true. A
// header given more than once, or malformed, is 1009.

// smsRouteName is the name of the SMS route at path, as in Route.Name.
func smsRouteName(path string) string { return http.MethodPost + " " + path }

// smsAdmit charges a request of the SMS route named route to the rate
// limits before it is served. Each distinct pair of creds (partnerID,
// apikey) whose credentials hold spends a token of its account's bucket
// for the route; when one is empty the request is refused with
// sms.CodeRateLimited (HTTP 429, Retry-After). Credentials that fail
// spend, once per request, a token of the client address's
// "unauthenticated" bucket (the one /v1's refused keys spend), which
// slows apikey guessing. With single, the first failing pair's error
// (what the service would answer) is returned at once; a bulk leaves it
// to each item's answer.
func (h *Handler) smsAdmit(w http.ResponseWriter, r *http.Request, route string, single bool, creds ...[2]string) error {
	if h.noLimits {
		return nil
	}
	ctx := r.Context()
	seen := map[[2]string]bool{}
	var failed error
	var ok []string
	fails := 0
	for _, c := range creds {
		if seen[c] {
			continue
		}
		seen[c] = true
		err := h.sms.CheckCredentials(ctx, c[0], c[1])
		switch {
		case err == nil:
			ok = append(ok, c[0])
		case sms.AsError(err).Code == sms.CodeSystemError:
			return err
		default:
			fails++
			if failed == nil {
				failed = err
			}
		}
	}
	// Each failing pair of credentials is a guess: a bulk of twenty pairs
	// spends twenty of the address's unauthenticated requests, not one.
	for range fails {
		if err := h.limit(ctx, w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
			return smsRateError(w, err, "", "this client address", "the API with failing credentials", h.limits["unauthenticated"])
		}
	}
	if failed != nil && single {
		return failed
	}
	for _, partner := range ok {
		if err := h.limit(ctx, w, "sms:"+partner+":"+route, h.limits[route]); err != nil {
			return smsRateError(w, err, "partnerID", "account "+strconv.Quote(partner), route, h.limits[route])
		}
	}
	return nil
}

// smsRateError turns the rate-limit refusal of limit into the SMS API's
// 4095: who made more than perMinute requests a minute to what, and the
// seconds to wait (the Retry-After limit set). Other errors pass.
func smsRateError(w http.ResponseWriter, err error, field, who, what string, perMinute int) error {
	var ae *apiError
	if !errors.As(err, &ae) || ae.code != messaging.CodeRateLimitExceeded {
		return err
	}
	return sms.NewError(sms.CodeRateLimited, field, "%s made more than %d requests a minute to %s; retry after %s s",
		who, perMinute, what, w.Header().Get("Retry-After"))
}

// smsAnswer is the response code and description that every answer of the
// SMS API starts with, and the whole body of an error.
type smsAnswer struct {
	ResponseCode        int    `json:"response-code"`
	ResponseDescription string `json:"response-description"`
}

// smsSuccess is the smsAnswer of a request that succeeded.
func smsSuccess() smsAnswer {
	return smsAnswer{ResponseCode: sms.CodeSuccess, ResponseDescription: sms.CodeText(sms.CodeSuccess)}
}

// smsRefusal is an error of the SMS API that the REST layer answers with a
// status of its own instead of its code's: a wrong method (405), an unknown
// path (404), a body over the size limit (413).
type smsRefusal struct {
	err    *sms.Error
	status int
}

// Error implements the error interface.
func (e *smsRefusal) Error() string { return e.err.Error() }

// Unwrap returns the *sms.Error refused.
func (e *smsRefusal) Unwrap() error { return e.err }

// smsStatus returns the HTTP status an error of the SMS API is answered
// with: an smsRefusal's own, else its code's: 400 for bad input, 401 for
// credentials, 402 for low credit, 404 for unknown ids, 409 for a reused
// idempotency key, 429 for a rate limit, 500 for a system error (503 when it wraps
// messaging.ErrUnavailable: the store is away for a moment, retry), and
// 200 for CodeSuccess and CodeNoDeliveryReport (a report that is not there
// yet is not a failed request; poll again).
func smsStatus(err error) int {
	var ref *smsRefusal
	if errors.As(err, &ref) {
		return ref.status
	}
	e := sms.AsError(err)
	switch e.Code {
	case sms.CodeSuccess, sms.CodeNoDeliveryReport:
		return http.StatusOK
	case sms.CodeInvalidCredentials, sms.CodeNoPartnerID, sms.CodeNoAPIKey:
		return http.StatusUnauthorized
	case sms.CodeLowCredit:
		return http.StatusPaymentRequired
	case sms.CodeNotFound:
		return http.StatusNotFound
	case sms.CodeIdempotencyConflict:
		return http.StatusConflict
	case sms.CodeRateLimited:
		return http.StatusTooManyRequests
	case sms.CodeSystemError:
		if errors.Is(e, messaging.ErrUnavailable) {
			return http.StatusServiceUnavailable
		}
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// Idempotency headers: the key of an SMS send, and the mark of an answer
// replayed for a repeated send (of either API).
const (
	headerIdempotencyKey = "Idempotency-Key"
	headerReplayed       = "Idempotent-Replayed"
)

// smsIdempotencyKey returns the Idempotency-Key header of r, "" when there
// is none. A header given more than once, or one sms.ValidateIdempotencyKey
// refuses (an empty one included), is 1009.
func smsIdempotencyKey(r *http.Request) (string, error) {
	vals, ok := r.Header[headerIdempotencyKey]
	if !ok {
		return "", nil
	}
	if len(vals) != 1 {
		return "", sms.NewError(sms.CodeUnsupportedDataType, headerIdempotencyKey, "must be given once (got %d headers)", len(vals))
	}
	if err := sms.ValidateIdempotencyKey(vals[0]); err != nil {
		return "", err
	}
	return vals[0], nil
}

// flexString is a JSON string, or a JSON integer number taken as its
// digits, or null (taken as absent).
type flexString string

var flexStringType = reflect.TypeFor[flexString]()

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexString) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*f = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
		return nil
	case isDigits(b):
		*f = flexString(b)
		return nil
	}
	return &json.UnmarshalTypeError{Value: jsonValueKind(b), Type: flexStringType}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// jsonValueKind names the kind of a JSON value for an error message.
func jsonValueKind(b []byte) string {
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case 'n':
		return "null"
	}
	return "number " + string(b)
}

// smsDecode reads the body strictly into v (see readJSON; member names
// in any case). Errors are *sms.Error (see smsDecodeError): 1010 for a
// request that is not one JSON object of the endpoint's members (413
// over the size limit), 1009 for a member of the wrong type or a string
// holding NUL. The members named in items hold items decoded one by one
// later (smslist), whose strings are not checked here.
func (h *Handler) smsDecode(w http.ResponseWriter, r *http.Request, v any, items ...string) error {
	return smsDecodeError(h.readJSON(w, r, v, strict{opaque: items}))
}

// smsServe serves a request of the SMS API: the body decoded strictly into
// a Req (see smsDecode, which takes items), which answer turns into the
// 200 answer, marked Idempotent-Replayed when it repeats the answer of an
// earlier request.
func smsServe[Req any](h *Handler, w http.ResponseWriter, r *http.Request, answer func(*Req) (out any, replayed bool, err error), items ...string) error {
	var req Req
	if err := h.smsDecode(w, r, &req, items...); err != nil {
		return err
	}
	out, replayed, err := answer(&req)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set(headerReplayed, "true")
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// smsDecodeError words a refusal of the strict decoder as the SMS API's:
// 1009 for a value of the wrong type or holding NUL, 1010 for anything
// else, with the status of its own for a body over the size limit.
func smsDecodeError(err error) error {
	if err == nil {
		return nil
	}
	text := sms.CodeText(sms.CodeUnsupportedRequest)
	var bj *badJSON
	var ae *apiError
	var me *messaging.Error
	switch {
	case errors.As(err, &bj) && bj.dataType:
		return sms.NewError(sms.CodeUnsupportedDataType, bj.field, "%s", bj.rule)
	case errors.As(err, &bj):
		return sms.NewError(sms.CodeUnsupportedRequest, bj.field, "%s", bj.rule)
	case errors.As(err, &ae):
		return &smsRefusal{status: ae.status, err: &sms.Error{Code: sms.CodeUnsupportedRequest, Description: text + ": " + ae.message}}
	case errors.As(err, &me):
		return &sms.Error{Code: sms.CodeUnsupportedRequest, Description: text + ": " + me.Message, Field: me.Field}
	}
	return sms.NewError(sms.CodeUnsupportedRequest, "body", "must be one JSON object")
}

// smsSendRequest is the body of POST /sms/v1/messages.
type smsSendRequest struct {
	APIKey     string     `json:"apikey"`
	PartnerID  flexString `json:"partnerID"`
	Mobile     flexString `json:"mobile"`
	Message    string     `json:"message"`
	Shortcode  string     `json:"shortcode"`
	TimeToSend flexString `json:"timeToSend"`
	PassType   string     `json:"pass_type"`
}

type smsSendResponse struct {
	smsAnswer
	ID                string `json:"id"`
	Status            string `json:"status"`
	Mobile            string `json:"mobile"`
	ProviderMessageID string `json:"providerMessageId"`
}

func (h *Handler) smsSend(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	key, err := smsIdempotencyKey(r)
	if err != nil {
		return err
	}
	return smsServe(h, w, r, func(req *smsSendRequest) (any, bool, error) {
		if err := h.smsAdmit(w, r, smsRouteName("/sms/v1/messages"), true, [2]string{string(req.PartnerID), req.APIKey}); err != nil {
			return nil, false, err
		}
		res, err := h.sms.Send(r.Context(), &sms.SendParams{
			APIKey: req.APIKey, PartnerID: string(req.PartnerID), Mobile: string(req.Mobile), Message: req.Message,
			Shortcode: req.Shortcode, TimeToSend: string(req.TimeToSend), PassType: req.PassType, IdempotencyKey: key,
		})
		if err != nil {
			return nil, false, err
		}
		return smsSendResponse{
			smsAnswer: smsSuccess(), ID: res.ID, Status: res.Status, Mobile: res.Mobile, ProviderMessageID: res.ProviderMessageID,
		}, res.Replayed, nil
	})
}

// smsBulkRequest is the body of POST /sms/v1/messages/bulk. Items are kept
// raw and decoded one by one, so that one bad item fails alone.
type smsBulkRequest struct {
	Count   *int              `json:"count"`
	SMSList []json.RawMessage `json:"smslist"`
}

type smsBulkItem struct {
	PartnerID   flexString      `json:"partnerID"`
	APIKey      string          `json:"apikey"`
	PassType    string          `json:"pass_type"`
	ClientSMSID json.RawMessage `json:"clientsmsid"`
	Mobile      flexString      `json:"mobile"`
	Message     string          `json:"message"`
	Shortcode   string          `json:"shortcode"`
	TimeToSend  flexString      `json:"timeToSend"`
}

type smsBulkEntry struct {
	smsAnswer
	Mobile      string          `json:"mobile"`
	MessageID   int64           `json:"messageid,omitempty"`
	ClientSMSID json.RawMessage `json:"clientsmsid,omitempty"`
	NetworkID   string          `json:"networkid,omitempty"`
}

type smsBulkResponse struct {
	Responses []smsBulkEntry `json:"responses"`
}

// maxClientSMSID is the longest clientsmsid accepted: characters of a
// string's decoded value, or digits (and sign, point, exponent) of a
// number.
const maxClientSMSID = 128

func (h *Handler) smsBulk(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	key, err := smsIdempotencyKey(r)
	if err != nil {
		return err
	}
	return smsServe(h, w, r, func(req *smsBulkRequest) (any, bool, error) {
		return h.bulkAnswer(r.Context(), req, key, func(creds [][2]string) error {
			return h.smsAdmit(w, r, smsRouteName("/sms/v1/messages/bulk"), false, creds...)
		})
	}, "smslist")
}

// bulkAnswer sends the items of req, under the idempotency key key, and
// returns the answer and whether it repeats an earlier request's. admit
// is given the credentials of the readable items before anything is sent;
// its error refuses the whole request.
func (h *Handler) bulkAnswer(ctx context.Context, req *smsBulkRequest, key string, admit func([][2]string) error) (*smsBulkResponse, bool, error) {
	n := len(req.SMSList)
	if n == 0 || n > sms.MaxBulk {
		return nil, false, sms.NewError(sms.CodeTooManyMessages, "smslist", "must hold 1 to %d messages (got %d)", sms.MaxBulk, n)
	}
	if req.Count == nil || *req.Count != n {
		got := "no count"
		if req.Count != nil {
			got = "count " + strconv.Itoa(*req.Count)
		}
		return nil, false, sms.NewError(sms.CodeTooManyMessages, "count", "must equal the number of items in smslist (got %s and %d items)", got, n)
	}
	// Every item goes to the service, an unreadable one with its refusal,
	// so that the service answers (and remembers, under a key) the whole
	// list. The echoes of mobile and clientsmsid are this request's.
	entries := make([]smsBulkEntry, n)
	items := make([]*sms.BulkItem, n)
	for i, raw := range req.SMSList {
		var it smsBulkItem
		err := smsDecodeError(h.decodeObject(raw, &it, fmt.Sprintf("smslist[%d]", i), strict{}))
		if err == nil {
			err = checkClientSMSID(it.ClientSMSID)
		}
		if err != nil {
			echoBadItem(&entries[i], raw)
			items[i] = &sms.BulkItem{Err: err, Mobile: entries[i].Mobile, ClientSMSID: clientRef(entries[i].ClientSMSID)}
			continue
		}
		entries[i].Mobile, entries[i].ClientSMSID = string(it.Mobile), compactJSON(it.ClientSMSID)
		items[i] = &sms.BulkItem{
			PartnerID: string(it.PartnerID), APIKey: it.APIKey, PassType: it.PassType, ClientSMSID: clientRef(it.ClientSMSID),
			Mobile: string(it.Mobile), Message: it.Message, Shortcode: it.Shortcode, TimeToSend: string(it.TimeToSend),
		}
	}
	var creds [][2]string
	for _, it := range items {
		if it.Err == nil {
			creds = append(creds, [2]string{it.PartnerID, it.APIKey})
		}
	}
	if err := admit(creds); err != nil {
		return nil, false, err
	}
	res, err := h.sms.Bulk(ctx, &sms.BulkParams{Items: items, IdempotencyKey: key})
	if err != nil {
		return nil, false, err
	}
	for i, rr := range res.Results {
		e := &entries[i]
		e.smsAnswer = smsAnswer{ResponseCode: rr.Code, ResponseDescription: rr.Description}
		if rr.Code == sms.CodeSuccess {
			e.MessageID, e.NetworkID = rr.MessageID, rr.NetworkID
		}
	}
	return &smsBulkResponse{Responses: entries}, res.Replayed, nil
}

// checkClientSMSID accepts an absent clientsmsid, a string of at most
// maxClientSMSID characters (counted in the decoded value, not in its JSON
// escapes) or a number of at most maxClientSMSID characters.
func checkClientSMSID(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	n := len(raw)
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return sms.NewError(sms.CodeUnsupportedDataType, "clientsmsid", "must be a string or a number")
		}
		n = utf8.RuneCountInString(s)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	default:
		return sms.NewError(sms.CodeUnsupportedDataType, "clientsmsid", "must be a string or a number (got a JSON %s)", jsonValueKind(raw))
	}
	if n > maxClientSMSID {
		return sms.NewError(sms.CodeUnsupportedDataType, "clientsmsid", "must be at most %d characters (got %d)", maxClientSMSID, n)
	}
	return nil
}

// clientRef is the text of a clientsmsid: a string's content or a number's
// digits.
func clientRef(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// compactJSON returns raw without insignificant space, nil for absent or
// null.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// echoBadItem fills the mobile and clientsmsid of a refused item's entry
// from whatever of them the item carries in a usable form.
func echoBadItem(e *smsBulkEntry, raw json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	for k, v := range m {
		switch strings.ToLower(k) {
		case "mobile":
			var f flexString
			if f.UnmarshalJSON(v) == nil {
				e.Mobile = string(f)
			}
		case "clientsmsid":
			if checkClientSMSID(v) == nil {
				e.ClientSMSID = compactJSON(v)
			}
		}
	}
}

// smsReportRequest is the body of POST /sms/v1/messages/delivery-report.
type smsReportRequest struct {
	APIKey    string     `json:"apikey"`
	PartnerID flexString `json:"partnerID"`
	MessageID flexString `json:"messageID"`
}

type smsReportResponse struct {
	smsAnswer
	MessageID           string `json:"message-id"`
	DeliveryStatus      int    `json:"delivery-status"`
	DeliveryDescription string `json:"delivery-description"`
	DeliveryTAT         string `json:"delivery-tat"`
	DeliveryNetworkID   string `json:"delivery-networkid"`
	DeliveryTime        string `json:"delivery-time"`
}

func (h *Handler) smsReport(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	return smsServe(h, w, r, func(req *smsReportRequest) (any, bool, error) {
		if err := h.smsAdmit(w, r, smsRouteName("/sms/v1/messages/delivery-report"), true, [2]string{string(req.PartnerID), req.APIKey}); err != nil {
			return nil, false, err
		}
		rep, err := h.sms.DeliveryReport(r.Context(), &sms.ReportParams{APIKey: req.APIKey, PartnerID: string(req.PartnerID), MessageID: string(req.MessageID)})
		if err != nil {
			return nil, false, err
		}
		out := smsReportResponse{
			smsAnswer: smsSuccess(), MessageID: rep.MessageID,
			DeliveryStatus: rep.Status, DeliveryDescription: rep.Description, DeliveryNetworkID: rep.NetworkID,
		}
		if rep.TAT >= 0 {
			out.DeliveryTAT = strconv.FormatInt(int64(rep.TAT.Round(time.Second)/time.Second), 10) + "s"
		}
		if !rep.Time.IsZero() {
			out.DeliveryTime = rep.Time.Format("2006-01-02 15:04:05")
		}
		return out, false, nil
	})
}

// smsBalanceRequest is the body of POST /sms/v1/account/balance.
type smsBalanceRequest struct {
	APIKey    string     `json:"apikey"`
	PartnerID flexString `json:"partnerID"`
}

type smsBalanceResponse struct {
	smsAnswer
	Credit    string `json:"credit"`
	PartnerID string `json:"partner-id"`
}

func (h *Handler) smsBalance(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	return smsServe(h, w, r, func(req *smsBalanceRequest) (any, bool, error) {
		if err := h.smsAdmit(w, r, smsRouteName("/sms/v1/account/balance"), true, [2]string{string(req.PartnerID), req.APIKey}); err != nil {
			return nil, false, err
		}
		b, err := h.sms.Balance(r.Context(), string(req.PartnerID), req.APIKey)
		if err != nil {
			return nil, false, err
		}
		return smsBalanceResponse{smsAnswer: smsSuccess(), Credit: b.Credit.String(), PartnerID: b.PartnerID}, false, nil
	})
}
