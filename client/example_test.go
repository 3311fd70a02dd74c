package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/webhooksig"
)

// demoServer serves the API on memstore for the examples, with a
// workspace "acme", its approved template "order_update" and an API key
// with every scope. A real program only knows the server's URL and a key.
func demoServer() (url, key string, stop func()) {
	ctx := context.Background()
	o := &messaging.Options{SecretKey: bytes.Repeat([]byte{7}, 32)}
	o.Webhooks.AllowLoopback = true // the example's receiver is on loopback
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), o)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: svc.Channels()}); err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Templates.Create(ctx, &messaging.TemplateCreateParams{
		Name: "order_update", Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi {{1}}, your order {{2}} has shipped.", Examples: []string{"Amina", "A-1001"}}},
	}); err != nil {
		log.Fatal(err)
	}
	_, key, err = svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, nil))
	return srv.URL, key, srv.Close
}

// Sending a text message. The client gives the send an idempotency key,
// so that its retries never send twice; a caller that keeps its own key
// can repeat the request safely too: the repeat is answered with the first
// result, Replayed.
func ExampleMessages_Send() {
	url, key, stop := demoServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(url, key, nil)
	if err != nil {
		log.Fatal(err)
	}
	p := &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "Your order has shipped", IdempotencyKey: "order-1001-shipped"}
	first, err := c.Messages.Send(ctx, p)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.Status, first.To, first.Replayed)
	again, err := c.Messages.Send(ctx, p)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.MessageID == first.MessageID, again.Replayed)

	// A refused send is a *client.Error; errors.Is matches the library's
	// codes.
	_, err = c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "0712", Type: "text", Text: "hi"})
	if ce, ok := err.(*client.Error); ok {
		fmt.Println(ce.StatusCode, ce.Code, ce.Field)
	}
	// Output:
	// queued +254712345678 false
	// true true
	// 400 validation_error to
}

// Sending a template: a template's send_example is a ready request; set
// the recipient, replace the example values, send.
func ExampleMessages_SendTemplate() {
	url, key, stop := demoServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(url, key, nil)
	if err != nil {
		log.Fatal(err)
	}
	templates, err := c.Templates.List(ctx, &client.TemplateListParams{Language: "en"})
	if err != nil {
		log.Fatal(err)
	}
	req := templates[0].SendExample
	fmt.Println(req.TemplateName, req.Language, req.Components[0].Type, req.Components[0].Parameters[0].Text, req.Components[0].Parameters[1].Text)
	req.To = "+254712345678"
	req.Components[0].Parameters[0].Text = "Baraka"
	req.Components[0].Parameters[1].Text = "B-2002"
	res, err := c.Messages.SendTemplate(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Channel, res.To)
	// Output:
	// order_update en body Amina A-1001
	// queued whatsapp +254712345678
}

// Iterating over every contact: All fetches the pages as the loop needs
// them.
func ExampleContacts_All() {
	url, key, stop := demoServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(url, key, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range []client.ContactCreateParams{
		{FirstName: "Amina", LastName: "Odhiambo", Phone: "+254712345678"},
		{FirstName: "Baraka", Email: "baraka@example.com"},
		{FirstName: "Chausiku", Phone: "+254722000111"},
	} {
		if _, err := c.Contacts.Create(ctx, &p); err != nil {
			log.Fatal(err)
		}
	}
	n := 0
	for ct, err := range c.Contacts.All(ctx, &client.ContactListParams{Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		n++
		fmt.Println(ct.FullName)
	}
	fmt.Println(n, "contacts")
	// Unordered output:
	// Amina Odhiambo
	// Baraka
	// Chausiku
	// 3 contacts
}

// Receiving webhooks: verify each delivery with the endpoint's secret and
// decode it into its typed event.
func ExampleVerifyWebhook() {
	url, key, stop := demoServer()
	defer stop()
	ctx := context.Background()
	c, err := client.New(url, key, nil)
	if err != nil {
		log.Fatal(err)
	}

	// The receiver. It needs the endpoint's secret, shown once when the
	// endpoint is created.
	var secret string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "unreadable", http.StatusBadRequest)
			return
		}
		ev, err := client.ParseWebhook(secret, r.Header, body, time.Now())
		if err != nil {
			fmt.Println("refused:", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		switch ev.Type {
		case client.EventWebhookTest:
			fmt.Println("verified", ev.Type)
		case client.EventMessageStatusUpdated:
			fmt.Println("message", ev.StatusUpdated.MessageID, "is", ev.StatusUpdated.Status)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	hook, err := c.Webhooks.Create(ctx, &client.WebhookCreateParams{URL: receiver.URL + "/hooks"})
	if err != nil {
		log.Fatal(err)
	}
	secret = hook.Secret
	res, err := c.Webhooks.Test(ctx, hook.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("receiver answered", *res.StatusCode)

	// A delivery signed with another secret does not verify.
	body := []byte(`{"id":"evt_1","type":"webhook.test","created_at":"2026-03-01T09:00:00.000Z","data":{}}`)
	sig, err := webhooksig.Sign("whsec_"+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "evt_1", time.Now(), body)
	if err != nil {
		log.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
	h.Set("webhook-signature", sig)
	fmt.Println(client.VerifyWebhook(secret, h, body, time.Now(), 0))
	// Output:
	// verified webhook.test
	// receiver answered 204
	// messaging: webhook signature does not verify
}

// Sending SMS: the account's credentials travel in each request body, so
// the SMS client belongs on a server. A bulk request answers each item on
// its own.
func ExampleSMSClient_Send() {
	ctx := context.Background()
	st := memstore.New()
	svc, err := messaging.New(st, fakeprovider.New(), nil)
	if err != nil {
		log.Fatal(err)
	}
	smsSvc, err := sms.New(st, fakegateway.New(nil), nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, _, err := smsSvc.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: "acme", APIKey: "smsk_example_0123456789abcdef",
		Senders: []string{"ACME"}, Credit: sms.Credits(10)}); err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, &httpapi.Options{SMS: smsSvc}))
	defer srv.Close()

	c, err := client.NewSMS(srv.URL, "acme", "smsk_example_0123456789abcdef", nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Send(ctx, &client.SMSSendParams{Mobile: "254712345678", Message: "Your code is 4821", Shortcode: "ACME"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Mobile)

	bulk, err := c.Bulk(ctx, &client.SMSBulkParams{Items: []*client.SMSBulkItem{
		{ClientSMSID: "1", Mobile: "254712345678", Message: "Hello", Shortcode: "ACME"},
		{ClientSMSID: "2", Mobile: "12", Message: "Hello", Shortcode: "ACME"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range bulk.Responses {
		fmt.Println(r.ClientSMSID, r.ResponseCode, r.Err() == nil)
	}
	bal, err := c.Balance(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("credit", bal.Credit)
	// Output:
	// sent 254712345678
	// 1 200 true
	// 2 1003 false
	// credit 8.00
}
