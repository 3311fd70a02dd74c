package dashboard

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/mediadownload"
	"github.com/ujumbe/messaging/record"
)

// messagesPageSize is the number of messages on a page of the log.
const messagesPageSize = 50

// messageFilters are the filter fields of the message log, named like the
// fields of the library's validation errors so that an error lands next
// to its field.
// limit, the page size, is not offered in the form but kept in the links.
var messageFilters = []string{"status", "channel", "direction", "to", "created_after", "created_before", "limit"}

// messagesData is the message log page.
type messagesData struct {
	Items []*messaging.Message
	// Next is the URL of the next page, empty on the last page.
	Next string
	// First is the URL of the first page with the same filters, empty
	// when this is the first page.
	First    string
	Statuses []string
	Channels []string
}

// utcLayouts are the layouts a time field of a form takes, read as UTC
// on a 24-hour clock: "2026-11-24 10:30" (as the fields show times), with
// seconds or a "T" (a datetime-local value) too, or RFC 3339.
var utcLayouts = []string{"2006-01-02 15:04", formTimeLayout, "2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano}

// formTimeLayout is how a form shows a time: UTC, 24-hour, to the second.
const formTimeLayout = "2006-01-02 15:04:05"

// parseUTC reads a time field's value (see utcLayouts).
func parseUTC(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range utcLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseTimeField reads the time field of a form, field, as parseUTC does,
// or refuses it naming the field.
func parseTimeField(field, s string) (time.Time, error) {
	if t, ok := parseUTC(s); ok {
		return t, nil
	}
	return time.Time{}, &messaging.Error{Code: messaging.CodeValidation, Field: field, Path: record.FieldPath(field),
		Message: field + ": must be a date and time (UTC, 24-hour) such as 2026-11-24 14:30 (got \"" + clipText(strings.TrimSpace(s), 40) + "\")"}
}

// clipText shortens s to at most n runes for an error message.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// messages is the message log: filters, newest first, cursor paging.
func (h *Handler) messages(w http.ResponseWriter, r *http.Request, req *request) error {
	q := r.URL.Query()
	form := url.Values{}
	for _, f := range messageFilters {
		if v := strings.TrimSpace(q.Get(f)); v != "" {
			form.Set(f, v)
		}
	}
	d := &messagesData{Statuses: []string{messaging.StatusQueued, messaging.StatusSent, messaging.StatusDelivered,
		messaging.StatusRead, messaging.StatusFailed, messaging.StatusCanceled}, Channels: h.svc.Channels()}
	p := &page{Title: "Messages", Nav: "messages", Form: form, Data: d}
	p.fill(h, req)
	mq := &messaging.MessageQuery{Status: form.Get("status"), Channel: form.Get("channel"),
		Direction: form.Get("direction"), To: form.Get("to"), Cursor: q.Get("cursor"), Limit: messagesPageSize}
	var err error
	if v := form.Get("limit"); v != "" {
		if mq.Limit, err = strconv.Atoi(v); err != nil {
			mq.Limit = -1 // the library names the field and its range
		}
		err = nil
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"created_after", &mq.CreatedAfter}, {"created_before", &mq.CreatedBefore}} {
		if v := form.Get(f.name); v != "" && err == nil {
			*f.dst, err = parseTimeField(f.name, v)
		}
	}
	var list *messaging.MessagePage
	if err == nil {
		list, err = req.svc.Messages.List(req.ctx, mq)
	}
	if err != nil {
		if !p.fieldError(err) {
			return err
		}
		h.render(w, r, http.StatusBadRequest, "messages", p)
		return nil
	}
	d.Items = list.Items
	base := h.prefix + "w/" + url.PathEscape(req.ws.ID) + "/messages"
	if list.NextCursor != "" {
		next := cloneValues(form)
		next.Set("cursor", list.NextCursor)
		d.Next = base + "?" + next.Encode()
	}
	if mq.Cursor != "" {
		d.First = base
		if len(form) > 0 {
			d.First += "?" + form.Encode()
		}
	}
	h.render(w, r, http.StatusOK, "messages", p)
	return nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// timelineEntry is one step of a message's timeline.
type timelineEntry struct {
	Status string
	At     time.Time
	// Reason is the failure reason of a failed step.
	Reason string
}

// messageData is the page of one message.
type messageData struct {
	Msg      *messaging.Message
	Timeline []timelineEntry
	// Final is set once the message's status can no longer change on its
	// own (read, failed, canceled, or an inbound message): the page stops
	// updating.
	Final bool
	// SendAt is when a scheduled message is to be handed over; zero for
	// one sent at once.
	SendAt time.Time
	// Cancellable is set while the message can be canceled (Messages.Cancel):
	// outbound, queued, and no worker has begun to hand it over.
	Cancellable bool
	// Quoted is the message an outbound message quotes
	// (Outbound.Context), nil when it names none of the workspace's.
	Quoted *messaging.Message
	// ReactedTo is the message an outbound reaction is to, nil when it
	// names none of the workspace's.
	ReactedTo *messaging.Message
}

// message is the page of one message: its fields and its timeline.
func (h *Handler) message(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.renderMessage(w, r, req, &page{}, r.PathValue("id"), http.StatusOK)
}

// renderMessage renders the page of message id with status: its fields,
// what the recipient sees of an outbound one, its timeline.
func (h *Handler) renderMessage(w http.ResponseWriter, r *http.Request, req *request, p *page, id string, status int) error {
	m, err := req.svc.Messages.Get(req.ctx, id)
	if err != nil {
		return err
	}
	d := &messageData{Msg: m, Timeline: []timelineEntry{{Status: "accepted", At: m.CreatedAt}},
		Final: m.Status == messaging.StatusRead || m.Status == messaging.StatusFailed || m.Status == messaging.StatusCanceled ||
			m.Direction == record.DirectionInbound,
		Cancellable: m.Direction == record.DirectionOutbound && m.Status == messaging.StatusQueued && m.LeaseOwner == "" && m.UnconfirmedSince == nil}
	if m.SendAt != nil {
		d.SendAt = *m.SendAt
	}
	if m.Direction == record.DirectionInbound {
		d.Timeline[0].Status = "received"
	}
	if f := m.Fallback; f != nil && d.Final && (f.Status == messaging.SMSFallbackPending || f.Status == messaging.SMSFallbackQueued || f.Status == messaging.SMSFallbackSent) {
		d.Final = false // the SMS fallback may still change
	}
	for _, c := range m.History {
		e := timelineEntry{Status: c.Status, At: c.At}
		if c.Status == messaging.StatusFailed {
			e.Reason = m.FailureReason
		}
		d.Timeline = append(d.Timeline, e)
	}
	if o := m.Outbound; o != nil {
		if o.Context != nil {
			d.Quoted = h.referenced(req, o.Context.MessageID)
		}
		if o.Reaction != nil {
			d.ReactedTo = h.referenced(req, o.Reaction.MessageID)
		}
	}
	p.Title, p.Nav, p.Data = "Message "+m.ID, "messages", d
	p.fill(h, req)
	h.render(w, r, status, "messagepage", p)
	return nil
}

// referenced reads the message id of the workspace that a message quotes
// or reacts to, for its page to show a line of it; nil when id is empty
// or the message cannot be read (the page then shows the id alone).
func (h *Handler) referenced(req *request, id string) *messaging.Message {
	if id == "" {
		return nil
	}
	m, err := req.svc.Messages.Get(req.ctx, id)
	if err != nil {
		return nil
	}
	return m
}

// markRead marks an inbound message read at the provider
// (Messages.MarkRead, as POST /v1/messages/{id}/read does) and goes back
// to its page; the library's refusal is shown on the page.
func (h *Handler) markRead(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	id := r.PathValue("id")
	m, err := req.svc.Messages.MarkRead(req.ctx, id, nil)
	if err != nil {
		var e *messaging.Error
		if !errors.As(err, &e) || e.Code == messaging.CodeNotFound || e.Code == messaging.CodeInternal {
			return err
		}
		status := http.StatusUnprocessableEntity
		switch e.Code {
		case messaging.CodeChannelUnavailable, messaging.CodeServiceUnavailable:
			status = http.StatusServiceUnavailable
		case messaging.CodeConflict, messaging.CodeForbidden:
			status = http.StatusConflict
		}
		return h.renderMessage(w, r, req, &page{Problem: e.Message}, id, status)
	}
	h.flash(w, "Message marked read"+when(m.ReadAt)+".")
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/messages/"+url.PathEscape(m.ID), http.StatusSeeOther)
	return nil
}

// cancelMessage cancels a queued outbound message (Messages.Cancel, as
// POST /v1/messages/{id}/cancel does) and goes back to its page; a
// message that can no longer be canceled is shown with the reason (409).
func (h *Handler) cancelMessage(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	id := r.PathValue("id")
	m, err := req.svc.Messages.Cancel(req.ctx, id)
	if err != nil {
		var e *messaging.Error
		if !errors.As(err, &e) || e.Code == messaging.CodeNotFound || e.Code == messaging.CodeInternal {
			return err
		}
		status := http.StatusConflict
		if e.Code == messaging.CodeServiceUnavailable {
			status = http.StatusServiceUnavailable
		}
		return h.renderMessage(w, r, req, &page{Problem: e.Message}, id, status)
	}
	h.flash(w, "Message canceled: it will not be sent.")
	http.Redirect(w, r, h.prefix+"w/"+req.ws.ID+"/messages/"+url.PathEscape(m.ID), http.StatusSeeOther)
	return nil
}

// when is " at <t>" for a read mark's time, "" without one.
func when(t *time.Time) string {
	if t == nil {
		return ""
	}
	return " at " + t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// messageMedia downloads the media of an inbound message through the
// service (Messages.Media, as GET /v1/messages/{id}/media does): the
// provider's token never reaches the browser.
func (h *Handler) messageMedia(w http.ResponseWriter, r *http.Request, req *request) error {
	media, err := req.svc.Messages.Media(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	defer media.Body.Close()
	mediadownload.Header(w.Header(), media) // X-Content-Type-Options as ServeHTTP sets it on every page
	if _, err := io.Copy(w, media.Body); err != nil {
		h.log.WarnContext(r.Context(), "dashboard: a media download was cut off", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}
