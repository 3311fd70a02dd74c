// Package advantatest is a mock of an Advanta-compatible bulk-SMS
// upstream, for tests of programs that send through sms/advantagateway:
// an http.Handler answering the four endpoints (sendsms, sendbulk, getdlr,
// getbalance) in the upstream's shapes, keeping the service's credit at
// the upstream, recording every message it is given, and failing on
// demand (an HTML page, a 200 without responses, no answer at all, or
// accepting the messages and then not answering).
//
//	up := advantatest.New(&advantatest.Options{PartnerID: "9876", APIKey: key, Credit: sms.Credits(100)})
//	srv := httptest.NewServer(up)
//	gw, _ := advantagateway.New(&advantagateway.Options{BaseURL: srv.URL, PartnerID: "9876", APIKey: key})
//
// Each accepted message costs Options.CostPerMessage of the credit; once
// the credit cannot cover a message the upstream refuses it with 1004 (Low
// bulk credits), as a prepaid upstream does. Wrong credentials get 1006.
// Message ids are decimal numbers from 8290001 on. It is safe for
// concurrent use.
package advantatest

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
)

// Options configure an Upstream.
type Options struct {
	// PartnerID and APIKey are the credentials the upstream accepts.
	PartnerID string
	APIKey    string
	// Credit is the opening credit of the account at the upstream.
	Credit sms.Credit
	// CostPerMessage is what each accepted message takes from the credit.
	// Default 1.00.
	CostPerMessage sms.Credit
	// Location is the time zone of the delivery times getdlr answers.
	// Default UTC.
	Location *time.Location
}

// Message is a message the upstream was given, accepted or refused.
type Message struct {
	// Path is the endpoint it came through (advantagateway.PathSendSMS or
	// PathSendBulk).
	Path string
	// PartnerID and APIKey are the credentials it came with.
	PartnerID string
	APIKey    string
	Mobile    string
	Text      string
	Shortcode string
	// ClientSMSID is the client reference of a sendbulk item, as text
	// ("" through sendsms).
	ClientSMSID string
	// Code is the response-code it was answered; MessageID the id given
	// when it was accepted (Code 200).
	Code      int
	MessageID string
}

// Failure is a way the upstream fails a request.
type Failure int

// Failures the upstream can be told to answer with (see Upstream.Fail).
const (
	// FailHTML answers 200 with an HTML page.
	FailHTML Failure = iota + 1
	// FailNoResponses answers 200 {"response-code":200,...} without the
	// per-message "responses".
	FailNoResponses
	// FailHang never answers: it waits until the client gives up.
	FailHang
	// FailUnavailable answers 503 with an HTML page.
	FailUnavailable
	// FailAcceptHang accepts the request's messages (sendsms, sendbulk)
	// as usual, keeping them, and then never answers: it waits until the
	// client gives up. ReportBody gives the report it would later push
	// for each.
	FailAcceptHang
)

// Upstream is the mock upstream. Serve it with httptest.NewServer or any
// http.Server.
type Upstream struct {
	o Options

	mu       sync.Mutex
	credit   sms.Credit
	seq      int64
	messages []Message
	requests map[string]int
	reports  map[string]*sms.Report
	failures map[string][]Failure
	// hold, while not nil, is what send requests wait on (see Hold);
	// held counts the requests waiting.
	hold chan struct{}
	held int
}

// New returns an Upstream.
func New(o *Options) *Upstream {
	u := &Upstream{o: *o, requests: map[string]int{}, reports: map[string]*sms.Report{}, failures: map[string][]Failure{}, seq: 8290000}
	if u.o.CostPerMessage == 0 {
		u.o.CostPerMessage = sms.Credits(1)
	}
	if u.o.Location == nil {
		u.o.Location = time.UTC
	}
	u.credit = u.o.Credit
	return u
}

// Credit returns the account's credit at the upstream.
func (u *Upstream) Credit() sms.Credit {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.credit
}

