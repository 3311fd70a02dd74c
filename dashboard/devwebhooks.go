package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"

	"github.com/ujumbe/messaging"
)

// The page of one webhook endpoint (Settings -> Developers): its settings,
// enable and disable, rotating its secret, a test event, deleting it, and
// its delivery log with a redeliver button per delivery.

// devDeliveryPage is the number of deliveries per page of the log.
const devDeliveryPage = 25

// devEndpointData is the page of a webhook endpoint.
type devEndpointData struct {
	Endpoint *messaging.WebhookEndpoint
	// Why says why the endpoint is disabled.
	Why    string
	Events []devChoice
	// Deliveries are a page of the delivery log, newest first; Cursor is
	// the page's cursor (empty on the first) and Next the next page's.
	Deliveries   []devDelivery
	Cursor, Next string
	// Created is set on the answer to the form creating the endpoint,
	// Rotated on the answer to a rotation: page.Secret is then the new
	// secret.
	Created, Rotated bool
	// Overlap is how long the replaced secret keeps signing after a
	// rotation.
	Overlap string
	// Test is the outcome of the test event just sent.
	Test *messaging.WebhookTestResult
	// TestOK is set when the test event was answered 2xx.
	TestOK bool
}

// devDelivery is a delivery of the log with its id in the API.
type devDelivery struct {
	*messaging.WebhookDelivery
	ID string
	// Note is the last error, unless it only repeats the status code.
	Note string
}

// endpointURL is the path of the page of endpoint id.
func (h *Handler) endpointURL(req *request, id string) string {
	return h.devURL(req, "/webhooks/"+url.PathEscape(id))
}

