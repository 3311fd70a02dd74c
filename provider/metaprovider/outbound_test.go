package metaprovider_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/record"
)

// captured is a request the capture server received.
type captured struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// captureServer is a loopback Graph API that records every request and
// answers it with answer (200 and a WhatsApp acceptance by default).
type captureServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []captured
	answer func(r *http.Request) (int, string)
}

func newCaptureServer(t *testing.T) *captureServer {
	t.Helper()
	cs := &captureServer{answer: func(r *http.Request) (int, string) {
		return 200, waAccepted("+16505551234", "wamid.sent")
	}}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cs.mu.Lock()
		cs.reqs = append(cs.reqs, captured{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		answer := cs.answer
		cs.mu.Unlock()
		status, out := answer(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *captureServer) requests() []captured {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]captured(nil), cs.reqs...)
}

func (cs *captureServer) provider(t *testing.T, opts *metaprovider.Options) *metaprovider.Provider {
	t.Helper()
	o := metaprovider.Options{}
	if opts != nil {
		o = *opts
	}
	o.BaseURL, o.HTTPClient = cs.URL, cs.Client()
	p, err := metaprovider.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantJSON fails t unless got decodes to the same JSON value as the
// testdata file payloads/name.
func wantJSON(t *testing.T, name string, got []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	var want, have any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatalf("%s: the request body is not JSON: %v: %s", name, err, got)
	}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("%s: payload differs from Meta's documented shape (-want +got):\n%s", name, d)
	}
}

const (
	waTo     = "+16505551234"
	wamid    = "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA"
	psid     = "6543210987654321"
	igsid    = "1254459154682919"
	igMID    = "aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1ODIyMzA0OTE0"
	reactMID = "wamid.HBgLMTY0NjcwNDM1OTUVAgASGBQzQTdCNTg5RjY1MEMyRjlGMjRGNgA="
)

// rich is an outbound message without an id (so that it carries no
// correlation, which Meta's examples do not show) of the given type and
// rich content.
func rich(channel, to, typ string, out *record.OutboundContent) *messaging.Message {
	m := msg(channel, to, typ)
	m.ID, m.Outbound = "", out
	return m
}

func ref(id string) *record.MediaRef {
	return &record.MediaRef{ID: "med_1", ProviderMediaID: id, MimeType: "image/jpeg"}
}

