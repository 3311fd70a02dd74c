package sms_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// received is a POST the callback receiver got.
type received struct {
	header http.Header
	body   []byte
}

// verifySignature checks a delivery as Standard Webhooks specifies,
// written from the specification: HMAC-SHA256 under the base64-decoded
// secret (after "whsec_") of "<webhook-id>.<webhook-timestamp>.<body>",
// one of the space-separated "v1,<base64>" entries of webhook-signature.
func verifySignature(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, ok := strings.CutPrefix(sig, "v1,")
		got, err := base64.StdEncoding.DecodeString(v)
		if ok && err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// TestCallbackReceivesFinalReports: an account's callback receives one
// signed sms.delivery_report event per final report, pushed by the
// gateway or fetched when the client polls, and none for an interim
// report or a repeated final one; a bad URL, an unknown account and a
// service without callbacks are refused. With the callbacks' Service on
// the SMS store itself, each push is queued by the save that stores its
// report (Store.SMSReportSave); otherwise (the store given to New is a
// wrapper, or the Outbox names no store) by a write of its own, through
// the Outbox, just after it.
func TestCallbackReceivesFinalReports(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ direct, outbox bool }{
		"the Service's store": {direct: true},
		"a wrapper":           {},
		"an Outbox":           {direct: true, outbox: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testCallbackReceivesFinalReports(t, c.direct, c.outbox)
		})
	}
}

