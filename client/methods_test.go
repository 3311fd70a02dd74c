package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// method is a call of one client method on the records of fixture f; it
// returns a summary of the answer for the success check.
type method struct {
	name string
	call func(ctx context.Context, c *client.Client, f *fixture) (string, error)
	// want is the summary of the answer with f = A and A's key.
	want string
	// byID marks methods addressing a record by id: with B's key they are
	// not_found.
	byID bool
}

func methods(e *env) []method {
	str := func(s string, err error) (string, error) { return s, err }
	drafts := 0
	// draft creates a draft template in f's workspace.
	draft := func(ctx context.Context, _ *client.Client, f *fixture) (string, error) {
		drafts++
		tp, err := e.svc.Workspace(f.ID).Templates.Create(ctx, &messaging.TemplateCreateParams{Name: fmt.Sprintf("draft_%d", drafts),
			Category: record.CategoryUtility, Language: "en", Status: record.TemplateDraft,
			Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Draft"}}})
		if err != nil {
			return "", err
		}
		return tp.ID, nil
	}
	return []method{
		{name: "Messages.Send", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			r, err := c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: f.Contact.Phone, Type: "text", Text: "hi"})
			if err != nil {
				return "", err
			}
			return r.Status + " " + r.To, nil
		}, want: "queued +254712345678"},
		{name: "Messages.SendTemplate", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			r, err := c.Messages.SendTemplate(ctx, &client.SendTemplateParams{To: f.Contact.Phone, TemplateName: "order_update", Language: "en",
				Components: []client.SendComponent{{Type: "body", Parameters: []client.SendParameter{{Type: "text", Text: "Amina"}, {Type: "text", Text: "A-1"}}}}})
			if err != nil {
				return "", err
			}
			return r.Status + " " + r.Channel, nil
		}, want: "queued whatsapp"},
		{name: "Messages.Get", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			m, err := c.Messages.Get(ctx, f.Message.MessageID)
			if err != nil {
				return "", err
			}
			return m.Status + " " + m.Direction + " " + m.Type, nil
		}, want: "sent outbound text"},
		{name: "Messages.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			p, err := c.Messages.List(ctx, &client.MessageListParams{Status: "sent"})
			if err != nil {
				return "", err
			}
			return strings.Join([]string{p.Data[0].MessageID, strings.Repeat("x", len(p.Data))}, " "), nil
		}, want: e.A.Message.MessageID + " x"},
		{name: "Conversations.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			p, err := c.Conversations.List(ctx, nil)
			if err != nil {
				return "", err
			}
			return p.Data[0].ConversationID + " " + p.Data[0].Contact.FirstName, nil
		}, want: e.A.Message.ConversationID + " Amina"},
		{name: "Conversations.Messages", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			p, err := c.Conversations.Messages(ctx, f.Message.ConversationID, nil)
			if err != nil {
				return "", err
			}
			for _, m := range p.Data {
				if m.MessageID == f.Message.MessageID {
					return "found", nil
				}
			}
			return "missing", nil
		}, want: "found"},
		{name: "Templates.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			l, err := c.Templates.List(ctx, &client.TemplateListParams{Language: "en"})
			if err != nil {
				return "", err
			}
			return l[0].Name + " " + l[0].SendExample.TemplateName, nil
		}, want: "order_update order_update"},
		{name: "Templates.Get", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			tp, err := c.Templates.Get(ctx, f.Template.ID)
			if err != nil {
				return "", err
			}
			return tp.Status + " " + tp.SendExample.Components[0].Parameters[1].Text, nil
		}, want: "approved A-1001"},
		{name: "Templates.Create", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			tp, err := c.Templates.Create(ctx, &client.TemplateCreateParams{Name: "new_one", Category: record.CategoryUtility, Language: "en",
				Components: []client.TemplateComponent{{Type: "BODY", Text: "New"}}})
			if err != nil {
				return "", err
			}
			return tp.Status, nil
		}, want: "draft"},
		{name: "Templates.Update", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			id, err := draft(ctx, c, f)
			if err != nil {
				return "", err
			}
			name := "renamed"
			tp, err := c.Templates.Update(ctx, id, &client.TemplatePatch{Name: &name})
			if err != nil {
				return "", err
			}
			return tp.Name, nil
		}, want: "renamed"},
		{name: "Templates.Submit", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			id, err := draft(ctx, c, f)
			if err != nil {
				return "", err
			}
			tp, err := c.Templates.Submit(ctx, id)
			if err != nil {
				return "", err
			}
			return tp.Status, nil
		}, want: "pending"},
		{name: "Templates.Delete", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			id, err := draft(ctx, c, f)
			if err != nil {
				return "", err
			}
			d, err := c.Templates.Delete(ctx, id)
			if err != nil {
				return "", err
			}
			return boolWord(d.Deleted && d.ID == id), nil
		}, want: "yes"},
		{name: "Templates.Sync", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			// fakeprovider lists no templates: the server answers 409.
			_, err := c.Templates.Sync(ctx)
			return "", err
		}},
		{name: "Channels.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			l, err := c.Channels.List(ctx)
			if err != nil {
				return "", err
			}
			return l[0].Channel + " " + l[0].Status, nil
		}, want: "whatsapp connected"},
		{name: "Channels.Put", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			ch, err := c.Channels.Put(ctx, "whatsapp", &client.ChannelCredentials{PhoneNumberID: "1055" + strconv.Itoa(len(f.ID)), WABAID: "2077" + strconv.Itoa(len(f.ID)), AccessToken: "EAAGtestchanneltokenQ7w2Zr5Kx9Lm3b"})
			if err != nil {
				return "", err
			}
			return ch.Status + " " + *ch.CredentialHint, nil
		}, want: "connected Lm3b"},
		{name: "Channels.Verify", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			ch, err := c.Channels.Verify(ctx, "whatsapp")
			if err != nil {
				return "", err
			}
			if ch.SenderID == nil || *ch.SenderID != "1055"+strconv.Itoa(len(f.ID)) {
				return "", fmt.Errorf("sender %v, want the account Put connected", ch.SenderID)
			}
			return ch.Status, nil
		}, want: "connected"},
		{name: "Channels.Update", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			ch, err := c.Channels.Update(ctx, "whatsapp", &client.ChannelPatch{Throughput: 300})
			if err != nil {
				return "", err
			}
			if ch.Throughput == nil || ch.QualityRating == nil || ch.MessagingTier == nil {
				return "", fmt.Errorf("throughput %v quality %v tier %v, want all set", ch.Throughput, ch.QualityRating, ch.MessagingTier)
			}
			return fmt.Sprintf("%d %s %s", *ch.Throughput, *ch.QualityRating, *ch.MessagingTier), nil
		}, want: "300 GREEN TIER_1K"},
		{name: "Channels.Delete", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			ch, err := c.Channels.Delete(ctx, "messenger")
			if err != nil {
				return "", err
			}
			return ch.Status, nil
		}, want: "disconnected"},
		{name: "Contacts.Create", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			ct, err := c.Contacts.Create(ctx, &client.ContactCreateParams{FirstName: "Zawadi", Email: "zawadi@example.com"})
			if err != nil {
				return "", err
			}
			return ct.FullName + " " + ct.Source, nil
		}, want: "Zawadi api"},
		{name: "Contacts.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			p, err := c.Contacts.List(ctx, &client.ContactListParams{Search: "Amina"})
			if err != nil {
				return "", err
			}
			return p.Items[0].FullName + " " + p.Items[0].Phone, nil
		}, want: "Amina Odhiambo +254712345678"},
		{name: "Contacts.Get", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			ct, err := c.Contacts.Get(ctx, f.Contact.ID)
			if err != nil {
				return "", err
			}
			return ct.FullName, nil
		}, want: "Amina Odhiambo"},
		{name: "Contacts.Update", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			company, last, tags := "Ujumbe", "", []string{"vip"}
			ct, err := c.Contacts.Update(ctx, f.Contact.ID, &client.ContactUpdateParams{Company: &company, LastName: &last, Tags: &tags})
			if err != nil {
				return "", err
			}
			return ct.FullName + " " + ct.Company + " " + strings.Join(ct.Tags, ","), nil
		}, want: "Amina Ujumbe vip"},
		{name: "APIKeys.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			l, err := c.APIKeys.List(ctx)
			if err != nil {
				return "", err
			}
			return l[0].Name, nil
		}, want: "full"},
		{name: "APIKeys.Create", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			k, err := c.APIKeys.Create(ctx, &client.APIKeyCreateParams{Name: "ci", Scopes: []string{record.ScopeReadMessages}})
			if err != nil {
				return "", err
			}
			return k.Name + " " + strings.Join(k.Scopes, ",") + " " + boolWord(k.Key != "" && k.RevokedAt == nil), nil
		}, want: "ci read:messages yes"},
		{name: "APIKeys.Get", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			k, err := c.APIKeys.Get(ctx, f.KeyID)
			if err != nil {
				return "", err
			}
			return k.Name, nil
		}, want: "full"},
		{name: "APIKeys.Revoke", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			k, _, err := e.svc.Workspace(f.ID).APIKeys.Create(ctx, &messaging.KeyCreateParams{Name: "to revoke", Scopes: []string{record.ScopeReadMessages}})
			if err != nil {
				return "", err
			}
			r, err := c.APIKeys.Revoke(ctx, k.ID)
			if err != nil {
				return "", err
			}
			return boolWord(r.RevokedAt != nil), nil
		}, want: "yes"},
		{name: "AuditEvents.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			p, err := c.AuditEvents.List(ctx, &client.CursorParams{Limit: 1})
			if err != nil {
				return "", err
			}
			return boolWord(len(p.Data) == 1 && p.NextCursor != nil), nil
		}, want: "yes"},
		{name: "Webhooks.List", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			l, err := c.Webhooks.List(ctx)
			if err != nil {
				return "", err
			}
			return l[0].ID, nil
		}, want: e.A.Hook.ID},
		{name: "Webhooks.Create", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			h, err := c.Webhooks.Create(ctx, &client.WebhookCreateParams{URL: f.Hook.URL + "/2", Events: []string{client.EventMessageReceived}})
			if err != nil {
				return "", err
			}
			return strings.Join(h.Events, ",") + " " + boolWord(strings.HasPrefix(h.Secret, "whsec_")), nil
		}, want: "message.received yes"},
		{name: "Webhooks.Get", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			h, err := c.Webhooks.Get(ctx, f.Hook.ID)
			if err != nil {
				return "", err
			}
			return boolWord(h.Enabled), nil
		}, want: "yes"},
		{name: "Webhooks.Update", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			d := "orders"
			h, err := c.Webhooks.Update(ctx, f.Hook.ID, &client.WebhookUpdateParams{Description: &d})
			if err != nil {
				return "", err
			}
			return h.Description, nil
		}, want: "orders"},
		{name: "Webhooks.RotateSecret", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			s, err := c.Webhooks.RotateSecret(ctx, f.Hook.ID)
			if err != nil {
				return "", err
			}
			return boolWord(s.Secret != f.HookSecret && s.PreviousSecretExpiresAt != nil), nil
		}, want: "yes"},
		{name: "Webhooks.Test", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			r, err := c.Webhooks.Test(ctx, f.Hook.ID)
			if err != nil {
				return "", err
			}
			if r.StatusCode == nil {
				return "no answer: " + r.Error, nil
			}
			return http.StatusText(*r.StatusCode), nil
		}, want: "No Content"},
		{name: "Webhooks.Deliveries", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			p, err := c.Webhooks.Deliveries(ctx, f.Hook.ID, nil)
			if err != nil {
				return "", err
			}
			// Webhooks.Test, run before, is listed first, marked test.
			first, last := p.Data[0], p.Data[len(p.Data)-1]
			return fmt.Sprintf("%s test=%t, %s %s test=%t", first.EventType, first.Test, last.ID, last.EventType, last.Test), nil
		}, want: "webhook.test test=true, " + e.A.Delivery + " message.status_updated test=false"},
		{name: "Webhooks.Redeliver", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			d, err := c.Webhooks.Redeliver(ctx, f.Hook.ID, f.Delivery)
			if err != nil {
				return "", err
			}
			return d.State, nil
		}, want: "pending"},
		{name: "Webhooks.Delete", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			return str(func() (string, error) {
				h, err := c.Webhooks.Delete(ctx, f.Hook.ID)
				if err != nil {
					return "", err
				}
				return h.ID, nil
			}())
		}, want: e.A.Hook.ID},
		// Messages.Media records an inbound image in f's workspace (once:
		// the provider id is the same every time) and streams its bytes
		// from fakeprovider. It comes after Webhooks.Delete so that its
		// message.received event adds no delivery that Webhooks.Deliveries
		// would list first.
		{name: "Messages.Media", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			in, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: f.ID, Channel: "whatsapp", From: f.Contact.Phone,
				ProviderMessageID: "wamid.media", Type: "image", Content: &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "img-1", MimeType: "image/jpeg"}}})
			if err != nil {
				return "", err
			}
			m, err := c.Messages.Media(ctx, in.ID)
			if err != nil {
				return "", err
			}
			defer m.Body.Close()
			b, err := io.ReadAll(m.Body)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %d %q", m.ContentType, m.ContentLength, b), nil
		}, want: fmt.Sprintf("image/jpeg %d %q", len(fakeprovider.MediaBytes("img-1")), fakeprovider.MediaBytes("img-1"))},
		// Messages.Cancel cancels a message scheduled in f's workspace.
		{name: "Messages.Cancel", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			at := e.clock.Now().Add(time.Hour)
			r, err := e.svc.Workspace(f.ID).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "later", SendAt: &at})
			if err != nil {
				return "", err
			}
			m, err := c.Messages.Cancel(ctx, r.MessageID)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s send_at=%v", m.Status, m.SendAt != nil && m.SendAt.Equal(at)), nil
		}, want: "canceled send_at=true"},
		// Messages.MarkRead has the fake receive a message in f's
		// workspace (once: the provider id is the same every time).
		{name: "Messages.MarkRead", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			in, err := e.fake.Receive(ctx, &messaging.InboundMessage{WorkspaceID: f.ID, From: f.Contact.Phone, ProviderMessageID: "wamid.read." + f.ID, Text: "read me"})
			if err != nil {
				return "", err
			}
			m, err := c.Messages.MarkRead(ctx, in.ID, &client.MarkReadParams{Typing: true})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %s read_at=%v", m.Direction, m.Text, m.ReadAt != nil && m.ReadAt.Equal(e.clock.Now())), nil
		}, want: "inbound read me read_at=true"},
		{name: "Media.Upload", call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			u, err := c.Media.Upload(ctx, &client.MediaUploadParams{MimeType: "image/jpeg", Filename: "a.jpg", Body: strings.NewReader(jpeg)})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %s %s %s %d %s", u.Channel, u.Purpose, u.Kind, u.Filename, u.Size, u.ExpiresAt.Sub(u.CreatedAt)), nil
		}, want: fmt.Sprintf("whatsapp message image a.jpg %d 720h0m0s", len(jpeg))},
		{name: "Media.Get", byID: true, call: func(ctx context.Context, c *client.Client, f *fixture) (string, error) {
			up, err := e.svc.Workspace(f.ID).MediaUploads.Upload(ctx, &messaging.MediaUploadParams{MimeType: "image/png", Body: strings.NewReader(png)})
			if err != nil {
				return "", err
			}
			u, err := c.Media.Get(ctx, up.ID)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %s %d %t", u.Kind, u.MimeType, u.Size, u.ID == up.ID), nil
		}, want: fmt.Sprintf("image image/png %d true", len(png))},
	}
}

