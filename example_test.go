package messaging_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// newExampleService returns a Service on memstore and fakeprovider with a
// workspace "acme" whose three channels are connected.
func newExampleService(ctx context.Context) *messaging.Service {
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{
		ID: "acme", Name: "Acme Ltd", Channels: svc.Channels(),
	}); err != nil {
		log.Fatal(err)
	}
	return svc
}

// Embedding the service: create a workspace, a contact, and send the contact
// a WhatsApp text message. Delivery is asynchronous, so the message is
// queued.
func ExampleService() {
	ctx := context.Background()
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{
		ID: "acme", Name: "Acme Ltd", Channels: svc.Channels(),
	}); err != nil {
		log.Fatal(err)
	}
	acme := svc.Workspace("acme")

	contact, err := acme.Contacts.Create(ctx, &messaging.ContactCreateParams{
		FirstName: "Jane", LastName: "Doe", Phone: "+254712345678", Email: "jane@example.com",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("contact:", contact.FullName, contact.Phone, contact.Source)

	res, err := acme.Messages.Send(ctx, &messaging.SendParams{
		Channel: messaging.ChannelWhatsApp, To: contact.Phone, Type: record.TypeText, Text: "Hello Jane!",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sent:", res.Status, res.Channel, res.To)

	msg, err := acme.Messages.Get(ctx, res.MessageID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("message:", msg.Status, msg.Direction, msg.Type, msg.Text)

	// A refused request says which field is at fault: a text message needs
	// its text.
	_, err = acme.Messages.Send(ctx, &messaging.SendParams{
		Channel: messaging.ChannelWhatsApp, To: contact.Phone, Type: record.TypeText,
	})
	var e *messaging.Error
	if errors.As(err, &e) {
		fmt.Println("error:", e.Code, e.Field)
	}
	// Output:
	// contact: Jane Doe +254712345678 api
	// sent: queued whatsapp +254712345678
	// message: queued outbound text Hello Jane!
	// error: validation_error text
}

// API keys are created with scopes and checked with Authenticate. A wrong
// key gives invalid_api_key.
func ExampleService_Authenticate() {
	ctx := context.Background()
	svc := newExampleService(ctx)

	_, key, err := svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{
		Scopes: []string{record.ScopeWriteMessages, record.ScopeReadMessages},
	})
	if err != nil {
		log.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.WorkspaceID, p.Scopes, p.HasScope(record.ScopeReadContacts))

	_, err = svc.Authenticate(ctx, "mk_notakey_0000000000000000000000")
	fmt.Println(messaging.ErrorCode(err))
	// Output:
	// acme [read:messages write:messages] false
	// invalid_api_key
}

// Every template carries a send_example: a ready request for
// Messages.SendTemplate (POST /v1/messages/templates).
func ExampleTemplates_Get() {
	ctx := context.Background()
	svc := newExampleService(ctx)
	acme := svc.Workspace("acme")

	tpl, err := acme.Templates.Create(ctx, &messaging.TemplateCreateParams{
		Name: "order_shipped", Category: record.CategoryUtility, Language: "en",
		Status: record.TemplateApproved, // imported, already reviewed
		Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "DOCUMENT"},
			{Type: "BODY", Text: "Hi {{1}}, order {{2}} has shipped."},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{
				{Type: "URL", Text: "Track", URL: "https://shop.example.com/track/{{1}}"},
			}},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	got, err := acme.Templates.Get(ctx, tpl.ID)
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(got.SendExample); err != nil {
		log.Fatal(err)
	}

	// The example is accepted as it is.
	res, err := acme.Messages.SendTemplate(ctx, got.SendExample)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Channel)
	// Output:
	// {
	//   "to": "+14155550123",
	//   "template_name": "order_shipped",
	//   "language": "en",
	//   "components": [
	//     {
	//       "type": "header",
	//       "parameters": [
	//         {
	//           "type": "document",
	//           "link": "https://example.com/sample.pdf"
	//         }
	//       ]
	//     },
	//     {
	//       "type": "body",
	//       "parameters": [
	//         {
	//           "type": "text",
	//           "text": "example 1"
	//         },
	//         {
	//           "type": "text",
	//           "text": "example 2"
	//         }
	//       ]
	//     },
	//     {
	//       "type": "button",
	//       "sub_type": "url",
	//       "index": 0,
	//       "parameters": [
	//         {
	//           "type": "text",
	//           "text": "example-suffix"
	//         }
	//       ]
	//     }
	//   ]
	// }
	// queued whatsapp
}

// A status change reported by the channel provider is applied with
// UpdateStatus and announced to subscribers as message.status_updated.
// Statuses only move forward: a late "delivered" after "read" is ignored.
func ExampleService_UpdateStatus() {
	ctx := context.Background()
	svc := newExampleService(ctx)
	unsubscribe := svc.Subscribe(func(_ context.Context, e *messaging.Event) {
		fmt.Printf("event %s: %s -> %s\n", e.Type, e.Data.(messaging.StatusEventData).PreviousStatus, e.Data.(messaging.StatusEventData).Status)
	})
	defer unsubscribe()

	res, err := svc.Workspace("acme").Messages.Send(ctx, &messaging.SendParams{
		Channel: messaging.ChannelWhatsApp, To: "+254712345678", Type: record.TypeText, Text: "Hi",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, status := range []string{messaging.StatusSent, messaging.StatusRead, messaging.StatusDelivered} {
		changed, err := svc.UpdateStatus(ctx, &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: res.MessageID, Status: status})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(status, "changed:", changed)
	}
	// Output:
	// event message.status_updated: queued -> sent
	// sent changed: true
	// event message.status_updated: sent -> read
	// read changed: true
	// delivered changed: false
}