// TestRichPayloads sends every rich type and compares each request body
// with Meta's documented example of it (testdata/payloads, the examples'
// shapes with their sample values):
//   - wa_interactive_button*: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-reply-buttons-messages
//   - wa_interactive_list: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-list-messages
//   - wa_interactive_cta_url*: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-cta-url-messages
//   - wa_location: https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/location-messages/
//     (Meta's syntax quotes its placeholders; its Location object reference types them as numbers, which this package sends)
//   - wa_contacts: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/contacts-messages
//   - wa_reaction*: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/reaction-messages (an empty emoji removes it)
//   - wa_sticker*, wa_*_id: https://developers.facebook.com/docs/whatsapp/cloud-api/messages/sticker-messages,
//     image-messages, document-messages, audio-messages, video-messages (media by uploaded id)
//   - wa_*_context: https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-replies (context.message_id)
//   - fb_quick_replies, ig_quick_replies: https://developers.facebook.com/docs/messenger-platform/send-messages/quick-replies
//     and https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/messaging-api/quick-replies
//   - fb_button_template: https://developers.facebook.com/docs/messenger-platform/send-messages/buttons (web_url button);
//     messaging_type RESPONSE is what every Messenger send of this package carries
//   - ig_react, ig_unreact: https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/messaging-api/sender-actions
func TestRichPayloads(t *testing.T) {
	t.Parallel()
	list := &record.InteractiveList{Button: "Shipping Options", Sections: []record.ListSection{
		{Title: "I want it ASAP!", Rows: []record.ListRow{
			{ID: "priority_express", Title: "Priority Mail Express", Description: "Next Day to 2 Days"},
			{ID: "priority_mail", Title: "Priority Mail", Description: "1-3 Days"}}},
		{Title: "I can wait a bit", Rows: []record.ListRow{{ID: "ground_advantage", Title: "USPS Ground Advantage"}}},
	}}
	image := rich("whatsapp", waTo, record.TypeImage, &record.OutboundContent{Media: ref("1479537139650973")})
	image.Caption = "The best succulent ever?"
	doc := rich("whatsapp", waTo, record.TypeDocument, &record.OutboundContent{Media: ref("1376223850470843")})
	doc.Caption, doc.Filename = "Lucky Shrub Invoice", "lucky-shrub-invoice.pdf"
	video := rich("whatsapp", waTo, record.TypeVideo, &record.OutboundContent{Media: ref("1166846181421424"),
		Context: &record.ReplyContext{MessageID: "msg_0", ProviderMessageID: wamid}})
	video.Caption = "A succulent eclipse!"
	video.MediaURL = "https://example.com/ignored-when-uploaded.mp4"
	stickerLink := rich("whatsapp", waTo, record.TypeSticker, nil)
	stickerLink.MediaURL = "https://www.luckyshrub.com/assets/animated-smiling-plant.webp"
	text := rich("whatsapp", waTo, record.TypeText, &record.OutboundContent{Context: &record.ReplyContext{ProviderMessageID: wamid}})
	text.Text = "You're welcome, Pablo!"
	igReact := rich("instagram", igsid, record.TypeReaction, &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: igMID, Emoji: metaprovider.ReactionLove}})
	igReact.ID = "msg_react"
	cases := []struct {
		file string
		m    *messaging.Message
	}{
		{"wa_interactive_button.json", rich("whatsapp", waTo, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type:   record.InteractiveTypeButton,
			Header: &record.InteractiveHeader{Type: "image", MediaURL: "https://example.com/ignored.jpg", Media: ref("2762702990552401")},
			Body:   "Your workshop is at 9am tomorrow. Use the buttons to reschedule.", Footer: "Lucky Shrub",
			Buttons: []record.InteractiveButton{{ID: "change-button", Title: "Change"}, {ID: "cancel-button", Title: "Cancel"}}}})},
		{"wa_interactive_button_text_header.json", rich("whatsapp", waTo, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type: record.InteractiveTypeButton, Header: &record.InteractiveHeader{Type: "text", Text: "Workshop"},
			Body: "Keep your booking?", Buttons: []record.InteractiveButton{{ID: "yes", Title: "Yes"}}}})},
		{"wa_interactive_list.json", rich("whatsapp", waTo, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type: record.InteractiveTypeList, Header: &record.InteractiveHeader{Type: "text", Text: "Choose Shipping Option"},
			Body: "Which shipping option do you prefer?", Footer: "Lucky Shrub: Your gateway to succulents", List: list}})},
		{"wa_interactive_cta_url.json", rich("whatsapp", waTo, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type: record.InteractiveTypeCTAURL, Header: &record.InteractiveHeader{Type: "video", MediaURL: "https://www.luckyshrub.com/assets/workshop.mp4"},
			Body: "Tap the button below to see available dates.", Footer: "Dates subject to change.",
			CTA: &record.CTAURL{DisplayText: "See Dates", URL: "https://www.luckyshrub.com?clickID=kqDGWd24Q5TRwoEQ"}}})},
		{"wa_interactive_cta_url_document.json", rich("whatsapp", waTo, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type: record.InteractiveTypeCTAURL, Header: &record.InteractiveHeader{Type: "document", Media: ref("1013859600285441"), Filename: "dates.pdf"},
			Body: "Tap the button below to see available dates.",
			CTA:  &record.CTAURL{DisplayText: "See Dates", URL: "https://www.luckyshrub.com/dates"}}})},
		{"wa_location.json", rich("whatsapp", waTo, record.TypeLocation, &record.OutboundContent{Location: &record.Location{
			Latitude: 37.44216251868683, Longitude: -122.16153582049394, Name: "Philz Coffee", Address: "101 Forest Ave, Palo Alto, CA 94301"}})},
		{"wa_contacts.json", rich("whatsapp", waTo, record.TypeContacts, &record.OutboundContent{Contacts: []record.SharedContact{
			{FormattedName: "Barbara J. Johnson", FirstName: "Barbara", LastName: "Johnson", Organization: "Lucky Shrub",
				Phones: []record.ContactPhone{{Phone: "+15555555555", Type: "WORK", WaID: "15555555555"}, {Phone: "+15555555556", Type: "HOME"}},
				Emails: []record.ContactEmail{{Email: "bjohnson@luckyshrub.com", Type: "WORK"}}},
			{FirstName: "Pablo", LastName: "Morales"},
		}})},
		{"wa_reaction.json", rich("whatsapp", waTo, record.TypeReaction, &record.OutboundContent{Reaction: &record.Reaction{MessageID: "msg_9", ProviderMessageID: reactMID, Emoji: "\U0001F600"}})},
		{"wa_reaction_remove.json", rich("whatsapp", waTo, record.TypeReaction, &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: reactMID}})},
		{"wa_sticker_id.json", rich("whatsapp", waTo, record.TypeSticker, &record.OutboundContent{Media: ref("798882015472548")})},
		{"wa_sticker_link.json", stickerLink},
		{"wa_image_id.json", image},
		{"wa_document_id.json", doc},
		{"wa_audio_id.json", rich("whatsapp", waTo, record.TypeAudio, &record.OutboundContent{Media: ref("1013859600285441")})},
		{"wa_video_id_context.json", video},
		{"wa_text_context.json", text},
		{"fb_quick_replies.json", rich("messenger", psid, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type: record.InteractiveTypeButton, Body: "Pick a color:",
			Buttons: []record.InteractiveButton{{ID: "COLOR_RED", Title: "Red"}, {ID: "COLOR_GREEN", Title: "Green"}}}})},
		{"fb_button_template.json", rich("messenger", psid, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type: record.InteractiveTypeCTAURL, Body: "What do you want to do next?",
			CTA: &record.CTAURL{DisplayText: "Visit Messenger", URL: "https://www.messenger.com"}}})},
		{"ig_quick_replies.json", rich("instagram", igsid, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
			Type: record.InteractiveTypeButton, Body: "What do you want to do?",
			Buttons: []record.InteractiveButton{{ID: "TRACK", Title: "Track my order"}}}})},
		{"ig_react.json", igReact},
		{"ig_unreact.json", rich("instagram", igsid, record.TypeReaction, &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: igMID}})},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			t.Parallel()
			cs := newCaptureServer(t)
			wantID := "wamid.sent"
			if c.m.Channel != messaging.ChannelWhatsApp {
				wantID = "m_sent"
				cs.answer = func(*http.Request) (int, string) {
					return 200, fmt.Sprintf(`{"recipient_id":%q,"message_id":"m_sent"}`, c.m.To)
				}
				if c.m.Type == record.TypeReaction {
					// A sender action is answered with its recipient only.
					wantID = "reaction:" + igMID + ":" + c.m.ID
					cs.answer = func(*http.Request) (int, string) { return 200, fmt.Sprintf(`{"recipient_id":%q}`, c.m.To) }
				}
			}
			s := sender(c.m)
			r, err := cs.provider(t, nil).Send(t.Context(), s, c.m)
			if err != nil {
				t.Fatal(err)
			}
			if r.ProviderMessageID != wantID {
				t.Errorf("ProviderMessageID = %q, want %q", r.ProviderMessageID, wantID)
			}
			reqs := cs.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if want := "/v21.0/" + s.AccountID + "/messages"; reqs[0].Path != want || reqs[0].Method != http.MethodPost {
				t.Errorf("request %s %s, want POST %s", reqs[0].Method, reqs[0].Path, want)
			}
			wantJSON(t, c.file, reqs[0].Body)
		})
	}
}