// jpeg and png are small files of their types.
const (
	jpeg = "\xff\xd8\xff\xe0\x00\x10JFIF\x00 a small picture"
	png  = "\x89PNG\r\n\x1a\n a small picture"
)

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestMethods calls every method of the client against httpapi on
// memstore: with workspace A's key on A's records it succeeds (Sync is the
// server's conflict: fakeprovider lists no templates); with B's key on A's
// records every method addressing a record is not_found; with a revoked
// key every method is invalid_api_key.
func TestMethods(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	for _, m := range methods(e) {
		t.Run(m.name, func(t *testing.T) {
			got, err := m.call(ctx, e.client(t, e.A.Key, nil), e.A)
			if m.name == "Templates.Sync" {
				if !errors.Is(err, &client.Error{Code: client.CodeConflict}) {
					t.Fatalf("Sync: %v, want a conflict", err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got != m.want {
				t.Errorf("A's key on A: %q, want %q", got, m.want)
			}

			_, err = m.call(ctx, e.client(t, e.A.Revoked, nil), e.A)
			if ce := apiError(t, err); ce.StatusCode != http.StatusUnauthorized || ce.Code != client.CodeInvalidAPIKey {
				t.Errorf("revoked key: %v, want 401 invalid_api_key", err)
			}
		})
	}
}

// TestCrossWorkspace: a key of workspace B addressing A's records gets
// not_found (404) from every method that takes an id, decoded with the
// envelope and the correlation id.
func TestCrossWorkspace(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	cb := e.client(t, e.B.Key, nil)
	n := 0
	for _, m := range methods(e) {
		if !m.byID {
			continue
		}
		n++
		t.Run(m.name, func(t *testing.T) {
			_, err := m.call(ctx, cb, e.A)
			ce := apiError(t, err)
			if ce.StatusCode != http.StatusNotFound || !errors.Is(err, &client.Error{Code: client.CodeNotFound}) || !errors.Is(err, &client.Error{Code: client.CodeNotFound}) {
				t.Fatalf("B's key on A's record: %v, want 404 not_found", err)
			}
			if ce.CorrelationID == "" || ce.RequestID != ce.CorrelationID || ce.Docs == "" {
				t.Errorf("request_id %q, X-Correlation-ID %q, docs %q: want the same id twice and a docs link", ce.RequestID, ce.CorrelationID, ce.Docs)
			}
		})
	}
	if n < 15 {
		t.Errorf("only %d methods address a record", n)
	}
	// Nothing of A changed.
	if _, err := e.svc.Workspace(e.A.ID).Webhooks.Get(ctx, e.A.Hook.ID); err != nil {
		t.Errorf("A's webhook after B's calls: %v", err)
	}
	k, err := e.svc.Workspace(e.A.ID).APIKeys.Get(ctx, e.A.KeyID)
	if err != nil || k.RevokedAt != nil {
		t.Errorf("A's key after B's calls: %v, revoked %v", err, k.RevokedAt)
	}
}

// TestPaging iterates over contacts and messages across pages.
func TestPaging(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	c := e.client(t, e.A.Key, nil)
	want := []string{"Amina Odhiambo"}
	for _, n := range []string{"Baraka", "Chausiku", "Daudi", "Eshe"} {
		if _, err := c.Contacts.Create(ctx, &client.ContactCreateParams{FirstName: n, Email: strings.ToLower(n) + "@example.com"}); err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	var got []string
	for ct, err := range c.Contacts.All(ctx, &client.ContactListParams{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ct.FullName)
	}
	if diff := cmp.Diff(want, got, cmpSorted()); diff != "" {
		t.Errorf("contacts (-want +got):\n%s", diff)
	}
	// Breaking out of the loop stops the paging.
	n := 0
	for range c.Contacts.All(ctx, &client.ContactListParams{Limit: 2}) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("break after one: %d contacts", n)
	}

	ids := map[string]bool{e.A.Message.MessageID: true}
	for range 4 {
		r, err := c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "page me"})
		if err != nil {
			t.Fatal(err)
		}
		ids[r.MessageID] = true
	}
	seen := map[string]bool{}
	for m, err := range c.Messages.All(ctx, &client.MessageListParams{Limit: 2, Channel: "whatsapp"}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[m.MessageID] {
			t.Errorf("message %s seen twice", m.MessageID)
		}
		seen[m.MessageID] = true
	}
	if diff := cmp.Diff(ids, seen); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	// An error ends the iteration after it is yielded.
	var errs int
	for _, err := range e.client(t, e.A.Revoked, nil).Messages.All(ctx, nil) {
		if err == nil {
			t.Fatal("a message with a revoked key")
		}
		errs++
	}
	if errs != 1 {
		t.Errorf("%d errors, want 1", errs)
	}
}

func cmpSorted() cmp.Option {
	return cmp.Transformer("sort", func(in []string) []string {
		out := append([]string(nil), in...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	})
}

// TestInboundContent: Messages.Get decodes an inbound message's content
// members (a location replying to a message, an unsupported type), its
// sender (from) and its window_expires_at; an outbound message has none of
// them.
func TestInboundContent(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	c := e.client(t, e.A.Key, nil)
	loc, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: e.A.ID, Channel: "whatsapp", From: e.A.Contact.Phone,
		ProviderMessageID: "wamid.loc", Type: "location", Content: &messaging.InboundContent{
			Location: &record.Location{Latitude: -1.2921, Longitude: 36.8219, Name: "Office"},
			Context:  &messaging.ReplyContext{ProviderMessageID: "wamid.elsewhere"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Messages.Get(ctx, loc.ID)
	if err != nil {
		t.Fatal(err)
	}
	window := t0.Add(24 * time.Hour)
	want := &client.Message{MessageID: loc.ID, ConversationID: e.A.Message.ConversationID, Channel: "whatsapp", Direction: "inbound",
		From: e.A.Contact.Phone, Status: "delivered", Type: "location", Location: &client.Location{Latitude: -1.2921, Longitude: 36.8219, Name: "Office"},
		Context:         &client.ReplyContext{ProviderMessageID: "wamid.elsewhere"},
		WindowExpiresAt: &window, CreatedAt: t0, UpdatedAt: t0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inbound location (-want +got):\n%s", diff)
	}

	odd, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: e.A.ID, Channel: "whatsapp", From: e.A.Contact.Phone,
		ProviderMessageID: "wamid.order", Type: "order"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Messages.Get(ctx, odd.ID); err != nil || got.Type != "unsupported" || got.UnsupportedType != "order" {
		t.Errorf("unsupported: %+v %v", got, err)
	}
	out, err := c.Messages.Get(ctx, e.A.Message.MessageID)
	if err != nil || out.WindowExpiresAt != nil || out.Context != nil || out.Text != "" || out.From != "" {
		t.Errorf("outbound: %+v %v, want no inbound members", out, err)
	}
}
