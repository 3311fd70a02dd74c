package record

// From returns the sender of an inbound message: an E.164 number on
// WhatsApp, the channel's scoped user id on Instagram and Messenger. It is
// empty on an outbound message, which the workspace sent.
func (m *Message) From() string {
	if m.Direction != DirectionInbound {
		return ""
	}
	return m.To
}