// TestRichCorrelation checks that rich sends carry the service's message
// id as every send does: biz_opaque_callback_data and message.metadata.
func TestRichCorrelation(t *testing.T) {
	t.Parallel()
	cs := newCaptureServer(t)
	p := cs.provider(t, nil)
	wa := rich("whatsapp", waTo, record.TypeLocation, &record.OutboundContent{Location: &record.Location{Latitude: 1, Longitude: 2}})
	wa.ID = "msg_loc"
	if _, err := p.Send(t.Context(), sender(wa), wa); err != nil {
		t.Fatal(err)
	}
	cs.answer = func(*http.Request) (int, string) { return 200, `{"recipient_id":"x","message_id":"m_1"}` }
	fb := rich("messenger", psid, record.TypeInteractive, &record.OutboundContent{Interactive: &record.Interactive{
		Type: record.InteractiveTypeButton, Body: "b", Buttons: []record.InteractiveButton{{ID: "a", Title: "A"}}}})
	fb.ID = "msg_qr"
	if _, err := p.Send(t.Context(), sender(fb), fb); err != nil {
		t.Fatal(err)
	}
	reqs := cs.requests()
	var got0 struct {
		Biz string `json:"biz_opaque_callback_data"`
	}
	var got1 struct {
		Message struct {
			Metadata string `json:"metadata"`
		} `json:"message"`
	}
	_ = json.Unmarshal(reqs[0].Body, &got0)
	_ = json.Unmarshal(reqs[1].Body, &got1)
	if got0.Biz != "msg_loc" || got1.Message.Metadata != "msg_qr" {
		t.Errorf("correlations = %q, %q; want msg_loc, msg_qr", got0.Biz, got1.Message.Metadata)
	}
}

