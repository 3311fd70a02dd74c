package metaprovider

import "encoding/json"

// Webhook notification payloads, as Meta posts them to the Receiver.
// Unknown fields are ignored: Meta adds them.
type (
	webhookPayload struct {
		Object string         `json:"object"`
		Entry  []webhookEntry `json:"entry"`
	}
	webhookEntry struct {
		ID        string           `json:"id"`
		Changes   []webhookChange  `json:"changes"`
		Messaging []messagingEvent `json:"messaging"`
	}
	// webhookChange is a WhatsApp change: field "messages" carries status
	// reports and inbound messages; "message_template_status_update" and
	// "message_template_quality_update" carry a template event;
	// "phone_number_quality_update" a change of the account's health.
	webhookChange struct {
		Field string       `json:"field"`
		Value webhookValue `json:"value"`
	}
	webhookValue struct {
		Metadata struct {
			PhoneNumberID string `json:"phone_number_id"`
		} `json:"metadata"`
		Statuses []webhookStatus `json:"statuses"`
		Messages []waInbound     `json:"messages"`

		// Template events (message_template_status_update and
		// message_template_quality_update).
		Event                   string         `json:"event"`
		MessageTemplateID       numberOrString `json:"message_template_id"`
		MessageTemplateName     string         `json:"message_template_name"`
		MessageTemplateLanguage string         `json:"message_template_language"`
		Reason                  string         `json:"reason"`
		OtherInfo               *struct {
			Title string `json:"title"`
		} `json:"other_info"`
		NewQualityScore string `json:"new_quality_score"`

		// Account health (phone_number_quality_update): the number as
		// customers see it, the event (FLAGGED, UNFLAGGED, UPGRADE,
		// DOWNGRADE, ONBOARDING, ...), the messaging limit tier after
		// (current_limit, TIER_10K) and before (old_limit, on limit
		// changes), and in newer versions the daily limit as a number
		// (max_daily_conversations_per_business, or the older
		// max_daily_conversation_per_phone). Event is shared with the
		// template events.
		DisplayPhoneNumber               string         `json:"display_phone_number"`
		CurrentLimit                     string         `json:"current_limit"`
		OldLimit                         string         `json:"old_limit"`
		MaxDailyConversationsPerBusiness numberOrString `json:"max_daily_conversations_per_business"`
		MaxDailyConversationPerPhone     numberOrString `json:"max_daily_conversation_per_phone"`
	}
	webhookStatus struct {
		ID     string         `json:"id"`
		Status string         `json:"status"`
		Errors []webhookError `json:"errors"`
		// BizOpaqueCallbackData is the send's biz_opaque_callback_data:
		// our message id, when the send was ours.
		BizOpaqueCallbackData string `json:"biz_opaque_callback_data"`
	}
	webhookError struct {
		Code      numberOrString `json:"code"`
		Title     string         `json:"title"`
		Message   string         `json:"message"`
		ErrorData struct {
			Details string `json:"details"`
		} `json:"error_data"`
	}
	// waInbound is a WhatsApp inbound message: its type names the
	// member holding its content.
	waInbound struct {
		From string `json:"from"`
		ID   string `json:"id"`
		Type string `json:"type"`
		Text struct {
			Body string `json:"body"`
		} `json:"text"`
		Image    *waInboundMedia `json:"image"`
		Video    *waInboundMedia `json:"video"`
		Document *waInboundMedia `json:"document"`
		Audio    *waInboundMedia `json:"audio"`
		Sticker  *waInboundMedia `json:"sticker"`
		Location *struct {
			Latitude  float64 `json:"latitude"`
			Longitude float64 `json:"longitude"`
			Name      string  `json:"name"`
			Address   string  `json:"address"`
			URL       string  `json:"url"`
		} `json:"location"`
		Contacts []waContact `json:"contacts"`
		Button   *struct {
			Payload string `json:"payload"`
			Text    string `json:"text"`
		} `json:"button"`
		Interactive *struct {
			Type        string       `json:"type"`
			ButtonReply *waReplyItem `json:"button_reply"`
			ListReply   *waReplyItem `json:"list_reply"`
		} `json:"interactive"`
		Reaction *struct {
			MessageID string `json:"message_id"`
			Emoji     string `json:"emoji"`
		} `json:"reaction"`
		Context *struct {
			ID string `json:"id"`
		} `json:"context"`
		// Unsupported names the kind of an unsupported message (newer
		// notifications: {"type": "edit"}).
		Unsupported *struct {
			Type string `json:"type"`
		} `json:"unsupported"`
	}
	// waInboundMedia is the media of an inbound message: an id to fetch
	// it by, with its type, checksum, caption and file name.
	waInboundMedia struct {
		ID       string `json:"id"`
		MimeType string `json:"mime_type"`
		SHA256   string `json:"sha256"`
		Caption  string `json:"caption"`
		Filename string `json:"filename"`
		Animated bool   `json:"animated"`
	}
	// waReplyItem is the button or list row an interactive reply chose.
	waReplyItem struct {
		ID          string `json:"id"`
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	// waContact is a contact card of a contacts message.
	waContact struct {
		Name struct {
			FormattedName string `json:"formatted_name"`
			FirstName     string `json:"first_name"`
			LastName      string `json:"last_name"`
		} `json:"name"`
		Org struct {
			Company string `json:"company"`
		} `json:"org"`
		Phones []struct {
			Phone string `json:"phone"`
			WaID  string `json:"wa_id"`
			Type  string `json:"type"`
		} `json:"phones"`
		Emails []struct {
			Email string `json:"email"`
			Type  string `json:"type"`
		} `json:"emails"`
	}
	// messagingEvent is a Messenger or Instagram event: an inbound
	// message (or the echo of a sent one), a delivery or a read receipt.
	// Its attachments have the shape of the Send API's.
	messagingEvent struct {
		Sender struct {
			ID string `json:"id"`
		} `json:"sender"`
		Recipient struct {
			ID string `json:"id"`
		} `json:"recipient"`
		Message *struct {
			Mid         string         `json:"mid"`
			Text        string         `json:"text"`
			IsEcho      bool           `json:"is_echo"`
			Attachments []fbAttachment `json:"attachments"`
			// Metadata, on an echo, is the send's message.metadata:
			// our message id, when the send was ours.
			Metadata string `json:"metadata"`
		} `json:"message"`
		Delivery *struct {
			Mids []string `json:"mids"`
		} `json:"delivery"`
		Read *struct {
			Mid string `json:"mid"`
		} `json:"read"`
	}
)

// numberOrString is a code or id Meta writes as a number (or,
// defensively, a string): an error code, a message_template_id. Null is
// empty.
type numberOrString string

// UnmarshalJSON accepts a JSON number, string or null.
func (c *numberOrString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*c = numberOrString(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*c = numberOrString(s)
	return nil
}
