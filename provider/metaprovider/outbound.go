package metaprovider

import (
	"github.com/ujumbe/messaging/record"
)

// WhatsApp Cloud API payloads of the rich outbound messages (see the
// package doc for the mapping).
type (
	waInteractive struct {
		Type   string    `json:"type"`
		Header *waHeader `json:"header,omitempty"`
		Body   *waBody   `json:"body,omitempty"`
		Footer *waBody   `json:"footer,omitempty"`
		Action waAction  `json:"action"`
	}
	// waBody is an interactive message's body or footer.
	waBody struct {
		Text string `json:"text"`
	}
	waHeader struct {
		Type     string   `json:"type"`
		Text     string   `json:"text,omitempty"`
		Image    *waMedia `json:"image,omitempty"`
		Video    *waMedia `json:"video,omitempty"`
		Document *waMedia `json:"document,omitempty"`
	}
	// waAction is the action of an interactive message: buttons (button),
	// a button and sections (list) or a named action with parameters
	// (cta_url).
	waAction struct {
		Name       string         `json:"name,omitempty"`
		Button     string         `json:"button,omitempty"`
		Buttons    []waButton     `json:"buttons,omitempty"`
		Sections   []waSection    `json:"sections,omitempty"`
		Parameters *waCTAURLParam `json:"parameters,omitempty"`
	}
	waButton struct {
		Type  string  `json:"type"`
		Reply waReply `json:"reply"`
	}
	waReply struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	waSection struct {
		Title string  `json:"title,omitempty"`
		Rows  []waRow `json:"rows"`
	}
	waRow struct {
		ID          string `json:"id"`
		Title       string `json:"title"`
		Description string `json:"description,omitempty"`
	}
	waCTAURLParam struct {
		DisplayText string `json:"display_text"`
		URL         string `json:"url"`
	}
	waLocation struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
		Name      string  `json:"name,omitempty"`
		Address   string  `json:"address,omitempty"`
	}
	waOutContact struct {
		Name   waContactName `json:"name"`
		Phones []waPhone     `json:"phones,omitempty"`
		Emails []waEmail     `json:"emails,omitempty"`
		Org    *waOrg        `json:"org,omitempty"`
	}
	waContactName struct {
		FormattedName string `json:"formatted_name"`
		FirstName     string `json:"first_name,omitempty"`
		LastName      string `json:"last_name,omitempty"`
	}
	waPhone struct {
		Phone string `json:"phone,omitempty"`
		Type  string `json:"type,omitempty"`
		WaID  string `json:"wa_id,omitempty"`
	}
	waEmail struct {
		Email string `json:"email,omitempty"`
		Type  string `json:"type,omitempty"`
	}
	waOrg struct {
		Company string `json:"company,omitempty"`
	}
	// waReaction is a reaction; an empty Emoji removes it (Meta's
	// documented form, so it is always sent).
	waReaction struct {
		MessageID string `json:"message_id"`
		Emoji     string `json:"emoji"`
	}
	waContext struct {
		MessageID string `json:"message_id"`
	}
)

// waMediaOf is the media object of a link or, when ref is set, of an
// upload by its provider id; field names the field in errors.
func waMediaOf(field, link string, ref *record.MediaRef) (*waMedia, error) {
	switch {
	case ref != nil && ref.ProviderMediaID == "":
		return nil, invalid("%s: the uploaded media %q has no provider id", field, ref.ID)
	case ref != nil:
		return &waMedia{ID: ref.ProviderMediaID}, nil
	case link == "":
		return nil, invalid("%s: a link or an uploaded media is required", field)
	}
	return &waMedia{Link: link}, nil
}

// waInteractiveOf is the interactive object of in.
func waInteractiveOf(in *record.Interactive) (*waInteractive, error) {
	if in == nil {
		return nil, invalid("interactive is required")
	}
	w := &waInteractive{Type: in.Type, Body: &waBody{Text: in.Body}}
	if in.Footer != "" {
		w.Footer = &waBody{Text: in.Footer}
	}
	if h := in.Header; h != nil {
		w.Header = &waHeader{Type: h.Type}
		if h.Type == "text" {
			w.Header.Text = h.Text
		} else {
			media, err := waMediaOf("interactive.header", h.MediaURL, h.Media)
			if err != nil {
				return nil, err
			}
			switch h.Type {
			case record.TypeImage:
				w.Header.Image = media
			case record.TypeVideo:
				w.Header.Video = media
			case record.TypeDocument:
				media.Filename = h.Filename
				w.Header.Document = media
			default:
				return nil, invalid("interactive.header.type %q is not supported", h.Type)
			}
		}
	}
	switch in.Type {
	case record.InteractiveTypeButton:
		if len(in.Buttons) == 0 {
			return nil, invalid("interactive.buttons are required")
		}
		for _, b := range in.Buttons {
			w.Action.Buttons = append(w.Action.Buttons, waButton{Type: "reply", Reply: waReply{ID: b.ID, Title: b.Title}})
		}
	case record.InteractiveTypeList:
		if in.List == nil || len(in.List.Sections) == 0 {
			return nil, invalid("interactive.list.sections are required")
		}
		w.Action.Button = in.List.Button
		for _, s := range in.List.Sections {
			ws := waSection{Title: s.Title, Rows: make([]waRow, 0, len(s.Rows))}
			for _, r := range s.Rows {
				ws.Rows = append(ws.Rows, waRow{ID: r.ID, Title: r.Title, Description: r.Description})
			}
			w.Action.Sections = append(w.Action.Sections, ws)
		}
	case record.InteractiveTypeCTAURL:
		if in.CTA == nil {
			return nil, invalid("interactive.cta_url is required")
		}
		w.Action.Name = "cta_url"
		w.Action.Parameters = &waCTAURLParam{DisplayText: in.CTA.DisplayText, URL: in.CTA.URL}
	default:
		return nil, invalid("interactive.type %q is not supported", in.Type)
	}
	return w, nil
}

// waContactsOf is the contacts array of cs. A card without a formatted
// name gets its first and last names joined (Meta requires
// name.formatted_name).
func waContactsOf(cs []record.SharedContact) []waOutContact {
	out := make([]waOutContact, 0, len(cs))
	for _, c := range cs {
		wc := waOutContact{Name: waContactName{FormattedName: c.FormattedName, FirstName: c.FirstName, LastName: c.LastName}}
		if wc.Name.FormattedName == "" {
			wc.Name.FormattedName = joinNonEmpty(c.FirstName, c.LastName)
		}
		for _, p := range c.Phones {
			wc.Phones = append(wc.Phones, waPhone{Phone: p.Phone, Type: p.Type, WaID: p.WaID})
		}
		for _, e := range c.Emails {
			wc.Emails = append(wc.Emails, waEmail{Email: e.Email, Type: e.Type})
		}
		if c.Organization != "" {
			wc.Org = &waOrg{Company: c.Organization}
		}
		out = append(out, wc)
	}
	return out
}

// joinNonEmpty joins the non-empty strings of ss with a space.
func joinNonEmpty(ss ...string) string {
	out := ""
	for _, s := range ss {
		if s == "" {
			continue
		}
		if out != "" {
			out += " "
		}
		out += s
	}
	return out
}