// TestRichRefusals checks that what a channel cannot carry, or a message
// the provider cannot build, is a permanent invalid SendError sent to no
// one.
func TestRichRefusals(t *testing.T) {
	t.Parallel()
	buttons := &record.Interactive{Type: record.InteractiveTypeButton, Body: "b", Buttons: []record.InteractiveButton{{ID: "a", Title: "A"}}}
	withHeader := *buttons
	withHeader.Header = &record.InteractiveHeader{Type: "text", Text: "h"}
	withFooter := *buttons
	withFooter.Footer = "f"
	cta := &record.Interactive{Type: record.InteractiveTypeCTAURL, Body: "b", CTA: &record.CTAURL{DisplayText: "Go", URL: "https://example.com"}}
	listIn := &record.Interactive{Type: record.InteractiveTypeList, Body: "b", List: &record.InteractiveList{Button: "L",
		Sections: []record.ListSection{{Rows: []record.ListRow{{ID: "r", Title: "R"}}}}}}
	badHeader := *buttons
	badHeader.Header = &record.InteractiveHeader{Type: "audio", MediaURL: "https://example.com/a.ogg"}
	loc := &record.OutboundContent{Location: &record.Location{Latitude: 1, Longitude: 2}}
	quote := &record.ReplyContext{ProviderMessageID: "m_1"}
	textQuote := rich("messenger", psid, record.TypeText, &record.OutboundContent{Context: quote})
	textQuote.Text = "hi"
	imgUpload := rich("instagram", igsid, record.TypeImage, &record.OutboundContent{Media: ref("123")})
	cases := []struct {
		name string
		m    *messaging.Message
		want string
	}{
		{"messenger reaction", rich("messenger", psid, record.TypeReaction, &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: "m_1", Emoji: "\U0001F600"}}), "reactions are not sent on messenger"},
		{"instagram other emoji", rich("instagram", igsid, record.TypeReaction, &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: "m_1", Emoji: "\U0001F600"}}), "love reaction"},
		{"instagram cta_url", rich("instagram", igsid, record.TypeInteractive, &record.OutboundContent{Interactive: cta}), `"cta_url" is not sent on instagram`},
		{"messenger list", rich("messenger", psid, record.TypeInteractive, &record.OutboundContent{Interactive: listIn}), `"list" is not sent on messenger`},
		{"messenger header", rich("messenger", psid, record.TypeInteractive, &record.OutboundContent{Interactive: &withHeader}), "interactive.header"},
		{"instagram footer", rich("instagram", igsid, record.TypeInteractive, &record.OutboundContent{Interactive: &withFooter}), "interactive.footer"},
		{"messenger location", rich("messenger", psid, record.TypeLocation, loc), `"location" is not supported on messenger`},
		{"messenger quote", textQuote, "context"},
		{"instagram upload", imgUpload, "uploaded media are sent on whatsapp only"},
		{"whatsapp reaction without provider id", rich("whatsapp", waTo, record.TypeReaction, &record.OutboundContent{Reaction: &record.Reaction{MessageID: "msg_1"}}), "reaction"},
		{"whatsapp upload without provider id", rich("whatsapp", waTo, record.TypeImage, &record.OutboundContent{Media: ref("")}), "med_1"},
		{"whatsapp audio header", rich("whatsapp", waTo, record.TypeInteractive, &record.OutboundContent{Interactive: &badHeader}), `interactive.header.type "audio"`},
		{"whatsapp interactive missing", rich("whatsapp", waTo, record.TypeInteractive, nil), "interactive is required"},
		{"whatsapp quote without provider id", rich("whatsapp", waTo, record.TypeLocation, &record.OutboundContent{Location: loc.Location, Context: &record.ReplyContext{MessageID: "msg_2"}}), "context"},
	}
	cs := newCaptureServer(t)
	p := cs.provider(t, nil)
	for _, c := range cases {
		_, err := p.Send(t.Context(), sender(c.m), c.m)
		var se *messaging.SendError
		if !errors.As(err, &se) || se.Code != metaprovider.CodeInvalidMessage || se.Retryable || !strings.Contains(se.Text, c.want) {
			t.Errorf("%s: err = %v, want a permanent %s SendError saying %q", c.name, err, metaprovider.CodeInvalidMessage, c.want)
		}
	}
	if n := len(cs.requests()); n != 0 {
		t.Errorf("%d requests reached Meta, want none", n)
	}
}
