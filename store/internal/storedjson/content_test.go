package storedjson

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// pinnedInbound is stored as pinnedInboundJSON: the form written before
// outbound content existed.
func pinnedInbound() *messaging.InboundContent {
	return &messaging.InboundContent{
		Media:    &record.InboundMedia{ProviderMediaID: "m1", MimeType: "image/jpeg", SHA256: "abc", Caption: "cap <é> & ✓", Filename: "f.jpg", Animated: true},
		Location: &record.Location{Latitude: -1.2921, Longitude: 36.8219, Name: "Nairobi", Address: "CBD", URL: "https://example.com"},
		Contacts: []record.SharedContact{{FormattedName: "Amina W", FirstName: "Amina", LastName: "W", Organization: "Acme",
			Phones: []record.ContactPhone{{Phone: "+254712345678", WaID: "254712345678", Type: "CELL"}},
			Emails: []record.ContactEmail{{Email: "a@example.com", Type: "WORK"}}}},
		Reply:    &record.InteractiveReply{Kind: record.ReplyList, ID: "row1", Title: "Row", Description: "d"},
		Reaction: &record.Reaction{MessageID: "msg_0", ProviderMessageID: "wamid.0", Emoji: "👍"},
		Context:  &messaging.ReplyContext{MessageID: "msg_0", ProviderMessageID: "wamid.0"},
		RawType:  "order",
	}
}

const pinnedInboundJSON = `{"media":{"id":"m1","mime_type":"image/jpeg","sha256":"abc","caption":"cap \u003cé\u003e \u0026 ✓","filename":"f.jpg","animated":true},"location":{"lat":-1.2921,"lng":36.8219,"name":"Nairobi","address":"CBD","url":"https://example.com"},"contacts":[{"formatted_name":"Amina W","first_name":"Amina","last_name":"W","org":"Acme","phones":[{"phone":"+254712345678","wa_id":"254712345678","type":"CELL"}],"emails":[{"email":"a@example.com","type":"WORK"}]}],"reply":{"kind":"list_reply","id":"row1","title":"Row","description":"d"},"reaction":{"message_id":"msg_0","provider_message_id":"wamid.0","emoji":"👍"},"context":{"message_id":"msg_0","provider_message_id":"wamid.0"},"raw_type":"order"}`

// pinnedOutbound sets every member of an outbound content (a message has
// only those of its type; the encoding keeps them all).
func pinnedOutbound() *record.OutboundContent {
	return &record.OutboundContent{
		Interactive: &record.Interactive{Type: record.InteractiveTypeList,
			Header: &record.InteractiveHeader{Type: "document", Text: "h", MediaURL: "https://x.example/d.pdf", Filename: "d.pdf",
				Media: &record.MediaRef{ID: "med_h", ProviderMediaID: "pm_h", MimeType: "application/pdf"}},
			Body: "Pick <one> & go", Footer: "f",
			Buttons: []record.InteractiveButton{{ID: "b1", Title: "Yes"}, {ID: "b2", Title: "No"}},
			List: &record.InteractiveList{Button: "Menu", Sections: []record.ListSection{
				{Title: "S1", Rows: []record.ListRow{{ID: "r1", Title: "One", Description: "first"}, {ID: "r2", Title: "Two"}}},
				{Rows: []record.ListRow{{ID: "r3", Title: "Three"}}},
			}},
			CTA: &record.CTAURL{DisplayText: "Open", URL: "https://x.example/o"}},
		Location: &record.Location{Latitude: 1.5, Longitude: -2.25, Name: "N", Address: "A", URL: "https://x.example/l"},
		Contacts: []record.SharedContact{{FormattedName: "B K", FirstName: "B", LastName: "K", Organization: "O",
			Phones: []record.ContactPhone{{Phone: "+254700000001", WaID: "254700000001", Type: "HOME"}},
			Emails: []record.ContactEmail{{Email: "b@example.com", Type: "HOME"}}}},
		Reaction: &record.Reaction{MessageID: "msg_9", ProviderMessageID: "wamid.9", Emoji: "❤️"},
		Context:  &record.ReplyContext{MessageID: "msg_8", ProviderMessageID: "wamid.8"},
		Media:    &record.MediaRef{ID: "med_1", ProviderMediaID: "pm_1", MimeType: "image/png"},
	}
}

