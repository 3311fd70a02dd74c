package client_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/httpapi"
)

// routeRecorder is a RoundTripper that names the route of each request by
// matching it against the route table.
type routeRecorder struct {
	mu   sync.Mutex
	mux  *http.ServeMux
	seen map[string]bool
}

func newRouteRecorder() *routeRecorder {
	r := &routeRecorder{mux: http.NewServeMux(), seen: map[string]bool{}}
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, rt := range append(httpapi.Routes(), httpapi.OperatorRoutes()...) {
		r.mux.Handle(rt.Name(), nop)
	}
	for _, p := range httpapi.SMSRoutes() {
		r.mux.Handle("POST "+p, nop)
	}
	return r
}

func (r *routeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	_, pattern := r.mux.Handler(req)
	r.mu.Lock()
	r.seen[pattern] = true
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// TestEveryRoute: the client's methods together call every route of the
// route table (workspace, operator and SMS routes) but the two public
// documents, so a route added to httpapi without a method fails here.
func TestEveryRoute(t *testing.T) {
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = operatorToken })
	ctx := context.Background()
	rec := newRouteRecorder()
	opts := e.options(nil)
	opts.HTTPClient = &http.Client{Transport: rec}
	c := e.client(t, e.A.Key, opts)
	for _, m := range methods(e) {
		_, _ = m.call(ctx, c, e.A)
	}
	_, _ = c.AuditEvents.List(ctx, nil)
	for range c.Conversations.AllMessages(ctx, e.A.Message.ConversationID, nil) {
	}
	a, err := client.NewAdmin(e.srv.URL, operatorToken, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = a.CreateWorkspace(ctx, &client.WorkspaceCreateParams{})
	_, _ = a.ListWorkspaces(ctx, nil)
	_, _ = a.GetWorkspace(ctx, "ws_a")
	_, _ = a.UpdateWorkspace(ctx, "ws_a", &client.WorkspaceUpdateParams{})
	_, _ = a.CreateAPIKey(ctx, "ws_a", &client.APIKeyCreateParams{})
	_, _ = a.ClearOptOut(ctx, "ws_a", &client.OptInParams{})
	_, _ = a.CreateSMSAccount(ctx, &client.SMSAccountCreateParams{})
	_, _ = a.GetSMSAccount(ctx, smsPartner)
	_, _ = a.ApproveSender(ctx, smsPartner, "SHOP")
	_, _ = a.EndAllSessions(ctx)
	_, _ = a.TopUp(ctx, smsPartner, client.Credits(1), "INV-9")
	_, _ = a.Ledger(ctx, smsPartner, nil)
	_, _ = a.SetSMSCallback(ctx, smsPartner, &client.SMSCallbackParams{})
	_, _ = a.GetSMSCallback(ctx, smsPartner)
	_, _ = a.LinkSMSAccount(ctx, "ws_a", smsPartner)
	_, _ = a.WorkspaceSMSAccounts(ctx, "ws_a")
	_, _ = a.UnlinkSMSAccount(ctx, "ws_a", smsPartner)
	s, err := client.NewSMS(e.srv.URL, smsPartner, smsKey, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.Send(ctx, &client.SMSSendParams{})
	_, _ = s.Bulk(ctx, &client.SMSBulkParams{Items: []*client.SMSBulkItem{{}}})
	_, _ = s.DeliveryReport(ctx, &client.SMSReportParams{MessageID: "1"})
	_, _ = s.Balance(ctx)

	var want, got []string
	for _, rt := range append(httpapi.Routes(), httpapi.OperatorRoutes()...) {
		if rt.Pattern != "/v1/openapi.json" && rt.Pattern != "/v1/errors/{code}" {
			want = append(want, rt.Name())
		}
	}
	for _, p := range httpapi.SMSRoutes() {
		want = append(want, "POST "+p)
	}
	for p := range rec.seen {
		got = append(got, p)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes called (-route table +client):\n%s", diff)
	}
}
