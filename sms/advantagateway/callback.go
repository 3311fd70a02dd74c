package advantagateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ujumbe/messaging/sms"
)

// pushedReport is a delivery report the upstream pushes to the service's
// callback URL. The upstream writes its fields in camel case
// (deliveryStatus) or, as in getdlr's answer, with hyphens
// (delivery-status); both are read. Only one spelling of a field may be
// given.
type pushedReport struct {
	MessageID     *flexText `json:"messageID"`
	MessageIDLow  *flexText `json:"messageid"`
	MessageIDDash *flexText `json:"message-id"`

	DeliveryStatus     *flexText `json:"deliveryStatus"`
	DeliveryStatusDash *flexText `json:"delivery-status"`

	DeliveryDescription     *string `json:"deliveryDescription"`
	DeliveryDescriptionDash *string `json:"delivery-description"`

	DeliveryTAT     *flexText `json:"deliveryTAT"`
	DeliveryTATDash *flexText `json:"delivery-tat"`

	DeliveryNetworkID     *flexText `json:"deliveryNetworkID"`
	DeliveryNetworkIDDash *flexText `json:"delivery-networkid"`

	Timestamp    *string `json:"timestamp"`
	DeliveryTime *string `json:"delivery-time"`

	// ClientSMSID is the client reference of the message (the service's
	// message number), which this service's upstream adds to its reports;
	// the spec's report has none.
	ClientSMSID *flexText `json:"clientsmsid"`

	// A report in getdlr's answer shape carries these too.
	ResponseCode        *flexText `json:"response-code"`
	ResponseDescription *string   `json:"response-description"`
}

// ParseDeliveryReport reads a delivery report the upstream pushed to the
// service's callback URL (the request body) and returns it: the
// upstream's message id, the client reference and the report. The body
// is one JSON object with these members, each in camel case or with
// hyphens as in getdlr's answer:
//
//	messageID | messageid | message-id               the upstream's message id (required)
//	clientsmsid                                      optional: the clientsmsid the message was handed over with
//	                                                 (the service's message number); it confirms a hand-over whose answer was lost
//	deliveryStatus | delivery-status                 the delivery-status number, e.g. 32
//	deliveryDescription | delivery-description       e.g. DeliveredToTerminal
//	deliveryTAT | delivery-tat                       time taken (read, not kept: the service counts from its hand-over)
//	deliveryNetworkID | delivery-networkid           the network id
//	timestamp | delivery-time                        when, "2006-01-02 15:04:05" in Options.Location
//	response-code, response-description              as in getdlr's answer; a response-code other than 200 is refused
//
// Strings and numbers are both taken for ids, numbers and codes. A body
// that is not such an object, with a member not listed, a field given in
// two spellings, a missing id, a deliveryStatus that is not a number, or a
// timestamp in another layout is an error naming the member; the error
// never quotes more than 40 characters of a value. A description missing
// is the status's (see sms.DeliveryDescription), else Unknown.
func (g *Gateway) ParseDeliveryReport(body []byte) (*sms.UpstreamReport, error) {
	id, ref, r, err := g.parseDeliveryReport(body)
	if err != nil {
		return nil, err
	}
	return &sms.UpstreamReport{GatewayMessageID: id, ClientRef: ref, Report: r}, nil
}

func (g *Gateway) parseDeliveryReport(body []byte) (gatewayMessageID, clientRef string, r *sms.Report, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var p pushedReport
	if err := dec.Decode(&p); err != nil {
		return "", "", nil, fmt.Errorf("the body is not a delivery report: %s", decodeText(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", "", nil, errors.New("the body is not a delivery report: data after the JSON object")
	}
	id, err := oneOf("messageID", p.MessageID, p.MessageIDLow, p.MessageIDDash)
	if err != nil {
		return "", "", nil, err
	}
	if id == nil || strings.TrimSpace(string(*id)) == "" {
		return "", "", nil, errors.New("messageID is required: the upstream's message id")
	}
	status, err := oneOf("deliveryStatus", p.DeliveryStatus, p.DeliveryStatusDash)
	if err != nil {
		return "", "", nil, err
	}
	desc, err := oneOf("deliveryDescription", p.DeliveryDescription, p.DeliveryDescriptionDash)
	if err != nil {
		return "", "", nil, err
	}
	network, err := oneOf("deliveryNetworkID", p.DeliveryNetworkID, p.DeliveryNetworkIDDash)
	if err != nil {
		return "", "", nil, err
	}
	if _, err := oneOf("deliveryTAT", p.DeliveryTAT, p.DeliveryTATDash); err != nil {
		return "", "", nil, err
	}
	at, err := oneOf("timestamp", p.Timestamp, p.DeliveryTime)
	if err != nil {
		return "", "", nil, err
	}
	if p.ResponseCode != nil && p.ResponseCode.code() != 200 {
		return "", "", nil, fmt.Errorf("response-code %q is not 200: not a delivery report", clipText(string(*p.ResponseCode)))
	}
	r, err = g.report(deref(status), strings.TrimSpace(deref(desc)), deref(network), strings.TrimSpace(deref(at)), true)
	if err != nil {
		return "", "", nil, err
	}
	if p.ClientSMSID != nil {
		clientRef = strings.TrimSpace(string(*p.ClientSMSID))
	}
	return strings.TrimSpace(string(*id)), clientRef, r, nil
}

// oneOf returns the one spelling of a field that was given, nil for none,
// and an error when more than one was.
func oneOf[T any](name string, vs ...*T) (*T, error) {
	var out *T
	for _, v := range vs {
		if v == nil {
			continue
		}
		if out != nil {
			return nil, fmt.Errorf("%s is given twice, in two spellings", name)
		}
		out = v
	}
	return out, nil
}

func deref[T ~string](v *T) T {
	if v == nil {
		return ""
	}
	return *v
}

// decodeText describes a decoding error without quoting the body.
func decodeText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	case errors.As(err, &te) && te.Field == "":
		return "want a JSON object"
	case errors.As(err, &te):
		return fmt.Sprintf("%s must be a string or a number", te.Field)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "empty or truncated JSON"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown member " + clipText(strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return clipText(err.Error())
}
