package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
)

// TestRichSend: the client's rich sends reach the provider through
// httpapi, and Messages.Get reads them back as sent: the interactive
// message in SentInteractive, the location, cards, reaction, quoted
// message and uploaded media in their members.
func TestRichSend(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	c := e.client(t, e.A.Key, nil)
	in, err := e.fake.Receive(ctx, &messaging.InboundMessage{WorkspaceID: e.A.ID, From: e.A.Contact.Phone, Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.Media.Upload(ctx, &client.MediaUploadParams{MimeType: "image/jpeg", Body: strings.NewReader(jpeg)})
	if err != nil {
		t.Fatal(err)
	}
	to := e.A.Contact.Phone
	buttons := &client.Interactive{Type: "button", Header: &client.InteractiveHeader{Type: "image", MediaID: up.ID}, Body: "Pick",
		Buttons: []client.InteractiveButton{{ID: "yes", Title: "Yes"}, {ID: "no", Title: "No"}}}
	list := &client.Interactive{Type: "list", Body: "Choose", List: &client.InteractiveList{Button: "Open",
		Sections: []client.ListSection{{Rows: []client.ListRow{{ID: "tea", Title: "Tea", Description: "Hot"}}}}}}
	cases := []struct {
		name  string
		p     client.SendParams
		check func(m *client.Message) bool
	}{
		{"buttons", client.SendParams{Type: "interactive", Interactive: buttons, Context: &client.SentContext{MessageID: in.ID}}, func(m *client.Message) bool {
			return cmp.Equal(m.SentInteractive, buttons) && m.Interactive == nil && m.Context != nil && m.Context.MessageID == in.ID
		}},
		{"list", client.SendParams{Type: "interactive", Interactive: list}, func(m *client.Message) bool { return cmp.Equal(m.SentInteractive, list) }},
		{"location", client.SendParams{Type: "location", Location: &client.SendLocation{Latitude: 0, Longitude: 36.8, Name: "Equator"}}, func(m *client.Message) bool {
			return m.Location != nil && *m.Location == client.Location{Latitude: 0, Longitude: 36.8, Name: "Equator"}
		}},
		{"contacts", client.SendParams{Type: "contacts", Contacts: []client.SharedContact{{FormattedName: "Amina", Phones: []client.ContactPhone{{Phone: "+254712345678"}}}}}, func(m *client.Message) bool {
			return len(m.Contacts) == 1 && m.Contacts[0].FormattedName == "Amina" && m.Contacts[0].Phones[0].Phone == "+254712345678"
		}},
		{"reaction removed", client.SendParams{Type: "reaction", Reaction: &client.SentReaction{MessageID: in.ID}}, func(m *client.Message) bool {
			return m.Reaction != nil && m.Reaction.MessageID == in.ID && m.Reaction.Emoji == ""
		}},
		{"uploaded image", client.SendParams{Type: "image", MediaID: up.ID}, func(m *client.Message) bool { return m.MediaID == up.ID }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			p.Channel, p.To = "whatsapp", to
			r, err := c.Messages.Send(ctx, &p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.DispatchDue(ctx); err != nil {
				t.Fatal(err)
			}
			var sent *messaging.Message
			for _, m := range e.fake.Sent() {
				if m.ID == r.MessageID {
					sent = m
				}
			}
			if sent == nil || sent.Outbound == nil {
				t.Fatalf("the provider got %+v", sent)
			}
			m, err := c.Messages.Get(ctx, r.MessageID)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(m) {
				t.Errorf("Get = %+v (interactive %+v)", m, m.SentInteractive)
			}
		})
	}
	// The inbound message: its read_at, and MarkRead.
	m, err := c.Messages.Get(ctx, in.ID)
	if err != nil || m.ReadAt != nil || m.SentInteractive != nil {
		t.Fatalf("inbound before MarkRead: %+v, %v", m, err)
	}
	if m, err = c.Messages.MarkRead(ctx, in.ID, nil); err != nil || m.ReadAt == nil || !m.ReadAt.Equal(e.clock.Now()) {
		t.Fatalf("MarkRead = %+v, %v", m, err)
	}
	if marks := e.fake.ReadMarks(); len(marks) != 1 || marks[0].Typing {
		t.Errorf("read marks %+v, want one without typing", marks)
	}
	if _, err = c.Messages.MarkRead(ctx, in.ID, &client.MarkReadParams{Typing: true}); err != nil {
		t.Fatal(err)
	}
	if marks := e.fake.ReadMarks(); len(marks) != 2 || !marks[1].Typing {
		t.Errorf("read marks %+v, want a second one with typing", marks)
	}
	_, err = c.Messages.MarkRead(ctx, e.A.Message.MessageID, nil)
	if ce := apiError(t, err); ce.StatusCode != 400 || ce.Field != "id" {
		t.Errorf("MarkRead of an outbound message: %v, want 400 naming id", err)
	}
	// A refused send names the member.
	_, err = c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: to, Type: "interactive", Interactive: &client.Interactive{Type: "button", Body: "x",
		Buttons: []client.InteractiveButton{{ID: "a", Title: "a"}, {ID: "a", Title: "b"}}}})
	if ce := apiError(t, err); ce.StatusCode != 400 || ce.Field != "interactive.buttons[1].id" {
		t.Errorf("duplicate button ids: %v, want 400 naming interactive.buttons[1].id", err)
	}
}

