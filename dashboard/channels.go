package dashboard

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// Settings -> Channels: each channel the service serves, with its
// connection (status, error reason, account ids, display number, the
// token's last 4 characters, the last template sync), a form connecting
// it or replacing its credentials (Channels.Connect, as PUT
// /v1/channels/{channel}) and disconnecting it (Channels.Disconnect, as
// DELETE /v1/channels/{channel}). The form's fields are those of the
// channel's spec (messaging.ChannelSpec). The access token is a password
// input, never shown again and never put back into the form. A live
// connection also shows its sending limits and account health: the
// provider's quality rating and messaging limit tier, and its throughput
// with a form changing it (Channels.Update, as PATCH
// /v1/channels/{channel}).

// channelView is one channel on the page.
type channelView struct {
	State *messaging.ChannelState
	// Title is the channel's name as people write it.
	Title string
	// AccountLabel names the channel's account id (its spec's Account).
	AccountLabel string
	// OwnerLabel names the id of the account's owner when the channel
	// has one (its spec's Owner); OwnerID is that id, from the
	// connection record.
	OwnerLabel, OwnerID string
	// Display is set when the channel's accounts have a display number.
	Display bool
	// Templates is set on the channel of templates (whatsapp), with
	// TemplatesSyncedAt and TemplateSyncError from the connection record.
	Templates         bool
	TemplatesSyncedAt *time.Time
	TemplateSyncError string
	// Posted is set on the channel whose form was sent: its errors and
	// values are shown in its form.
	Posted bool
	// Fields are the inputs of the channel's credentials form.
	Fields []chInput
	// Limits is set when the channel has a live connection with
	// credentials: its throughput (messages per second, editable), and
	// the provider's quality rating and messaging tier with when each
	// changed. Throughput is the form's value; ThroughputError its error.
	Limits                          bool
	Throughput, ThroughputError     string
	QualityRating, MessagingTier    string
	QualityChangedAt, TierChangedAt *time.Time
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
	states, err := h.svc.Workspace(req.ws.ID).Channels.List(req.ctx)
	if err != nil {
		return err
	}
	specs := map[string]messaging.ChannelSpec{}
	for _, spec := range h.svc.ChannelSpecs() {
		specs[spec.Name] = spec
	}
	var list []*channelView
	for _, st := range states {
		v := channelViewOf(st, specs[st.Channel])
		if st.Channel == posted && p.Form.Has("throughput") {
			// The throughput form was sent: its value and error.
			v.Throughput, v.ThroughputError = p.Form.Get("throughput"), p.Errors["throughput"]
			list = append(list, v)
			continue
		}
		v.Posted = st.Channel == posted
		for i := range v.Fields {
			in := &v.Fields[i]
			in.ID = st.Channel + "-" + in.Name
			if v.Posted {
				// The form's values were sent without the token.
				in.Value, in.Error = p.Form.Get(in.Name), p.Errors[in.Name]
			}
		}
		list = append(list, v)
	}
	return h.renderData(w, r, status, "channels", p, list)
}

// channelViewOf is the view of the state st of the channel spec
// describes, with the inputs of its form.
func channelViewOf(st *messaging.ChannelState, spec messaging.ChannelSpec) *channelView {
	v := &channelView{State: st, Title: cmp.Or(spec.Label, spec.Name), AccountLabel: spec.Account.Label,
		OwnerLabel: spec.Owner.Label, Display: spec.Display.Name != "", Templates: spec.Name == messaging.ChannelWhatsApp}
	v.Fields = []chInput{{Name: spec.Account.Name, Label: spec.Account.Label, Hint: spec.Account.Hint, Type: "text"}}
	if spec.Owner.Name != "" {
		v.Fields = append(v.Fields, chInput{Name: spec.Owner.Name, Label: spec.Owner.Label, Hint: spec.Owner.Hint, Type: "text"})
	}
	if spec.Display.Name != "" {
		v.Fields = append(v.Fields, chInput{Name: spec.Display.Name, Label: spec.Display.Label, Hint: spec.Display.Hint, Type: "tel"})
	}
	v.Fields = append(v.Fields, chInput{Name: "access_token", Label: "Access token", Hint: "Paste the token; it is not shown again.", Type: "password"})
	if c := st.Connection; c != nil && c.Status != record.ConnectionDisconnected {
		v.OwnerID, v.TemplatesSyncedAt, v.TemplateSyncError = c.WABAID, c.TemplatesSyncedAt, c.TemplateSyncError
		v.Limits, v.Throughput = true, strconv.Itoa(c.EffectiveThroughput())
		v.QualityRating, v.MessagingTier, v.QualityChangedAt, v.TierChangedAt = c.QualityRating, c.MessagingTier, c.QualityChangedAt, c.TierChangedAt
	}
	return v
}

