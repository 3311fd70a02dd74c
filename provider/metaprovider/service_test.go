package metaprovider_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestServiceSendsWithTheConnection runs a Provider under a Service: the
// dispatcher hands it the workspace's connection, a send reaches the Graph API with the connection's phone-number id and
// token, templates are submitted and synchronised through the mock, and
// an expired token marks the connection.
func TestServiceSendsWithTheConnection(t *testing.T) {
	t.Parallel()
	mock := metatest.New()
	defer mock.Close()
	mock.AddPhoneNumber(wabaID, phoneID, "+1 555-010-0100", connTok)
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: mock.URL()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := messaging.New(memstore.New(), p, &messaging.Options{Clock: func() time.Time { return now }, SecretKey: bytes.Repeat([]byte{5}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Channels.Connect(ctx, messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		Fields: map[string]string{metaprovider.FieldPhoneNumberID: phoneID, metaprovider.FieldWABAID: wabaID}, AccessToken: connTok}); err != nil {
		t.Fatal(err)
	}
	ws := svc.Workspace("acme")
	res, err := ws.Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "Habari"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if m, err := ws.Messages.Get(ctx, res.MessageID); err != nil || m.Status != messaging.StatusSent {
		t.Fatalf("message = %+v, %v; want sent", m, err)
	}
	var sends []metatest.Request
	for _, r := range mock.Requests() {
		if r.Path == "/v21.0/"+phoneID+"/messages" {
			sends = append(sends, r)
		}
	}
	if len(sends) != 1 || sends[0].Authorization != "Bearer "+connTok {
		t.Fatalf("sends = %+v, want one with the connection's token", sends)
	}

	// A template created in WhatsApp Manager appears after a sync.
	mock.AddTemplate(wabaID, messaging.ProviderTemplate{Name: "from_manager", Language: "en", Category: record.CategoryUtility,
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello {{1}}"}}})
	if _, err := svc.SyncTemplates(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	list, err := ws.Templates.List(ctx, nil)
	if err != nil || len(list) != 1 || list[0].Name != "from_manager" {
		t.Errorf("templates after sync = %+v, %v; want from_manager", list, err)
	}

	// An expired token fails the send for good and marks the connection.
	mock.ExpireToken(connTok)
	res, err = ws.Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "Again"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if m, err := ws.Messages.Get(ctx, res.MessageID); err != nil || m.Status != messaging.StatusFailed {
		t.Errorf("message = %+v, %v; want failed", m, err)
	}
	st, err := svc.Workspace("acme").Channels.Get(ctx, messaging.ChannelWhatsApp)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Connection; c.Status != record.ConnectionError || c.StatusReason == "" {
		t.Errorf("connection = %s %q, want error with the reason", c.Status, c.StatusReason)
	}
}

// TestServiceFetchesInboundMedia: the media of an inbound message is
// fetched through the Graph API's media URL lookup and download with the
// connection's token, which the caller never sees; its content type is
// the provider's; media over the limit, media the provider no longer has,
// a message without media and refused credentials are refused with their
// codes.
func TestServiceFetchesInboundMedia(t *testing.T) {
	t.Parallel()
	mock := metatest.New()
	defer mock.Close()
	mock.AddPhoneNumber(wabaID, phoneID, "+1 555-010-0100", connTok)
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: mock.URL()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := messaging.New(memstore.New(), p, &messaging.Options{Clock: func() time.Time { return now },
		SecretKey: bytes.Repeat([]byte{5}, 32), MaxMediaBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Channels.Connect(ctx, messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		Fields: map[string]string{metaprovider.FieldPhoneNumberID: phoneID, metaprovider.FieldWABAID: wabaID}, AccessToken: connTok}); err != nil {
		t.Fatal(err)
	}
	photo := []byte("\xff\xd8\xff\xe0 a small jpeg")
	mock.AddMedia("1479537139650973", "image/jpeg", photo)
	mock.AddMedia("big", "video/mp4", bytes.Repeat([]byte{1}, 65))
	receive := func(id, mediaID string) string {
		in := &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "254712345678", ProviderMessageID: id, Type: "image"}
		if mediaID != "" {
			in.Content = &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: mediaID, MimeType: "image/png"}}
		}
		m, err := svc.RecordInbound(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	ws := svc.Workspace("acme")
	media, err := ws.Messages.Media(ctx, receive("wamid.IMG", "1479537139650973"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(media.Body)
	media.Body.Close()
	if err != nil || !bytes.Equal(got, photo) || media.ContentType != "image/jpeg" || media.Size != int64(len(photo)) {
		t.Errorf("media = %q (%s, %d bytes), %v; want the photo as image/jpeg", got, media.ContentType, media.Size, err)
	}
	var paths []string
	for _, r := range mock.Requests() {
		if r.Authorization != "Bearer "+connTok {
			t.Errorf("%s %s without the connection's token", r.Method, r.Path)
		}
		paths = append(paths, r.Method+" "+r.Path)
	}
	// The first request is Connect's verification of the credentials.
	if d := cmp.Diff([]string{"GET /v21.0/" + wabaID + "/phone_numbers", "GET /v21.0/1479537139650973", "GET /v21.0/mock_media/1479537139650973/download"}, paths); d != "" {
		t.Errorf("Graph requests (-want +got):\n%s", d)
	}

	for _, c := range []struct {
		name, id string
		code     messaging.Code
		tooLarge bool
	}{
		{"over the limit", receive("wamid.BIG", "big"), messaging.CodeValidation, true},
		{"gone at the provider", receive("wamid.GONE", "gone"), messaging.CodeNotFound, false},
		{"no media", receive("wamid.NONE", ""), messaging.CodeNotFound, false},
		{"unknown message", "msg_nope", messaging.CodeNotFound, false},
	} {
		_, err := ws.Messages.Media(ctx, c.id)
		if messaging.ErrorCode(err) != c.code || errors.Is(err, messaging.ErrMediaTooLarge) != c.tooLarge {
			t.Errorf("%s: err = %v; want code %s (too large %v)", c.name, err, c.code, c.tooLarge)
		}
	}
	mock.ExpireToken(connTok)
	if _, err := ws.Messages.Media(ctx, receive("wamid.IMG2", "1479537139650973")); messaging.ErrorCode(err) != messaging.CodeChannelUnavailable {
		t.Errorf("expired token: err = %v; want channel_unavailable", err)
	}
}
