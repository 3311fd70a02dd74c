package providertest

import (
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/record"
)

// RichCases returns the semantic cases of the rich outbound messages that
// need no state at the provider (no uploaded media, no earlier message):
// each channel's interactive types, locations, contacts and stickers by
// link are accepted where metaprovider.ChannelSpecs says the channel
// carries them, and refused with 100 "Invalid parameter" where it does not.
// A provider runs them once it sends rich messages, as its own cases:
//
//	providertest.Run(t, h, append(providertest.RichCases(), own...))
func RichCases() []Case {
	msg := func(channel, to, typ string, o *record.OutboundContent) *messaging.Message {
		return &messaging.Message{ID: "msg_rich", WorkspaceID: WorkspaceID, ConversationID: "conv_rich",
			Channel: channel, To: to, Direction: record.DirectionOutbound, Status: messaging.StatusQueued, Type: typ, Outbound: o}
	}
	buttons := &record.Interactive{Type: record.InteractiveTypeButton, Body: "Did your order arrive?",
		Buttons: []record.InteractiveButton{{ID: "yes", Title: "Yes"}, {ID: "no", Title: "No"}}}
	list := &record.Interactive{Type: record.InteractiveTypeList, Body: "Pick a delivery slot", Footer: "Times are EAT",
		Header: &record.InteractiveHeader{Type: "text", Text: "Delivery"},
		List: &record.InteractiveList{Button: "Slots", Sections: []record.ListSection{
			{Title: "Morning", Rows: []record.ListRow{{ID: "m9", Title: "9:00"}, {ID: "m11", Title: "11:00", Description: "Late morning"}}},
			{Title: "Afternoon", Rows: []record.ListRow{{ID: "a14", Title: "14:00"}}},
		}}}
	cta := &record.Interactive{Type: record.InteractiveTypeCTAURL, Body: "Track your parcel",
		CTA: &record.CTAURL{DisplayText: "Track", URL: "https://example.com/track/A-1042"}}
	imageHeader := &record.Interactive{Type: record.InteractiveTypeButton, Body: "Is this your parcel?",
		Header:  &record.InteractiveHeader{Type: "image", MediaURL: "https://example.com/parcel.jpg"},
		Buttons: []record.InteractiveButton{{ID: "yes", Title: "Yes"}}}
	location := &record.Location{Latitude: -1.2921, Longitude: 36.8219, Name: "Ujumbe HQ", Address: "Nairobi"}
	contacts := []record.SharedContact{{FormattedName: "Amina Njeri", Phones: []record.ContactPhone{{Phone: "+254712345678", Type: "CELL"}}}}

	recipient := map[string]string{messaging.ChannelWhatsApp: PhoneOK, messaging.ChannelMessenger: PSID, messaging.ChannelInstagram: IGSID}
	accept := &Verdict{ID: "rich.accepted"}
	v100 := &Verdict{Code: "100", Text: "Invalid parameter", HTTPStatus: 400}
	e100 := &messaging.SendError{Code: "100", Text: "Invalid parameter"}
	var cases []Case
	add := func(label string, ok bool, m *messaging.Message) {
		if ok {
			cases = append(cases, Case{Label: label + " is accepted", Msg: m, Verdict: accept})
		} else {
			cases = append(cases, Case{Label: label + " is refused with 100", Msg: m, Verdict: v100, ExpectedError: e100})
		}
	}
	for _, spec := range metaprovider.ChannelSpecs() {
		ch, to, out := spec.Name, recipient[spec.Name], spec.Outbound
		carries := func(typ string) bool {
			for _, t := range out.Interactive {
				if t == typ {
					return true
				}
			}
			return false
		}
		add(ch+" interactive buttons", carries(record.InteractiveTypeButton), msg(ch, to, record.TypeInteractive, &record.OutboundContent{Interactive: buttons}))
		add(ch+" interactive list with header and footer", carries(record.InteractiveTypeList) && out.InteractiveHeader && out.InteractiveFooter,
			msg(ch, to, record.TypeInteractive, &record.OutboundContent{Interactive: list}))
		add(ch+" interactive cta_url", carries(record.InteractiveTypeCTAURL), msg(ch, to, record.TypeInteractive, &record.OutboundContent{Interactive: cta}))
		add(ch+" interactive buttons with an image header by link", carries(record.InteractiveTypeButton) && out.InteractiveHeader,
			msg(ch, to, record.TypeInteractive, &record.OutboundContent{Interactive: imageHeader}))
		add(ch+" location", out.Location, msg(ch, to, record.TypeLocation, &record.OutboundContent{Location: location}))
		add(ch+" contacts", out.Contacts, msg(ch, to, record.TypeContacts, &record.OutboundContent{Contacts: contacts}))
		sticker := msg(ch, to, record.TypeSticker, nil)
		sticker.MediaURL = "https://example.com/hello.webp"
		add(ch+" sticker by link", out.Sticker, sticker)
	}
	return cases
}
