package advantagateway_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
	"github.com/ujumbe/messaging/sms/gatewaytest"
)

// TestConformance runs the sms.Gateway conformance suite against the
// gateway pointed at the mock upstream (loopback), answering by the
// simulated upstream's rules.
func TestConformance(t *testing.T) {
	gatewaytest.Run(t, func(t *testing.T, up *gatewaytest.Upstream) sms.Gateway {
		u := newUpstream(t)
		u.handle = rulesUpstream(t, up)
		return u.gateway(t)
	})
}

// accepted is a message the rules upstream accepted.
type accepted struct {
	mobile string
	at     time.Time
}

// rulesUpstream answers requests in the upstream's shapes by up's rules.
// It is called under the mock's lock. Bulk answers come in reverse order,
// each echoing its clientsmsid, as the upstream may answer.
func rulesUpstream(t *testing.T, up *gatewaytest.Upstream) func(path string, body map[string]any) mockResponse {
	nairobi, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]accepted{}
	seq := 8290000
	answer := func(v any) mockResponse {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return mockResponse{200, nil, string(b)}
	}
	// one answers one message, echoing clientsmsid when given.
	one := func(mobile string, clientsmsid any) map[string]any {
		r := map[string]any{"mobile": mobile}
		if clientsmsid != nil {
			r["clientsmsid"] = clientsmsid
		}
		if ref := up.Refusal(mobile); ref != nil {
			r["response-code"], r["response-description"] = ref.Code, ref.Description
			return r
		}
		seq++
		id := fmt.Sprint(seq)
		byID[id] = accepted{mobile, up.Now()}
		r["response-code"], r["response-description"], r["messageid"], r["networkid"] = 200, "Success", id, "1"
		return r
	}
	return func(path string, body map[string]any) mockResponse {
		switch path {
		case advantagateway.PathSendSMS:
			mobile, _ := body["mobile"].(string)
			return answer(map[string]any{"responses": []any{one(mobile, nil)}})
		case advantagateway.PathSendBulk:
			list, _ := body["smslist"].([]any)
			rs := make([]any, len(list))
			for i, it := range list {
				item, _ := it.(map[string]any)
				mobile, _ := item["mobile"].(string)
				rs[len(list)-1-i] = one(mobile, item["clientsmsid"])
			}
			return answer(map[string]any{"responses": rs})
		case advantagateway.PathGetDLR:
			id, _ := body["messageID"].(string)
			a, ok := byID[id]
			if !ok {
				return mockResponse{404, nil, `{"response-code":4093,"response-description":"Details Not Found"}`}
			}
			rep := up.Report(a.mobile, a.at)
			if rep == nil {
				return answer(map[string]any{"response-code": 1008, "response-description": "No Delivery Report"})
			}
			return answer(map[string]any{"response-code": 200, "response-description": "Success", "message-id": id,
				"delivery-status": rep.Status, "delivery-description": rep.Description,
				"delivery-time": rep.Time.In(nairobi).Format("2006-01-02 15:04:05")})
		case advantagateway.PathGetBalance:
			return answer(map[string]any{"response-code": 200, "credit": up.Balance().String(), "partner-id": partner})
		}
		t.Errorf("unexpected request to %s", path)
		return mockResponse{404, nil, `not found`}
	}
}