// putChannel connects a channel or replaces its credentials with the
// form's, through Channels.Connect (the rules of PUT
// /v1/channels/{channel}). The form's fields are read by the names the
// channels' specs give them.
func (h *Handler) putChannel(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	channel := r.PathValue("channel")
	f := r.PostForm
	creds := &messaging.ChannelCredentials{Fields: map[string]string{}, AccessToken: f.Get("access_token")}
	for _, spec := range h.svc.ChannelSpecs() {
		for _, fd := range []messaging.ChannelField{spec.Account, spec.Owner, spec.Display} {
			if v := strings.TrimSpace(f.Get(fd.Name)); fd.Name != "" && v != "" {
				creds.Fields[fd.Name] = v
			}
		}
	}
	st, err := h.svc.Workspace(req.ws.ID).Channels.Connect(req.ctx, channel, creds)
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
	if st.Status == record.ConnectionPending {
		h.flash(w, "Channel "+st.Channel+" saved (token ending in "+st.TokenHint+") but not verified yet: "+st.Error+".")
	} else {
		h.flash(w, "Channel "+st.Channel+" connected (token ending in "+st.TokenHint+"), verified with the provider.")
	}
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/channels", http.StatusSeeOther)
	return nil
}

// verifyChannel asks the provider now whether the channel's stored
// credentials control its account, through Channels.Verify (the
// rules of POST /v1/channels/{channel}/verify), and says the verdict.
func (h *Handler) verifyChannel(w http.ResponseWriter, r *http.Request, req *request) error {
	st, err := h.svc.Workspace(req.ws.ID).Channels.Verify(req.ctx, r.PathValue("channel"))
	switch {
	case messaging.ErrorCode(err) == messaging.CodeServiceUnavailable:
		h.flash(w, "Not verified: "+asError(err).Message+".")
	case err != nil:
		return err
	case st.Status == record.ConnectionConnected:
		h.flash(w, "Channel "+st.Channel+" verified with the provider: connected.")
	default:
		h.flash(w, "Channel "+st.Channel+" is "+st.Status+": "+st.Error+".")
	}
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/channels", http.StatusSeeOther)
	return nil
}

// setThroughput sets the messages per second of a channel's connection
// through Channels.Update (the rules of PATCH /v1/channels/{channel}); a
// value that is not a whole number from 1 to 1000 is shown at the field.
func (h *Handler) setThroughput(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	channel := r.PathValue("channel")
	raw := strings.TrimSpace(r.PostForm.Get("throughput"))
	n, perr := strconv.Atoi(raw)
	var err error
	if perr != nil {
		err = &messaging.Error{Code: messaging.CodeValidation, Field: "throughput",
			Message: fmt.Sprintf("throughput: must be a whole number of messages per second from %d to %d", record.MinThroughput, record.MaxThroughput)}
	} else {
		_, err = h.svc.Workspace(req.ws.ID).Channels.Update(req.ctx, channel, &messaging.ChannelUpdate{Throughput: &n})
	}
	if err != nil {
		p := &page{Form: url.Values{"throughput": {raw}}}
		if messaging.ErrorCode(err) == messaging.CodeNotFound || !p.fieldError(err) {
			return err
		}
		return h.renderChannels(w, r, req, p, channel, http.StatusUnprocessableEntity)
	}
	h.flash(w, fmt.Sprintf("Channel %s now sends up to %d messages per second.", channel, n))
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/channels", http.StatusSeeOther)
	return nil
}

// disconnectChannel disconnects a channel through Channels.Disconnect.
func (h *Handler) disconnectChannel(w http.ResponseWriter, r *http.Request, req *request) error {
	st, err := h.svc.Workspace(req.ws.ID).Channels.Disconnect(req.ctx, r.PathValue("channel"))
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