func testCallbackReceivesFinalReports(t *testing.T, direct, withOutbox bool) {
	var mu sync.Mutex
	var got []received
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Header.Clone(), b})
		mu.Unlock()
	}))
	defer rcv.Close()

	st := &pushRecorder{Store: memstore.New()}
	clk := &clock{t: base}
	msvc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{Clock: clk.Now, SecretKey: bytes.Repeat([]byte{3}, 32),
		Webhooks: messaging.WebhookOptions{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := msvc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "sms-callbacks", Name: "SMS callbacks"}); err != nil {
		t.Fatal(err)
	}
	cbo := &sms.CallbackOptions{Service: msvc, WorkspaceID: "sms-callbacks"}
	outbox := &recordingOutbox{Outbox: msvc}
	if withOutbox {
		cbo.Outbox = outbox
	}
	e := setup(t, &setupOpts{store: st, direct: direct, gw: &fakegateway.Options{Delay: time.Hour},
		sms: &sms.Options{Callbacks: cbo}})

	for name, c := range map[string]struct {
		partner, url string
		code         messaging.Code
	}{
		"bad url":         {partner, "ftp://hooks.example/x", messaging.CodeValidation},
		"private address": {partner, "http://10.1.2.3/hook", messaging.CodeValidation},
		"unknown account": {"nope", rcv.URL, messaging.CodeNotFound},
	} {
		if _, _, err := e.svc.SetCallback(ctx, c.partner, c.url, ""); messaging.ErrorCode(err) != c.code {
			t.Errorf("%s: err = %v; want %s", name, err, c.code)
		}
	}
	if _, _, err := setup(t, nil).svc.SetCallback(ctx, partner, rcv.URL, ""); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("without CallbackOptions: err = %v; want not_found", err)
	}
	// A first registration is replaced by the second: only the second
	// URL receives.
	if _, _, err := e.svc.SetCallback(ctx, partner, rcv.URL+"/old", ""); err != nil {
		t.Fatal(err)
	}
	cb, secret, err := e.svc.SetCallback(ctx, partner, rcv.URL+"/reports", "")
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("SetCallback = %+v, %q, %v", cb, secret, err)
	}
	if got, err := e.svc.GetCallback(ctx, partner); err != nil || got.URL != rcv.URL+"/reports" {
		t.Errorf("GetCallback = %+v, %v", got, err)
	}

	// Pushed: an interim report, then the final one twice.
	pushed := e.send(t, &sms.SendParams{})
	polled := e.send(t, &sms.SendParams{})
	e.clk.Add(time.Second)
	if n := e.runDue(t); n != 2 {
		t.Fatalf("handed over %d, want 2", n)
	}
	m, err := e.store.SMSMessageGet(ctx, partner, pushed.Number)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*sms.Report{
		{Description: sms.DeliverySentToNetwork, Time: base.Add(2 * time.Second)},
		{Description: sms.DeliveredToTerminal, Time: base.Add(5 * time.Second)},
		{Description: sms.DeliveredToTerminal, Time: base.Add(5 * time.Second)},
	} {
		if err := e.svc.ApplyGatewayReport(ctx, m.GatewayMessageID, r); err != nil {
			t.Fatal(err)
		}
	}
	// Polled: the gateway's report, final after its delay, fetched by a
	// client's DeliveryReport.
	clk.Add(2 * time.Hour)
	e.clk.Add(2 * time.Hour)
	if r, err := report(t, e, polled.ProviderMessageID); err != nil || !r.Delivered() {
		t.Fatalf("polled report = %+v, %v", r, err)
	}
	if _, err := report(t, e, polled.ProviderMessageID); err != nil {
		t.Fatal(err)
	}
	if _, err := msvc.DeliverWebhooksDue(ctx); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	var ids []string
	for _, r := range got {
		if !verifySignature(secret, r.header, r.body) {
			t.Errorf("delivery %s: the signature does not verify with the callback's secret", r.body)
		}
		var ev struct {
			ID   string                  `json:"id"`
			Type string                  `json:"type"`
			Data sms.DeliveryReportEvent `json:"data"`
		}
		if err := json.Unmarshal(r.body, &ev); err != nil || ev.Type != sms.EventDeliveryReport || ev.ID != r.header.Get("webhook-id") {
			t.Errorf("delivery %s: %v", r.body, err)
		}
		if ev.Data.MessageID == pushed.ProviderMessageID {
			want := sms.DeliveryReportEvent{PartnerID: partner, MessageID: pushed.ProviderMessageID, Mobile: m.Mobile,
				Status: 32, Description: sms.DeliveredToTerminal, Delivered: true, NetworkID: "254", DoneAt: "2026-03-04T10:00:05Z"}
			if d := cmp.Diff(want, ev.Data); d != "" {
				t.Errorf("pushed report event (-want +got):\n%s", d)
			}
		}
		ids = append(ids, ev.Data.MessageID)
	}
	slices.Sort(ids)
	if d := cmp.Diff([]string{pushed.ProviderMessageID, polled.ProviderMessageID}, ids); d != "" {
		t.Errorf("events (one per final report) (-want +got):\n%s", d)
	}
	wantWith, wantQueued := int32(0), int32(2)
	if direct && !withOutbox {
		wantWith, wantQueued = 2, 0
	}
	if w, q := st.withPush.Load(), st.queued.Load(); w != wantWith || q != wantQueued {
		t.Errorf("report saves with a push %d, events queued on their own %d; want %d, %d", w, q, wantWith, wantQueued)
	}
	if withOutbox && outbox.queued.Load() != 2 {
		t.Errorf("events queued through the Outbox %d, want 2", outbox.queued.Load())
	}
}

// recordingOutbox is an Outbox that counts the events queued through it.
// It names no store, so a report's push never goes with the report.
type recordingOutbox struct {
	sms.Outbox
	queued atomic.Int32
}

func (o *recordingOutbox) QueueWebhookEvent(ctx context.Context, ws, endpointID, subjectID, typ string, data any) (string, bool, error) {
	o.queued.Add(1)
	return o.Outbox.QueueWebhookEvent(ctx, ws, endpointID, subjectID, typ, data)
}

// pushRecorder is a memstore that counts the report saves carrying a push
// and the events queued on their own.
type pushRecorder struct {
	*memstore.Store
	withPush, queued atomic.Int32
}

func (r *pushRecorder) SMSReportSave(ctx context.Context, p *sms.ReportSaveParams) (bool, error) {
	if p.Push != nil {
		r.withPush.Add(1)
	}
	return r.Store.SMSReportSave(ctx, p)
}

func (r *pushRecorder) WebhookQueueEvent(ctx context.Context, p *driver.WebhookQueueParams) (bool, error) {
	r.queued.Add(1)
	return r.Store.WebhookQueueEvent(ctx, p)
}
