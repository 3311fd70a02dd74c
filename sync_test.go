package messaging_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// listingProvider is a provider whose account holds list; it sends
// nothing. Submissions are answered PENDING with the next id, or with
// submitErr.
type listingProvider struct {
	verifies
	metaChannels
	mu        sync.Mutex
	list      []*messaging.ProviderTemplate
	listErr   error
	submitErr error
	// answer, when set, is the provider's answer to a submission.
	answer    *messaging.ProviderTemplate
	submitted []string
	deleted   []string
	lists     int
}

func (p *listingProvider) Send(context.Context, *messaging.ChannelSender, *messaging.Message) (*messaging.SendReceipt, error) {
	return nil, errors.New("not sending")
}

func (p *listingProvider) SubmitTemplate(_ context.Context, _ *messaging.ChannelSender, t *messaging.Template) (*messaging.ProviderTemplate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.submitted = append(p.submitted, t.Name)
	if p.submitErr != nil {
		return nil, p.submitErr
	}
	if p.answer != nil {
		a := *p.answer
		return &a, nil
	}
	return &messaging.ProviderTemplate{ID: "sub-" + t.Name, Status: "PENDING"}, nil
}

func (p *listingProvider) DeleteTemplate(_ context.Context, _ *messaging.ChannelSender, t *messaging.Template) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted = append(p.deleted, t.Name)
	return nil
}

func (p *listingProvider) ListTemplates(_ context.Context, s *messaging.ChannelSender) ([]*messaging.ProviderTemplate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lists++
	if s == nil || s.WABAID != "5555" || s.AccessToken != "EAAGtoken1" {
		return nil, errors.New("listed without the connection's sender")
	}
	return p.list, p.listErr
}

// syncFixture is a Service on a listingProvider with acme's WhatsApp
// connected (WABA 5555).
func syncFixture(t *testing.T) (*lifeFixture, *listingProvider) {
	t.Helper()
	prov := &listingProvider{}
	return connectedFixture(t, prov), prov
}

func ptpl(id, name, status string) *messaging.ProviderTemplate {
	return &messaging.ProviderTemplate{ID: id, Name: name, Language: "en", Category: "UTILITY", Status: status,
		Components: []messaging.TemplateComponent{body("Hello from " + name)}}
}

func names(ts []*messaging.Template) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name+":"+t.Status)
	}
	sort.Strings(out)
	return out
}

func TestSyncTemplates(t *testing.T) {
	t.Parallel()
	f, prov := syncFixture(t)
	ts := f.svc.Workspace("acme").Templates
	// Local state: an approved template the provider paused since, one
	// it deleted, a draft, and a pending one it never received.
	for _, p := range []*messaging.TemplateCreateParams{approved("paused_there", body("Hi")), approved("deleted_there", body("Hi")),
		{Name: "my_draft", Category: "UTILITY", Language: "en", Status: "draft", Components: []messaging.TemplateComponent{body("Hi")}}} {
		if _, err := ts.Create(f.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	prov.submitErr = errors.New("connection refused")
	lost, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "never_arrived", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Hi")}})
	if err != nil || lost.Status != record.TemplatePending || lost.ProviderTemplateID != "" {
		t.Fatalf("create with the provider down = %+v, %v; want pending without provider id", lost, err)
	}
	prov.submitErr = nil
	paused := ptpl("11", "paused_there", "PAUSED")
	paused.Reason = "LOW_QUALITY"
	prov.list = []*messaging.ProviderTemplate{ptpl("10", "made_in_manager", "APPROVED"), paused, ptpl("12", "under_review", "PENDING"),
		ptpl("13", "my_draft", "APPROVED"), ptpl("14", "going_away", "PENDING_DELETION")}
	f.clock.Advance(2 * time.Minute)
	res, err := f.svc.SyncTemplates(f.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	want := messaging.TemplateSyncResult{Listed: 5, Created: 2, Updated: 1, Removed: 1, Resubmitted: 1}
	if *res != want {
		t.Errorf("sync result = %+v, want %+v", *res, want)
	}
	all, err := f.store.TemplateList(f.ctx, &driver.TemplateListParams{WorkspaceID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"made_in_manager:approved", "my_draft:draft", "never_arrived:pending", "paused_there:paused", "under_review:pending"}
	if got := names(all); !slices.Equal(got, wantNames) {
		t.Errorf("templates after sync = %v, want %v", got, wantNames)
	}
	for _, tp := range all {
		if tp.Name == "paused_there" && tp.StatusReason != "LOW_QUALITY" {
			t.Errorf("paused_there reason %q", tp.StatusReason)
		}
		if tp.Name == "never_arrived" && tp.ProviderTemplateID != "sub-never_arrived" {
			t.Errorf("never_arrived was not handed over again: %+v", tp)
		}
	}
	list, _ := ts.List(f.ctx, nil)
	if got := names(list); !slices.Equal(got, []string{"made_in_manager:approved"}) {
		t.Errorf("approved list = %v", got)
	}
	c, _ := connection(f.ctx, f.svc, "acme", "whatsapp")
	if c.TemplatesSyncedAt == nil || !c.TemplatesSyncedAt.Equal(f.clock.Now()) || c.TemplateSyncError != "" {
		t.Errorf("connection sync record = %v %q", c.TemplatesSyncedAt, c.TemplateSyncError)
	}

	// A failed sync keeps the cached list and is recorded.
	prov.list, prov.listErr = nil, &messaging.SendError{Code: "2", Text: "Service temporarily unavailable", Retryable: true}
	f.clock.Advance(time.Hour)
	if _, err := f.svc.SyncTemplates(f.ctx, "acme"); messaging.ErrorCode(err) != messaging.CodeServiceUnavailable {
		t.Errorf("failed sync: %v, want service_unavailable", err)
	}
	after, _ := f.store.TemplateList(f.ctx, &driver.TemplateListParams{WorkspaceID: "acme"})
	if got := names(after); !slices.Equal(got, wantNames) {
		t.Errorf("templates after a failed sync = %v, want them kept: %v", got, wantNames)
	}
	c, _ = connection(f.ctx, f.svc, "acme", "whatsapp")
	if c.TemplateSyncError == "" || c.TemplatesSyncedAt == nil {
		t.Errorf("failed sync not recorded: %v %q", c.TemplatesSyncedAt, c.TemplateSyncError)
	}
}

func TestSyncTemplatesOneInstanceAtATime(t *testing.T) {
	t.Parallel()
	prov := &listingProvider{}
	f := connectedFixture(t, prov)
	// Another instance holds the account's lease.
	held, err := f.store.LeaseAcquire(f.ctx, &driver.LeaseParams{Name: "template-sync:5555", Owner: "other-instance", Now: f.clock.Now(), Until: f.clock.Now().Add(time.Minute)})
	if err != nil || !held {
		t.Fatal(held, err)
	}
	_, err = f.svc.SyncTemplates(f.ctx, "acme")
	wantError(t, err, messaging.CodeConflict, "waba_id")
	if prov.lists != 0 {
		t.Errorf("listed %d times while another instance synced", prov.lists)
	}
	f.clock.Advance(time.Minute)
	if _, err := f.svc.SyncTemplates(f.ctx, "acme"); err != nil {
		t.Errorf("sync after the other lease expired: %v", err)
	}
	// Without a WABA connection there is nothing to sync.
	_, err = f.svc.SyncTemplates(f.ctx, "other")
	wantError(t, err, messaging.CodeChannelUnavailable, "channel")
}
