package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ujumbe/messaging"
)

// Settings -> Channels: each channel's connection (status, error reason,
// account ids, display number, the token's last 4 characters, the last
// template sync), a form connecting it or replacing its credentials
// (Service.PutChannel, as PUT /v1/channels/{channel}) and disconnecting
// it (Service.RemoveChannel, as DELETE /v1/channels/{channel}). The
// access token is a password input, never shown again and never put back
// into the form.

// channelView is one channel on the page.
type channelView struct {
	State *messaging.ChannelState
	// WABAID, TemplatesSyncedAt and TemplateSyncError come from the
	// connection record, when there is one.
	WABAID            string
	TemplatesSyncedAt *time.Time
	TemplateSyncError string
	// AccountField names the channel's account id as Meta does
	// (phone_number_id, page_id, instagram_account_id).
	AccountField, AccountLabel string
	// Posted is set on the channel whose form was sent: its errors and
	// values are shown in its form.
	Posted bool
	// Fields are the inputs of the channel's credentials form.
	Fields []chInput
}

// chInput is an input of a channel's credentials form.
type chInput struct {
	ID, Name, Label, Hint, Type, Value, Error string
}

func (h *Handler) channels(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.renderChannels(w, r, req, &page{}, "", http.StatusOK)
}

func (h *Handler) renderChannels(w http.ResponseWriter, r *http.Request, req *request, p *page, posted string, status int) error {
	p.Title, p.Nav = "Channels", "channels"
	p.fill(h, req)
	states, err := h.svc.ChannelStates(req.ctx, req.ws.ID)
	if err != nil {
		return err
	}
	conns, err := h.svc.Connections(req.ctx, req.ws.ID)
	if err != nil {
		return err
	}
	var list []*channelView
	for _, st := range states {
		v := &channelView{State: st, Posted: st.Channel == posted}
		v.AccountField, v.AccountLabel = accountOf(st.Channel)
		v.Fields = []chInput{{Name: v.AccountField, Label: v.AccountLabel, Hint: "Digits only.", Type: "text"}}
		if st.Channel == messaging.ChannelWhatsApp {
			v.Fields = append(v.Fields,
				chInput{Name: "waba_id", Label: "WhatsApp Business Account ID", Hint: "Digits only; the owner of the templates.", Type: "text"},
				chInput{Name: "display_phone_number", Label: "Display number (optional)", Hint: "E.164, for example +254712345678.", Type: "tel"})
		}
		v.Fields = append(v.Fields, chInput{Name: "access_token", Label: "Access token", Hint: "Paste the token; it is not shown again.", Type: "password"})
		for i := range v.Fields {
			in := &v.Fields[i]
			in.ID = st.Channel + "-" + in.Name
			if v.Posted {
				// The form's values were sent without the token.
				in.Value, in.Error = p.Form.Get(in.Name), p.Errors[in.Name]
			}
		}
		for _, c := range conns {
			if c.Channel == st.Channel && c.Status != messaging.ConnectionDisconnected {
				v.WABAID, v.TemplatesSyncedAt, v.TemplateSyncError = c.WABAID, c.TemplatesSyncedAt, c.TemplateSyncError
			}
		}
		list = append(list, v)
	}
	p.Data = list
	h.render(w, r, status, "channels", p)
	return nil
}

// accountOf names a channel's account id field and its label.
func accountOf(channel string) (field, label string) {
	switch channel {
	case messaging.ChannelWhatsApp:
		return "phone_number_id", "Phone number ID"
	case messaging.ChannelMessenger:
		return "page_id", "Facebook page ID"
	}
	return "instagram_account_id", "Instagram account ID"
}

// putChannel connects a channel or replaces its credentials with the
// form's, through Service.PutChannel (the rules of PUT
// /v1/channels/{channel}).
func (h *Handler) putChannel(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	channel := r.PathValue("channel")
	f := r.PostForm
	creds := &messaging.ChannelCredentials{
		PhoneNumberID: strings.TrimSpace(f.Get("phone_number_id")), WABAID: strings.TrimSpace(f.Get("waba_id")),
		DisplayPhoneNumber: strings.TrimSpace(f.Get("display_phone_number")), PageID: strings.TrimSpace(f.Get("page_id")),
		InstagramAccountID: strings.TrimSpace(f.Get("instagram_account_id")), AccessToken: f.Get("access_token"),
	}
	st, err := h.svc.PutChannel(req.ctx, req.ws.ID, channel, creds)
	if err != nil {
		// The token is never sent back, not even into the form.
		form := url.Values{}
		for k, v := range f {
			if k != "access_token" {
				form[k] = v
			}
		}
		p := &page{Form: form}
		if messaging.ErrorCode(err) == messaging.CodeNotFound || !p.fieldError(err) {
			return err
		}
		if p.Errors == nil && p.Problem != "" {
			// A conflict (the account is another workspace's) names the
			// account field: show it there.
			if e := asError(err); e != nil && e.Field != "" {
				p.Errors, p.Problem = map[string]string{e.Field: e.Message}, ""
			}
		}
		return h.renderChannels(w, r, req, p, channel, http.StatusUnprocessableEntity)
	}
	if st.Status == messaging.ConnectionPending {
		h.flash(w, "Channel "+st.Channel+" saved (token ending in "+st.TokenHint+") but not verified yet: "+st.Error+".")
	} else {
		h.flash(w, "Channel "+st.Channel+" connected (token ending in "+st.TokenHint+"), verified with the provider.")
	}
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/channels", http.StatusSeeOther)
	return nil
}

// verifyChannel asks the provider now whether the channel's stored
// credentials control its account, through Service.VerifyChannel (the
// rules of POST /v1/channels/{channel}/verify), and says the verdict.
func (h *Handler) verifyChannel(w http.ResponseWriter, r *http.Request, req *request) error {
	st, err := h.svc.VerifyChannel(req.ctx, req.ws.ID, r.PathValue("channel"))
	switch {
	case messaging.ErrorCode(err) == messaging.CodeServiceUnavailable:
		h.flash(w, "Not verified: "+asError(err).Message+".")
	case err != nil:
		return err
	case st.Status == messaging.ConnectionConnected:
		h.flash(w, "Channel "+st.Channel+" verified with the provider: connected.")
	default:
		h.flash(w, "Channel "+st.Channel+" is "+st.Status+": "+st.Error+".")
	}
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/channels", http.StatusSeeOther)
	return nil
}

// disconnectChannel disconnects a channel through Service.RemoveChannel.
func (h *Handler) disconnectChannel(w http.ResponseWriter, r *http.Request, req *request) error {
	st, err := h.svc.RemoveChannel(req.ctx, req.ws.ID, r.PathValue("channel"))
	if err != nil {
		return err
	}
	h.flash(w, "Channel "+st.Channel+" disconnected; sends on it now fail with channel_unavailable.")
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/channels", http.StatusSeeOther)
	return nil
}

// asError is err's *messaging.Error, or nil.
func asError(err error) *messaging.Error {
	var e *messaging.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