// pdfReader is a PDF file of n bytes, made as it is read.
type pdfReader struct{ n, off int }

func (r *pdfReader) Read(b []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := min(len(b), r.n-r.off)
	for i := range k {
		b[i] = "%PDF-1.7\n"[min(r.off+i, 8)]
	}
	r.off += k
	return k, nil
}

// TestMediaUpload: Media.Upload streams a reader of unknown length
// (not seekable, not held) to the server, Media.Get reads the upload, and
// a refusal the server answers before reading the body returns at once,
// naming the field, without reading the rest.
func TestMediaUpload(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	c := e.client(t, e.A.Key, nil)
	const size = 16 << 20
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	u, err := c.Media.Upload(ctx, &client.MediaUploadParams{Kind: "document", MimeType: "application/pdf", Filename: "big report.pdf", Body: &pdfReader{n: size}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// The client and the server (in this process) stream: neither holds
	// the file.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("a %d MiB upload allocated %d MiB", size>>20, alloc>>20)
	}
	h := sha256.New()
	io.Copy(h, &pdfReader{n: size})
	if u.Size != size || u.SHA256 != hex.EncodeToString(h.Sum(nil)) || u.Filename != "big report.pdf" || u.Kind != "document" || u.MimeType != "application/pdf" {
		t.Errorf("Upload = %+v", u)
	}
	got, err := c.Media.Get(ctx, u.ID)
	if err != nil || !cmp.Equal(got, u) {
		t.Errorf("Get = %+v, %v; want %+v", got, err, u)
	}
	_, err = e.client(t, e.B.Key, nil).Media.Get(ctx, u.ID)
	if ce := apiError(t, err); ce.StatusCode != http.StatusNotFound {
		t.Errorf("B's Get: %v, want 404", err)
	}

	// PNG declared as a video: refused before the file is read.
	body := &pdfReader{n: 64 << 20}
	done := make(chan error, 1)
	go func() {
		_, err := c.Media.Upload(ctx, &client.MediaUploadParams{Kind: "video", MimeType: "image/png", Body: body})
		done <- err
	}()
	select {
	case err := <-done:
		if ce := apiError(t, err); ce.StatusCode != 400 || ce.Field != "kind" {
			t.Errorf("PNG as video: %v, want 400 naming kind", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Upload did not return after the server's refusal")
	}
	if _, err := c.Media.Upload(ctx, nil); err == nil || errors.As(err, new(*client.Error)) {
		t.Errorf("Upload(nil) = %v, want the client's error", err)
	}
}
