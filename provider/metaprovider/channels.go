package metaprovider

import (
	"errors"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

var _ messaging.ChannelProvider = (*Provider)(nil)

// The credential fields of Meta's channels, as the management API names
// them.
const (
	// FieldPhoneNumberID is the WhatsApp phone-number id: the account a
	// WhatsApp connection sends from.
	FieldPhoneNumberID = "phone_number_id"
	// FieldWABAID is the WhatsApp Business Account id: the owner of the
	// number and of its templates.
	FieldWABAID = "waba_id"
	// FieldDisplayPhoneNumber is the WhatsApp number as customers see it.
	FieldDisplayPhoneNumber = "display_phone_number"
	// FieldPageID is the Facebook page id: the account a Messenger
	// connection sends from.
	FieldPageID = "page_id"
	// FieldInstagramAccountID is the Instagram account id: the account an
	// Instagram connection sends from.
	FieldInstagramAccountID = "instagram_account_id"
)

// Channels implements messaging.ChannelProvider: the Provider serves
// Meta's channels (see ChannelSpecs).
func (p *Provider) Channels() []messaging.ChannelSpec { return ChannelSpecs() }

// ChannelSpecs returns the specs of Meta's channels, in the order the
// service lists them:
//
//   - whatsapp: its account is the phone-number id (phone_number_id), owned
//     by a WhatsApp Business Account (waba_id, required: the owner of the
//     templates), with the number as customers see it
//     (display_phone_number, optional); texts of up to 4,096 characters;
//     recipients are phone numbers.
//   - instagram: its account is the Instagram account id
//     (instagram_account_id); texts of up to 1,000 characters.
//   - messenger: its account is the Facebook page id (page_id); texts of
//     up to 2,000 characters.
//
// Account and owner ids are Meta's numeric ids: 1 to 32 digits. A
// simulator of Meta (fakeprovider) serves the same specs.
func ChannelSpecs() []messaging.ChannelSpec {
	account := func(name, label string) messaging.ChannelField {
		return messaging.ChannelField{Name: name, Label: label, Hint: "Digits only.",
			Check: numericID("must be the account's numeric id (1 to 32 digits)")}
	}
	return []messaging.ChannelSpec{
		{
			Name:    messaging.ChannelWhatsApp,
			Label:   "WhatsApp",
			Account: account(FieldPhoneNumberID, "Phone number ID"),
			Owner: messaging.ChannelField{Name: FieldWABAID, Label: "WhatsApp Business Account ID", Hint: "Digits only; the owner of the templates.",
				Check: numericID("must be the WhatsApp Business Account's numeric id (1 to 32 digits)")},
			Display:         messaging.ChannelField{Name: FieldDisplayPhoneNumber, Label: "Display number (optional)", Hint: "E.164, for example +254712345678."},
			MaxText:         record.MaxTextWhatsApp,
			PhoneRecipients: true,
			Outbound: messaging.OutboundSupport{
				Interactive:       []string{record.InteractiveTypeButton, record.InteractiveTypeList, record.InteractiveTypeCTAURL},
				InteractiveHeader: true, InteractiveFooter: true,
				Location: true, Contacts: true, Reaction: true, Sticker: true, Replies: true,
			},
		},
		{
			Name: messaging.ChannelInstagram, Label: "Instagram", Account: account(FieldInstagramAccountID, "Instagram account ID"), MaxText: record.MaxTextInstagram,
			// Quick replies (reply buttons) and reactions, which the
			// Instagram API gives as the "love" reaction only.
			Outbound: messaging.OutboundSupport{
				Interactive: []string{record.InteractiveTypeButton}, MaxInteractiveBody: record.MaxTextInstagram,
				Reaction: true, ReactionEmoji: []string{ReactionLove},
			},
		},
		{
			Name: messaging.ChannelMessenger, Label: "Messenger", Account: account(FieldPageID, "Facebook page ID"), MaxText: record.MaxTextMessenger,
			// Quick replies (reply buttons) and the button template (a
			// call-to-action URL), whose text holds 640 characters.
			Outbound: messaging.OutboundSupport{
				Interactive:        []string{record.InteractiveTypeButton, record.InteractiveTypeCTAURL},
				MaxInteractiveBody: MaxButtonTemplateText,
			},
		},
	}
}

// ReactionLove is the one reaction the Instagram API sends (its "love"
// reaction), as the emoji a reaction message carries.
const ReactionLove = "\u2764\ufe0f"

// MaxButtonTemplateText is the longest text of a Messenger button
// template, in characters (the Send API's button template reference).
const MaxButtonTemplateText = 640

// numericID returns the check of a Graph id: 1 to 32 digits, else rule.
func numericID(rule string) func(string) error {
	return func(v string) error {
		if v == "" || len(v) > 32 {
			return errors.New(rule)
		}
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return errors.New(rule)
			}
		}
		return nil
	}
}
