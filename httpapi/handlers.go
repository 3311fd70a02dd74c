package httpapi

import (
	"context"
	"net/http"
	"reflect"
	"strconv"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// The handlers of the /v1 routes (see endpoints). Each decodes the request,
// calls one method of the library and encodes its answer; an error it
// returns is answered by writeError.

func (h *Handler) sendMessage(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return send(h, w, r, &sendRequest{}, h.svc.Workspace(p.WorkspaceID).Messages.Send)
}

func (h *Handler) sendTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return send(h, w, r, &sendTemplateRequest{}, h.svc.Workspace(p.WorkspaceID).Messages.SendTemplate)
}

// send serves a send: the body decoded into body, whose params go to fn. It
// answers 201 with the result, and the header Idempotent-Replayed: true
// when the result is that of an earlier request with the same key.
func send[P any](h *Handler, w http.ResponseWriter, r *http.Request, body requestBody[P], fn func(context.Context, *P) (*messaging.SendResult, error)) error {
	params, err := decodeParams(h, w, r, body)
	if err != nil {
		return err
	}
	res, err := fn(r.Context(), params)
	if err != nil {
		return err
	}
	if res.Replayed {
		w.Header().Set(headerReplayed, "true")
	}
	writeJSON(w, http.StatusCreated, sendResultView(res))
	return nil
}

func (h *Handler) getMessage(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return getByID(w, r, h.svc.Workspace(p.WorkspaceID).Messages.Get, messageView)
}

// getByID answers a GET of the record named by the path's {id}: get reads
// it from the workspace, view is its JSON form.
func getByID[T, V any](w http.ResponseWriter, r *http.Request, get func(context.Context, string) (T, error), view func(T) V) error {
	if err := noQuery(r); err != nil {
		return err
	}
	return answer(w, http.StatusOK, view)(get(r.Context(), r.PathValue("id")))
}

// answer returns the tail of a handler that answers one record: given the
// record and the error of the call that made it, it returns the error, or
// writes view(rec) with status and returns nil. Written around the call,
// answer(w, status, view)(call(...)), it keeps each handler to its request
// and its call.
func answer[T, V any](w http.ResponseWriter, status int, view func(T) V) func(rec T, err error) error {
	return func(rec T, err error) error {
		if err != nil {
			return err
		}
		writeJSON(w, status, view(rec))
		return nil
	}
}

// viewEach returns the view of a list made of view's: an empty list, never
// null, for none.
func viewEach[T, V any](view func(T) V) func([]T) []V {
	return func(list []T) []V {
		out := make([]V, len(list))
		for i, rec := range list {
			out[i] = view(rec)
		}
		return out
	}
}

func (h *Handler) listTemplates(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := query(r, "status", "category", "language")
	if err != nil {
		return err
	}
	// The library checks that p may list the status asked for
	// (manage:templates for any state but approved).
	list, err := h.svc.Workspace(p.WorkspaceID).Templates.List(r.Context(), &messaging.TemplateFilter{
		Status: q["status"], Category: q["category"], Language: q["language"], Caller: p})
	return answer(w, http.StatusOK, viewEach(templateView))(list, err)
}

func (h *Handler) getTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return getByID(w, r, h.svc.Workspace(p.WorkspaceID).Templates.Get, templateView)
}

func (h *Handler) createTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &templateCreateRequest{})
	if err != nil {
		return err
	}
	return answer(w, http.StatusCreated, templateView)(h.svc.Workspace(p.WorkspaceID).Templates.Create(r.Context(), params))
}

func (h *Handler) updateTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &templatePatch{})
	if err != nil {
		return err
	}
	return answer(w, http.StatusOK, templateView)(h.svc.Workspace(p.WorkspaceID).Templates.Patch(r.Context(), r.PathValue("id"), params))
}

func (h *Handler) submitTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := h.decodeEmpty(w, r); err != nil {
		return err
	}
	return answer(w, http.StatusOK, templateView)(h.svc.Workspace(p.WorkspaceID).Templates.Submit(r.Context(), r.PathValue("id")))
}