// TopUp adds c to the account's credit at the upstream.
func (u *Upstream) TopUp(c sms.Credit) {
	u.mu.Lock()
	u.credit += c
	u.mu.Unlock()
}

// Messages returns the messages given so far, in the order received.
func (u *Upstream) Messages() []Message {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Message{}, u.messages...)
}

// Requests returns how many requests reached path (for example
// advantagateway.PathGetDLR).
func (u *Upstream) Requests(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests[path]
}

// SetReport makes getdlr answer r for messageID. Without one it answers
// 1008 (No Delivery Report) for an id it gave, and 4093 for others.
func (u *Upstream) SetReport(messageID string, r *sms.Report) {
	u.mu.Lock()
	u.reports[messageID] = r
	u.mu.Unlock()
}

// Fail makes the next requests to path fail, one failure each, in order.
func (u *Upstream) Fail(path string, fs ...Failure) {
	u.mu.Lock()
	u.failures[path] = append(u.failures[path], fs...)
	u.mu.Unlock()
}

// Hold makes the send requests (sendsms, sendbulk) that arrive from now
// on wait, once their body is read, until Release; a program killed
// meanwhile never gets the answer of what the upstream then accepts.
func (u *Upstream) Hold() {
	u.mu.Lock()
	if u.hold == nil {
		u.hold = make(chan struct{})
	}
	u.mu.Unlock()
}

// Release lets the send requests held by Hold go on, and stops holding.
func (u *Upstream) Release() {
	u.mu.Lock()
	if u.hold != nil {
		close(u.hold)
		u.hold = nil
	}
	u.mu.Unlock()
}

// Held returns how many send requests wait for Release.
func (u *Upstream) Held() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.held
}

// ServeHTTP implements http.Handler.
func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.Method != http.MethodPost || err != nil {
		answer(w, http.StatusBadRequest, map[string]any{"response-code": 1010, "response-description": "Unsupported request type"})
		return
	}
	u.mu.Lock()
	u.requests[r.URL.Path]++
	var fail Failure
	if fs := u.failures[r.URL.Path]; len(fs) > 0 {
		fail, u.failures[r.URL.Path] = fs[0], fs[1:]
	}
	hold := u.hold
	if r.URL.Path != advantagateway.PathSendSMS && r.URL.Path != advantagateway.PathSendBulk {
		hold = nil
	}
	if hold != nil {
		u.held++
	}
	u.mu.Unlock()
	if hold != nil {
		<-hold
		u.mu.Lock()
		u.held--
		u.mu.Unlock()
	}
	switch fail {
	case FailHTML:
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>Service temporarily unavailable</body></html>")
		return
	case FailNoResponses:
		answer(w, http.StatusOK, map[string]any{"response-code": 200, "response-description": "Success"})
		return
	case FailHang:
		<-r.Context().Done()
		return
	case FailAcceptHang:
		var req map[string]any
		if json.Unmarshal(body, &req) == nil {
			u.mu.Lock()
			u.sendAll(r.URL.Path, req)
			u.mu.Unlock()
		}
		<-r.Context().Done()
		return
	case FailUnavailable:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "<html>503</html>")
		return
	}
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		answer(w, http.StatusBadRequest, map[string]any{"response-code": 1010, "response-description": "Unsupported request type"})
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	switch r.URL.Path {
	case advantagateway.PathSendSMS, advantagateway.PathSendBulk:
		answer(w, http.StatusOK, map[string]any{"responses": u.sendAll(r.URL.Path, req)})
	case advantagateway.PathGetDLR:
		if !u.authentic(req) {
			answer(w, http.StatusUnauthorized, map[string]any{"response-code": 1006, "response-description": "Invalid credentials"})
			return
		}
		id := text(req["messageID"])
		rep, ok := u.reports[id]
		switch {
		case ok:
			a := map[string]any{"response-code": 200, "response-description": "Success", "message-id": id,
				"delivery-status": rep.Status, "delivery-description": rep.Description, "delivery-networkid": rep.NetworkID}
			if !rep.Time.IsZero() {
				a["delivery-time"] = rep.Time.In(u.o.Location).Format("2006-01-02 15:04:05")
			}
			answer(w, http.StatusOK, a)
		case u.gave(id):
			answer(w, http.StatusOK, map[string]any{"response-code": 1008, "response-description": "No Delivery Report"})
		default:
			answer(w, http.StatusNotFound, map[string]any{"response-code": 4093, "response-description": "Details Not Found"})
		}
	case advantagateway.PathGetBalance:
		if !u.authentic(req) {
			answer(w, http.StatusUnauthorized, map[string]any{"response-code": 1006, "response-description": "Invalid credentials"})
			return
		}
		answer(w, http.StatusOK, map[string]any{"response-code": 200, "credit": u.credit.String(), "partner-id": u.o.PartnerID})
	default:
		answer(w, http.StatusNotFound, map[string]any{"response-code": 1010, "response-description": "Unsupported request type"})
	}
}

