package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
)

// Figure 6: SMS bulk. POST /sms/v1/messages/bulk with 20 items against the
// same 20 messages sent one by one with POST /sms/v1/messages, in items
// accepted per second, through httpapi on sqlitestore with the same 8
// keep-alive clients (so that concurrent single sends share commits too).

const (
	smsClients  = 8
	smsBulkSize = 20
	smsPartner  = "1234"
	smsKey      = "sms_bench_0123456789abcdef0123456789abcdef"
)

func runSMSBulk(ctx context.Context, c *config) ([]*row, error) {
	d := pick(c, time.Second, 300*time.Millisecond)
	r := &row{figure: "6", name: "SMS bulk of 20 vs 20 single sends, 8 keep-alive clients", unit: "items/s", higherBetter: true, goal: 5,
		baselineName: "the same messages sent one per POST /sms/v1/messages by the same 8 clients"}
	err := c.measure(r, "sms", func(dir string, bulk bool) (float64, error) {
		return smsLoad(ctx, dir, d, bulk)
	})
	if err != nil {
		return nil, err
	}
	return []*row{r}, nil
}

// smsLoad serves the SMS API on a fresh database and returns the items
// accepted per second by bulk or by single sends.
func smsLoad(ctx context.Context, dir string, d time.Duration, bulk bool) (float64, error) {
	st, svc, err := newStoreService(ctx, dir, noopProvider{}, nil)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	smsSvc, err := sms.New(st, fakegateway.New(nil), nil)
	if err != nil {
		return 0, err
	}
	if _, _, err := smsSvc.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: smsPartner, APIKey: smsKey,
		Senders: []string{"ACME"}, Credit: sms.Credits(1_000_000_000)}); err != nil {
		return 0, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: httpapi.New(svc, &httpapi.Options{SMS: smsSvc, DisableRateLimits: true})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	client := newClient(smsClients)
	defer client.CloseIdleConnections()
	base := "http://" + ln.Addr().String()

	item := func(w, i, j int) string {
		return fmt.Sprintf(`"partnerID":%q,"apikey":%q,"mobile":"%s","message":"Your order A-1042 has shipped.","shortcode":"ACME"`,
			smsPartner, smsKey, phone(w*1_000_000 + i*smsBulkSize + j)[1:])
	}
	send := func(ctx context.Context, w, i int) error {
		if !bulk {
			status, body, err := do(ctx, client, "POST", base+"/sms/v1/messages", "{"+item(w, i, 0)+"}")
			if err != nil {
				return err
			}
			if status != 200 {
				return fmt.Errorf("single send: status %d: %s", status, body)
			}
			return nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, `{"count":%d,"smslist":[`, smsBulkSize)
		for j := range smsBulkSize {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"pass_type":"plain","clientsmsid":%d,%s}`, j, item(w, i, j))
		}
		b.WriteString("]}")
		status, body, err := do(ctx, client, "POST", base+"/sms/v1/messages/bulk", b.String())
		if err != nil {
			return err
		}
		var res struct {
			Responses []struct {
				Code int `json:"response-code"`
			} `json:"responses"`
		}
		if status != 200 || json.Unmarshal(body, &res) != nil || len(res.Responses) != smsBulkSize {
			return fmt.Errorf("bulk send: status %d: %s", status, body)
		}
		for _, e := range res.Responses {
			if e.Code != 200 {
				return fmt.Errorf("bulk send: an item failed: %s", body)
			}
		}
		return nil
	}
	if _, err := loop(ctx, smsClients, d/10, func(ctx context.Context, w, i int) error { return send(ctx, w+100, i) }); err != nil {
		return 0, err
	}
	rate, err := loop(ctx, smsClients, d, send)
	if bulk {
		rate *= smsBulkSize
	}
	return rate, err
}