const pinnedOutboundJSON = `{"out":{"interactive":{"type":"list","header":{"type":"document","text":"h","media_url":"https://x.example/d.pdf","media":{"id":"med_h","provider_id":"pm_h","mime_type":"application/pdf"},"filename":"d.pdf"},"body":"Pick \u003cone\u003e \u0026 go","footer":"f","buttons":[{"id":"b1","title":"Yes"},{"id":"b2","title":"No"}],"list":{"button":"Menu","sections":[{"title":"S1","rows":[{"id":"r1","title":"One","description":"first"},{"id":"r2","title":"Two"}]},{"rows":[{"id":"r3","title":"Three"}]}]},"cta":{"text":"Open","url":"https://x.example/o"}},"location":{"lat":1.5,"lng":-2.25,"name":"N","address":"A","url":"https://x.example/l"},"contacts":[{"formatted_name":"B K","first_name":"B","last_name":"K","org":"O","phones":[{"phone":"+254700000001","wa_id":"254700000001","type":"HOME"}],"emails":[{"email":"b@example.com","type":"HOME"}]}],"reaction":{"message_id":"msg_9","provider_message_id":"wamid.9","emoji":"❤️"},"context":{"message_id":"msg_8","provider_message_id":"wamid.8"},"media":{"id":"med_1","provider_id":"pm_1","mime_type":"image/png"}}}`

// TestContentIsPinned: an inbound content is stored byte for byte as
// before outbound content existed, an outbound one in its own fixed form
// under "out", and each reads back unchanged, every member kept; an
// empty content of either kind reads back as that kind.
func TestContentIsPinned(t *testing.T) {
	for _, c := range []struct {
		name string
		in   *messaging.InboundContent
		out  *record.OutboundContent
		want string
	}{
		{"inbound", pinnedInbound(), nil, pinnedInboundJSON},
		{"outbound", nil, pinnedOutbound(), pinnedOutboundJSON},
		{"empty inbound", &messaging.InboundContent{}, nil, `{}`},
		{"empty outbound", nil, &record.OutboundContent{}, `{"out":{}}`},
	} {
		s, err := EncodeContent(c.in, c.out)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s == nil || *s != c.want {
			t.Errorf("%s: stored\n got %v\nwant %s", c.name, deref(s), c.want)
		}
		in, out, err := DecodeContent(&c.want)
		if err != nil {
			t.Fatalf("%s: decode: %v", c.name, err)
		}
		if d := cmp.Diff(c.in, in); d != "" {
			t.Errorf("%s: inbound read back (-want +got):\n%s", c.name, d)
		}
		if d := cmp.Diff(c.out, out); d != "" {
			t.Errorf("%s: outbound read back (-want +got):\n%s", c.name, d)
		}
	}
}

// TestContentNoneOrBoth: no content is NULL and reads back as none; a
// message with both contents is refused, and so is a stored value holding
// both.
func TestContentNoneOrBoth(t *testing.T) {
	if s, err := EncodeContent(nil, nil); s != nil || err != nil {
		t.Errorf("EncodeContent(nil, nil) = %v, %v; want nil, nil", deref(s), err)
	}
	if in, out, err := DecodeContent(nil); in != nil || out != nil || err != nil {
		t.Errorf("DecodeContent(nil) = %v, %v, %v; want nothing", in, out, err)
	}
	if _, err := EncodeContent(pinnedInbound(), pinnedOutbound()); err == nil {
		t.Error("EncodeContent of both contents: no error")
	}
	both := `{"raw_type":"x","out":{}}`
	if _, _, err := DecodeContent(&both); err == nil {
		t.Errorf("DecodeContent(%s): no error", both)
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