// devEndpoint shows an endpoint of the workspace; another workspace's is
// not found.
func (h *Handler) devEndpoint(w http.ResponseWriter, r *http.Request, req *request) error {
	e, err := req.svc.Webhooks.Get(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.renderEndpoint(w, r, req, &page{}, e, &devEndpointData{Cursor: r.URL.Query().Get("cursor")}, http.StatusOK)
}

func (h *Handler) renderEndpoint(w http.ResponseWriter, r *http.Request, req *request, p *page, e *messaging.WebhookEndpoint, d *devEndpointData, status int) error {
	p.Title, p.Nav = "Webhook endpoint", "developers"
	p.fill(h, req)
	list, next, err := req.svc.Webhooks.Deliveries(req.ctx, e.ID, d.Cursor, devDeliveryPage)
	if err != nil {
		return err
	}
	d.Endpoint, d.Why, d.Events, d.Next = e, devDisabledWhy(e), devEventTypes(), next
	d.TestOK = d.Test != nil && d.Test.Error == "" && d.Test.StatusCode >= 200 && d.Test.StatusCode < 300
	d.Overlap = strconv.Itoa(int(defaults.WebhookSecretOverlap/time.Hour)) + " hours"
	for _, x := range list {
		note := x.LastError
		if x.LastStatus != 0 && note == "endpoint answered "+strconv.Itoa(x.LastStatus) {
			note = ""
		}
		d.Deliveries = append(d.Deliveries, devDelivery{x, messaging.WebhookDeliveryID(x), note})
	}
	if p.Form == nil {
		p.Form = url.Values{"url": {e.URL}, "events": e.Events, "description": {e.Description}}
	}
	return h.renderData(w, r, status, "webhook", p, d)
}

// devEndpointAction runs act on the endpoint of the path and answers the
// endpoint's page: with the error when act fails with one the library
// explains (422 for a field, 409 for a conflict), else a flash and a 303
// back to the page.
func (h *Handler) devEndpointAction(w http.ResponseWriter, r *http.Request, req *request, act func(id string) (string, error)) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	id := r.PathValue("id")
	e, err := req.svc.Webhooks.Get(req.ctx, id)
	if err != nil {
		return err
	}
	msg, err := act(id)
	if err != nil {
		p := &page{}
		if !p.fieldError(err) || messaging.ErrorCode(err) == messaging.CodeNotFound {
			return err
		}
		status := http.StatusConflict
		if messaging.ErrorCode(err) == messaging.CodeValidation {
			status = http.StatusUnprocessableEntity
		}
		if len(p.Errors) > 0 {
			p.Form = r.PostForm
		}
		return h.renderEndpoint(w, r, req, p, e, &devEndpointData{}, status)
	}
	h.flash(w, msg)
	to := h.endpointURL(req, id)
	if c := r.PostForm.Get("cursor"); c != "" {
		to += "?cursor=" + url.QueryEscape(c)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// devEditEndpoint changes an endpoint's URL, events and description.
func (h *Handler) devEditEndpoint(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.devEndpointAction(w, r, req, func(id string) (string, error) {
		f := r.PostForm
		u, desc, events := strings.TrimSpace(f.Get("url")), strings.TrimSpace(f.Get("description")), f["events"]
		if events == nil {
			events = []string{}
		}
		_, err := req.svc.Webhooks.Update(req.ctx, id, &messaging.WebhookUpdateParams{
			URL: &u, Events: &events, Description: &desc})
		return "Webhook endpoint saved.", err
	})
}

// devSetEndpointEnabled enables or disables an endpoint (form field
// enabled: "true" or "false").
func (h *Handler) devSetEndpointEnabled(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.devEndpointAction(w, r, req, func(id string) (string, error) {
		on, err := strconv.ParseBool(r.PostForm.Get("enabled"))
		if err != nil {
			return "", &messaging.Error{Code: messaging.CodeValidation, Message: "enabled: must be true or false"}
		}
		if _, err := req.svc.Webhooks.Update(req.ctx, id, &messaging.WebhookUpdateParams{Enabled: &on}); err != nil {
			return "", err
		}
		if on {
			return "Webhook endpoint enabled: new events are delivered to it again.", nil
		}
		return "Webhook endpoint disabled: it gets no new events, and its pending deliveries were failed.", nil
	})
}

// devRedeliver queues a delivery of the endpoint again.
func (h *Handler) devRedeliver(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.devEndpointAction(w, r, req, func(id string) (string, error) {
		d, err := req.svc.Webhooks.Redeliver(req.ctx, id, r.PathValue("delivery"))
		if err != nil {
			return "", err
		}
		return "Delivery " + messaging.WebhookDeliveryID(d) + " (" + d.EventType + ") is queued again.", nil
	})
}

// devRotateSecret gives an endpoint a new signing secret and answers its
// page showing the secret this once.
func (h *Handler) devRotateSecret(w http.ResponseWriter, r *http.Request, req *request) error {
	e, secret, err := req.svc.Webhooks.RotateSecret(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.renderEndpoint(w, r, req, &page{Secret: secret}, e, &devEndpointData{Rotated: true}, http.StatusOK)
}

// devTestEndpoint sends a webhook.test event to an endpoint now and
// answers its page with the receiver's answer.
func (h *Handler) devTestEndpoint(w http.ResponseWriter, r *http.Request, req *request) error {
	id := r.PathValue("id")
	res, err := req.svc.Webhooks.Test(req.ctx, id)
	if err != nil {
		return err
	}
	e, err := req.svc.Webhooks.Get(req.ctx, id)
	if err != nil {
		return err
	}
	return h.renderEndpoint(w, r, req, &page{}, e, &devEndpointData{Test: res}, http.StatusOK)
}

// devDeleteEndpoint deletes an endpoint and its deliveries.
func (h *Handler) devDeleteEndpoint(w http.ResponseWriter, r *http.Request, req *request) error {
	e, err := req.svc.Webhooks.Delete(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	h.flash(w, "Webhook endpoint "+e.URL+" deleted.")
	http.Redirect(w, r, h.devURL(req, "#webhooks"), http.StatusSeeOther)
	return nil
}
