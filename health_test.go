package messaging_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// recordEvents returns the events of type typ svc publishes, as a
// function that reads them so far.
func recordEvents(svc *messaging.Service, typ string) func() []*messaging.Event {
	var mu sync.Mutex
	var got []*messaging.Event
	svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		if ev.Type == typ {
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
		}
	})
	return func() []*messaging.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]*messaging.Event(nil), got...)
	}
}

// TestVerificationKeepsHealth: a connection starts at the default
// throughput with the health its verification reported; a later
// verification records a change of either, with when it changed, and new
// credentials keep the throughput set.
func TestVerificationKeepsHealth(t *testing.T) {
	t.Parallel()
	prov := fakeprovider.New()
	f := newLifeFixture(t, prov)
	c, err := connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGtoken1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Throughput != record.DefaultThroughput || c.QualityRating != record.QualityGreen || c.MessagingTier != record.Tier1K ||
		c.QualityChangedAt == nil || !c.QualityChangedAt.Equal(t0) {
		t.Fatalf("connected: throughput %d quality %q (%v) tier %q; want 80 GREEN (at %v) TIER_1K", c.Throughput, c.QualityRating, c.QualityChangedAt, c.MessagingTier, t0)
	}
	prov.SetAccountHealth("1234", record.QualityYellow, record.Tier1K)
	f.clock.Advance(time.Minute)
	st, err := f.svc.Workspace("acme").Channels.Verify(f.ctx, "whatsapp")
	if err != nil {
		t.Fatal(err)
	}
	c = st.Connection
	if c.QualityRating != record.QualityYellow || !c.QualityChangedAt.Equal(t0.Add(time.Minute)) || c.MessagingTier != record.Tier1K || !c.TierChangedAt.Equal(t0) {
		t.Errorf("verified again: quality %q at %v, tier %q at %v; want YELLOW at +1m, TIER_1K at %v", c.QualityRating, c.QualityChangedAt, c.MessagingTier, c.TierChangedAt, t0)
	}
	n := 250
	if _, err := f.svc.Workspace("acme").Channels.Update(f.ctx, "whatsapp", &messaging.ChannelUpdate{Throughput: &n}); err != nil {
		t.Fatal(err)
	}
	c, err = connect(f.ctx, f.svc, waConnect("acme", "1234", "5555", "EAAGtoken2"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Throughput != 250 || c.QualityRating != record.QualityYellow {
		t.Errorf("new credentials: throughput %d quality %q; want 250 (kept) YELLOW", c.Throughput, c.QualityRating)
	}
}

// TestChannelThroughputBounds: Channels.Update takes 1 to 1000 messages per
// second and refuses anything else naming throughput.
func TestChannelThroughputBounds(t *testing.T) {
	t.Parallel()
	f := connectedFixture(t, fakeprovider.New())
	chans := f.svc.Workspace("acme").Channels
	for _, n := range []int{0, -1, 1001} {
		_, err := chans.Update(f.ctx, "whatsapp", &messaging.ChannelUpdate{Throughput: &n})
		wantError(t, err, messaging.CodeValidation, "throughput")
	}
	_, err := chans.Update(f.ctx, "whatsapp", &messaging.ChannelUpdate{})
	wantError(t, err, messaging.CodeValidation, "throughput")
	for _, n := range []int{1, 1000} {
		st, err := chans.Update(f.ctx, "whatsapp", &messaging.ChannelUpdate{Throughput: &n})
		if err != nil || st.Connection.Throughput != n {
			t.Errorf("throughput %d: %+v, %v", n, st, err)
		}
	}
	n := 5
	_, err = f.svc.Workspace("other").Channels.Update(f.ctx, "whatsapp", &messaging.ChannelUpdate{Throughput: &n})
	wantError(t, err, messaging.CodeNotFound, "")
}

// TestApplyChannelQualityEvent: a report changes the connection and is
// announced once; a repeat is not; an unknown account is not_found.
func TestApplyChannelQualityEvent(t *testing.T) {
	t.Parallel()
	f := connectedFixture(t, fakeprovider.New())
	events := recordEvents(f.svc, messaging.EventChannelQualityUpdated)
	ev := &messaging.ChannelQualityEvent{OwnerID: "5555", Event: "DOWNGRADE", MessagingTier: "tier_250"}
	for range 2 {
		c, err := f.svc.ApplyChannelQualityEvent(f.ctx, ev)
		if err != nil || c.MessagingTier != record.Tier250 || c.QualityRating != record.QualityGreen || c.TokenSealed != nil {
			t.Fatalf("apply: %+v, %v; want TIER_250, GREEN kept, no token", c, err)
		}
	}
	if got := events(); len(got) != 1 || got[0].Data.(messaging.ChannelQualityEventData).PreviousMessagingTier != record.Tier1K {
		t.Errorf("events = %+v, want one from TIER_1K", got)
	}
	_, err := f.svc.ApplyChannelQualityEvent(f.ctx, &messaging.ChannelQualityEvent{AccountID: "999", QualityRating: "RED"})
	wantError(t, err, messaging.CodeNotFound, "")
	_, err = f.svc.ApplyChannelQualityEvent(f.ctx, &messaging.ChannelQualityEvent{AccountID: "1234", QualityRating: "very bad"})
	wantError(t, err, messaging.CodeValidation, "quality_rating")
}

// TestTemplateStatusUpdatedOncePerChange: the fake's review (approved),
// a pause, its repeat and a quality change are announced as
// template.status_updated once per change.
func TestTemplateStatusUpdatedOncePerChange(t *testing.T) {
	t.Parallel()
	f, prov := reviewFixture(t)
	events := recordEvents(f.svc, messaging.EventTemplateStatusUpdated)
	ts := f.svc.Workspace("acme").Templates
	tpl, err := ts.Create(f.ctx, &messaging.TemplateCreateParams{Name: "order_shipped", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Order {{1}} shipped")}})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Second)
	for range 2 {
		if _, err := prov.Flush(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // Meta delivers at least once
		prov.TemplateEvent("acme", "order_shipped", "en", record.ProviderTemplatePaused, "LOW_QUALITY")
		if _, err := prov.Flush(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{WorkspaceID: "acme", Name: "order_shipped", Language: "en",
			Event: record.ProviderTemplateQuality, Quality: "yellow"}); err != nil {
			t.Fatal(err)
		}
	}
	type change struct{ status, prev, reason, quality string }
	want := []change{
		{record.TemplateApproved, record.TemplatePending, "", ""},
		{record.TemplatePaused, record.TemplateApproved, "LOW_QUALITY", ""},
		{record.TemplatePaused, record.TemplatePaused, "LOW_QUALITY", "YELLOW"},
	}
	got := events()
	if len(got) != len(want) {
		t.Fatalf("%d template.status_updated events, want %d: %+v", len(got), len(want), got)
	}
	for i, ev := range got {
		d := ev.Data.(messaging.TemplateEventData)
		if (change{d.Status, d.PreviousStatus, d.Reason, d.Quality}) != want[i] || d.TemplateID != tpl.ID || d.Name != "order_shipped" ||
			d.Language != "en" || ev.WorkspaceID != "acme" {
			t.Errorf("event %d = %s %+v, want %+v of %s", i, ev.WorkspaceID, d, want[i], tpl.ID)
		}
	}
	// A status set by hand is announced too.
	if _, err := ts.SetStatus(f.ctx, tpl.ID, record.TemplateDisabled, "by hand"); err != nil {
		t.Fatal(err)
	}
	if got := events(); len(got) != 4 || got[3].Data.(messaging.TemplateEventData).PreviousStatus != record.TemplatePaused {
		t.Errorf("after SetStatus: %+v, want a fourth event from paused", got)
	}
}