func (h *Handler) deleteTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := h.svc.Workspace(p.WorkspaceID).Templates.Delete(r.Context(), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deletedJSON{ID: id, Deleted: true})
	return nil
}

func (h *Handler) syncTemplates(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := h.decodeEmpty(w, r); err != nil {
		return err
	}
	res, err := h.svc.SyncTemplates(r.Context(), p.WorkspaceID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, templateSyncJSON(*res))
	return nil
}

func (h *Handler) listChannels(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	return answer(w, http.StatusOK, viewEach(channelView))(h.svc.Workspace(p.WorkspaceID).Channels.List(r.Context()))
}

func (h *Handler) putChannel(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	body := reflect.New(h.channelPut)
	if err := h.decode(w, r, body.Interface()); err != nil {
		return err
	}
	return answer(w, http.StatusOK, channelView)(h.svc.Workspace(p.WorkspaceID).Channels.Connect(r.Context(), r.PathValue("channel"), channelCredentials(body.Elem())))
}

// channelPatch is the body of PATCH /v1/channels/{channel}: the
// connection's settings to change.
type channelPatch struct {
	Throughput *int `json:"throughput"`
}

func (q *channelPatch) params() (*messaging.ChannelUpdate, error) {
	return &messaging.ChannelUpdate{Throughput: q.Throughput}, nil
}

func (h *Handler) updateChannel(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &channelPatch{})
	if err != nil {
		return err
	}
	return answer(w, http.StatusOK, channelView)(h.svc.Workspace(p.WorkspaceID).Channels.Update(r.Context(), r.PathValue("channel"), params))
}

func (h *Handler) verifyChannel(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := h.decodeEmpty(w, r); err != nil {
		return err
	}
	return answer(w, http.StatusOK, channelView)(h.svc.Workspace(p.WorkspaceID).Channels.Verify(r.Context(), r.PathValue("channel")))
}

func (h *Handler) deleteChannel(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	return answer(w, http.StatusOK, channelView)(h.svc.Workspace(p.WorkspaceID).Channels.Disconnect(r.Context(), r.PathValue("channel")))
}

func (h *Handler) listContacts(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := query(r, "page", "limit", "search")
	if err != nil {
		return err
	}
	var cq messaging.ContactQuery
	for _, f := range []struct {
		name string
		dst  *int
		max  int
	}{{"page", &cq.Page, record.MaxPage}, {"limit", &cq.Limit, record.MaxPageSize}} {
		v, ok := q[f.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > f.max {
			return badRequest(f.name, "must be an integer from 1 to %d (got %q)", f.max, v)
		}
		*f.dst = n
	}
	cq.Search = q["search"]
	page, err := h.svc.Workspace(p.WorkspaceID).Contacts.List(r.Context(), &cq)
	if err != nil {
		return err
	}
	items := make([]contactListItem, len(page.Items))
	for i, c := range page.Items {
		items[i] = contactItemView(c)
	}
	writeJSON(w, http.StatusOK, contactPageJSON{Items: items, Total: page.Total, Page: page.Page, Limit: page.Limit, TotalPages: page.TotalPages})
	return nil
}

func (h *Handler) createContact(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &contactCreateRequest{})
	if err != nil {
		return err
	}
	return answer(w, http.StatusCreated, contactView)(h.svc.Workspace(p.WorkspaceID).Contacts.Create(r.Context(), params))
}

func (h *Handler) getContact(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return getByID(w, r, h.svc.Workspace(p.WorkspaceID).Contacts.Get, contactView)
}

func (h *Handler) updateContact(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	params, err := decodeParams(h, w, r, &contactPatch{})
	if err != nil {
		return err
	}
	c, err := h.svc.Workspace(p.WorkspaceID).Contacts.Update(r.Context(), r.PathValue("id"), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, patchedContactView(p, c))
	return nil
}
