package messaging_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// sizelessMedia serves body as any media without telling its size, as a
// provider that streams without Content-Length does.
type sizelessMedia struct {
	*fakeprovider.Provider
	body string
}

func (p sizelessMedia) FetchMedia(context.Context, *messaging.ChannelSender, string, int64) (*messaging.Media, error) {
	return &messaging.Media{Size: -1, Body: io.NopCloser(strings.NewReader(p.body))}, nil
}

// TestMediaLimitWhileStreaming: media whose size the provider does not
// tell is cut off with ErrMediaTooLarge after MaxMediaBytes bytes, and
// media at the limit streams whole, typed as the message declared it.
func TestMediaLimitWhileStreaming(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		body    string
		wantErr error
	}{
		{"at the limit", strings.Repeat("a", 10), nil},
		{"over the limit", strings.Repeat("a", 11), messaging.ErrMediaTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, err := messaging.New(memstore.New(), sizelessMedia{fakeprovider.New(), c.body}, &messaging.Options{MaxMediaBytes: 10})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: svc.Channels()}); err != nil {
				t.Fatal(err)
			}
			m, err := svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "+254712345678",
				ProviderMessageID: "wamid.1", Type: "audio", Content: &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "a1", MimeType: "audio/ogg"}}})
			if err != nil {
				t.Fatal(err)
			}
			media, err := svc.Workspace("acme").Messages.Media(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer media.Body.Close()
			got, err := io.ReadAll(media.Body)
			if !errors.Is(err, c.wantErr) || len(got) > 10 || media.ContentType != "audio/ogg" {
				t.Errorf("read %d bytes of %s, err %v; want at most 10 and err %v", len(got), media.ContentType, err, c.wantErr)
			}
			if c.wantErr == nil && string(got) != c.body {
				t.Errorf("read %q, want %q", got, c.body)
			}
		})
	}
}
