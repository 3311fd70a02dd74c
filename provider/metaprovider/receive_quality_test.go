package metaprovider_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// qualitySetup returns a Receiver on a service where ws_meta's WhatsApp
// connection is hookPNID in hookWABA, shown as +254711000111, verified
// with fakeprovider's health (GREEN, TIER_1K), and the
// channel.quality_updated events the service published.
func qualitySetup(t *testing.T) (*hookEnv, func() []*messaging.Event) {
	t.Helper()
	e := &hookEnv{store: &hookStore{Store: memstore.New()}, log: &testlog.Buffer{}}
	svc, err := messaging.New(e.store, fakeprovider.New(), &messaging.Options{Clock: func() time.Time { return now },
		SecretKey: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	var mu sync.Mutex
	var events []*messaging.Event
	svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		if ev.Type == messaging.EventChannelQualityUpdated {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
	})
	ctx := t.Context()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: hookWS, Name: hookWS, Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace(hookWS).Channels.Connect(ctx, messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		Fields: map[string]string{metaprovider.FieldPhoneNumberID: hookPNID, metaprovider.FieldWABAID: hookWABA,
			"display_phone_number": "+254711000111"}, AccessToken: "EAAGtoken-of-ws"}); err != nil {
		t.Fatal(err)
	}
	e.rc = metaprovider.NewReceiver(svc, &metaprovider.ReceiverOptions{VerifyToken: hookVerify, AppSecret: hookSecret,
		Logger: slog.New(slog.NewTextHandler(e.log, nil))})
	return e, func() []*messaging.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]*messaging.Event(nil), events...)
	}
}

// TestReceiverPhoneNumberQualityUpdate: Meta's phone_number_quality_update
// (testdata/phone_number_quality_update.json is written from the syntax and
// the example values of Meta's reference, its number replaced by a valid one,
// https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/phone_number_quality_update)
// raises the connection's tier and is announced once; its repeat changes
// and announces nothing; a FLAGGED event of the older shape (current_limit
// only) makes the quality RED, and a DOWNGRADE lowers the tier.
func TestReceiverPhoneNumberQualityUpdate(t *testing.T) {
	t.Parallel()
	e, events := qualitySetup(t)
	body, err := os.ReadFile("testdata/phone_number_quality_update.json")
	if err != nil {
		t.Fatal(err)
	}
	conn := func() *messaging.ChannelConnection {
		t.Helper()
		c, err := e.store.ConnectionGet(t.Context(), hookWS, messaging.ChannelWhatsApp)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := conn(); c.QualityRating != record.QualityGreen || c.MessagingTier != record.Tier1K {
		t.Fatalf("after verification: quality %q tier %q, want GREEN TIER_1K", c.QualityRating, c.MessagingTier)
	}
	for i := range 2 { // Meta delivers at least once
		if a := e.postOK(t, string(body)); a.Accounts != 1 || a.Ignored != 0 {
			t.Fatalf("delivery %d: answer = %+v, want 1 account report", i+1, a)
		}
	}
	if c := conn(); c.QualityRating != record.QualityGreen || c.MessagingTier != record.Tier10K || c.TierChangedAt == nil || !c.TierChangedAt.Equal(now) {
		t.Errorf("after the upgrade: quality %q tier %q changed %v, want GREEN TIER_10K at %v", c.QualityRating, c.MessagingTier, c.TierChangedAt, now)
	}
	evs := events()
	if len(evs) != 1 {
		t.Fatalf("%d channel.quality_updated events after two deliveries, want 1: %+v", len(evs), evs)
	}
	want := messaging.ChannelQualityEventData{Channel: messaging.ChannelWhatsApp, AccountID: hookPNID, QualityRating: record.QualityGreen,
		MessagingTier: record.Tier10K, PreviousQualityRating: record.QualityGreen, PreviousMessagingTier: record.Tier1K, Event: "UPGRADE", At: now}
	if got, ok := evs[0].Data.(messaging.ChannelQualityEventData); !ok || got != want || evs[0].WorkspaceID != hookWS {
		t.Errorf("event = %s %#v, want %s %#v", evs[0].WorkspaceID, evs[0].Data, hookWS, want)
	}

	flagged := templateChange(hookWABA, "phone_number_quality_update", `{"display_phone_number":"+254 711 000 111","event":"FLAGGED","current_limit":"TIER_10K"}`)
	if a := e.postOK(t, flagged); a.Accounts != 1 {
		t.Fatalf("flagged: answer = %+v, want 1 account report", a)
	}
	if c := conn(); c.QualityRating != record.QualityRed || c.MessagingTier != record.Tier10K {
		t.Errorf("after FLAGGED: quality %q tier %q, want RED TIER_10K", c.QualityRating, c.MessagingTier)
	}
	if evs := events(); len(evs) != 2 || evs[1].Data.(messaging.ChannelQualityEventData).PreviousQualityRating != record.QualityGreen {
		t.Errorf("after FLAGGED: events %+v, want a second one from GREEN", evs)
	}
	downgrade := templateChange(hookWABA, "phone_number_quality_update", `{"display_phone_number":"254711000111","event":"DOWNGRADE","old_limit":"TIER_10K","current_limit":"TIER_1K"}`)
	if a := e.postOK(t, downgrade); a.Accounts != 1 {
		t.Fatalf("downgrade: answer = %+v, want 1 account report", a)
	}
	if c := conn(); c.MessagingTier != record.Tier1K {
		t.Errorf("after DOWNGRADE: tier %q, want TIER_1K", c.MessagingTier)
	}
}

// TestReceiverPhoneNumberQualityUpdateIgnored: reports of another number,
// of an unknown WABA or that carry nothing are ignored and logged.
func TestReceiverPhoneNumberQualityUpdateIgnored(t *testing.T) {
	t.Parallel()
	e, events := qualitySetup(t)
	for _, c := range []struct{ label, body, log string }{
		{"another number", templateChange(hookWABA, "phone_number_quality_update", `{"display_phone_number":"254711000999","event":"UPGRADE","current_limit":"TIER_10K"}`), "254711000999"},
		{"unknown WABA", templateChange(unknownWABA, "phone_number_quality_update", `{"display_phone_number":"254711000111","event":"UPGRADE","current_limit":"TIER_10K"}`), unknownWABA},
		{"nothing to change", templateChange(hookWABA, "phone_number_quality_update", `{"display_phone_number":"254711000111","event":"ONBOARDING","current_limit":"TIER_NOT_SET"}`), "ONBOARDING"},
	} {
		if a := e.postOK(t, c.body); a.Accounts != 0 || a.Ignored != 1 {
			t.Errorf("%s: answer = %+v, want ignored", c.label, a)
		}
		if !strings.Contains(e.log.String(), c.log) {
			t.Errorf("%s: %q was not logged:\n%s", c.label, c.log, e.log)
		}
	}
	if evs := events(); len(evs) != 0 {
		t.Errorf("events %+v, want none", evs)
	}
}