// sendAll answers the messages of a sendsms or sendbulk request; called
// under u.mu.
func (u *Upstream) sendAll(path string, req map[string]any) []any {
	if path == advantagateway.PathSendSMS {
		return []any{u.send(path, req)}
	}
	list, _ := req["smslist"].([]any)
	rs := []any{}
	for _, it := range list {
		item, _ := it.(map[string]any)
		rs = append(rs, u.send(path, item))
	}
	return rs
}

// ReportBody returns the delivery report the upstream pushes to the
// service's callback URL for the message it accepted as messageID: the
// report's members in camel case (see advantagateway.ParseDeliveryReport)
// and the clientsmsid the message came with, when it had one.
func (u *Upstream) ReportBody(messageID string, r *sms.Report) []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	b := map[string]any{"messageID": messageID, "deliveryStatus": r.Status, "deliveryDescription": r.Description}
	if r.NetworkID != "" {
		b["deliveryNetworkID"] = r.NetworkID
	}
	if !r.Time.IsZero() {
		b["timestamp"] = r.Time.In(u.o.Location).Format("2006-01-02 15:04:05")
	}
	for _, m := range u.messages {
		if m.MessageID == messageID && m.ClientSMSID != "" {
			b["clientsmsid"] = m.ClientSMSID
		}
	}
	out, _ := json.Marshal(b)
	return out
}

// send answers one message of sendsms or sendbulk; called under u.mu.
func (u *Upstream) send(path string, item map[string]any) map[string]any {
	m := Message{Path: path, PartnerID: text(item["partnerID"]), APIKey: text(item["apikey"]), Mobile: text(item["mobile"]),
		Text: text(item["message"]), Shortcode: text(item["shortcode"]), ClientSMSID: text(item["clientsmsid"])}
	r := map[string]any{"mobile": m.Mobile}
	if m.ClientSMSID != "" {
		r["clientsmsid"] = m.ClientSMSID
	}
	switch {
	case !u.authentic(item):
		m.Code = 1006
	case u.credit < u.o.CostPerMessage:
		m.Code = 1004
	default:
		m.Code = 200
		u.credit -= u.o.CostPerMessage
		u.seq++
		m.MessageID = strconv.FormatInt(u.seq, 10)
		r["messageid"], r["networkid"] = m.MessageID, "1"
	}
	r["response-code"], r["response-description"] = m.Code, sms.CodeText(m.Code)
	u.messages = append(u.messages, m)
	return r
}

// gave reports whether the upstream gave id to a message; called under
// u.mu.
func (u *Upstream) gave(id string) bool {
	for _, m := range u.messages {
		if m.MessageID == id && id != "" {
			return true
		}
	}
	return false
}

// authentic reports whether req carries the upstream's credentials (the
// apikey compared in constant time, as a real upstream would).
func (u *Upstream) authentic(req map[string]any) bool {
	key := subtle.ConstantTimeCompare([]byte(text(req["apikey"])), []byte(u.o.APIKey)) == 1
	return text(req["partnerID"]) == u.o.PartnerID && key
}

// text is a JSON string or number as text.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
