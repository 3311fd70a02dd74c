package messaging_test

import (
	"slices"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// creds returns credentials of the given fields (name, value, ...) and
// token.
func creds(token string, fields ...string) *messaging.ChannelCredentials {
	c := &messaging.ChannelCredentials{Fields: map[string]string{}, AccessToken: token}
	for i := 0; i+1 < len(fields); i += 2 {
		c.Fields[fields[i]] = fields[i+1]
	}
	return c
}

// noRecord compares channel states without their connection records.
var noRecord = cmpopts.IgnoreFields(messaging.ChannelState{}, "Connection")

// TestChannelStates: the flag and the connection record merge into one
// state per channel, in the order of Service.Channels; the token never
// shows.
func TestChannelStates(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	ctx := f.ctx
	chans := f.svc.Workspace("acme").Channels
	states := func() []messaging.ChannelState {
		t.Helper()
		list, err := chans.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]messaging.ChannelState, len(list))
		for i, s := range list {
			out[i] = *s
		}
		return out
	}
	off := func(ch string) messaging.ChannelState {
		return messaging.ChannelState{Channel: ch, Status: record.ConnectionDisconnected}
	}
	if d := cmp.Diff([]messaging.ChannelState{off("whatsapp"), off("instagram"), off("messenger")}, states(), noRecord); d != "" {
		t.Errorf("a new workspace (-want +got):\n%s", d)
	}
	// The flag alone: connected without a sender.
	if err := setChannel(ctx, f.svc, "acme", messaging.ChannelInstagram, true); err != nil {
		t.Fatal(err)
	}
	put, err := chans.Connect(ctx, messaging.ChannelWhatsApp, creds("EAAGsecret-token-9f3a",
		"phone_number_id", "1065", "waba_id", "1022", "display_phone_number", "+254712345678"))
	if err != nil {
		t.Fatal(err)
	}
	at := t0
	wa := messaging.ChannelState{Channel: "whatsapp", Status: "connected", AccountID: "1065", DisplayPhoneNumber: "+254712345678", TokenHint: "9f3a", ConnectedAt: &at}
	if d := cmp.Diff(wa, *put, noRecord); d != "" {
		t.Errorf("Connect (-want +got):\n%s", d)
	}
	if c := put.Connection; c == nil || c.WABAID != "1022" || c.Generation != 1 || c.TokenSealed != nil {
		t.Errorf("Connect's record = %+v, want the WABA id, generation 1, no token", c)
	}
	ig := messaging.ChannelState{Channel: "instagram", Status: "connected"}
	if d := cmp.Diff([]messaging.ChannelState{wa, ig, off("messenger")}, states(), noRecord); d != "" {
		t.Errorf("connected (-want +got):\n%s", d)
	}
	// Replacing the credentials keeps the first connection's time.
	f.clock.Advance(time.Hour)
	if _, err := chans.Connect(ctx, messaging.ChannelWhatsApp, creds("EAAGnew-token-77b1", "phone_number_id", "1065", "waba_id", "1022")); err != nil {
		t.Fatal(err)
	}
	wa.TokenHint, wa.DisplayPhoneNumber = "77b1", ""
	if d := cmp.Diff(wa, states()[0], noRecord); d != "" {
		t.Errorf("replaced (-want +got):\n%s", d)
	}
	if got, err := chans.Get(ctx, messaging.ChannelWhatsApp); err != nil || cmp.Diff(wa, *got, noRecord) != "" || got.Connection.Generation != 2 {
		t.Errorf("Get = %+v, %v; want %+v, generation 2", got, err, wa)
	}
	// Disconnecting shows disconnected, without the old account.
	gone, err := chans.Disconnect(ctx, messaging.ChannelWhatsApp)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(off("whatsapp"), *gone); d != "" {
		t.Errorf("Disconnect (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]messaging.ChannelState{off("whatsapp"), ig, off("messenger")}, states(), noRecord); d != "" {
		t.Errorf("after Disconnect (-want +got):\n%s", d)
	}
	if c := states()[0].Connection; c == nil || c.Status != record.ConnectionDisconnected {
		t.Errorf("the disconnected record = %+v, want it kept as history, disconnected", c)
	}
	// The other workspace sees none of it.
	other, err := f.svc.Workspace("other").Channels.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range other {
		if s.Status != record.ConnectionDisconnected {
			t.Errorf("other: %+v", s)
		}
	}
}

// TestChannelStateError: a connection whose credentials the provider
// refused shows error with the reason.
func TestChannelStateError(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	chans := f.svc.Workspace("acme").Channels
	if _, err := chans.Connect(f.ctx, messaging.ChannelMessenger, creds("EAAGpage-token-0001", "page_id", "42")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.ConnectionUpdate(f.ctx, &driver.ConnectionUpdateParams{WorkspaceID: "acme", Channel: messaging.ChannelMessenger,
		Generation: 1, Status: record.ConnectionError, StatusReason: "190: token expired", At: t0}); err != nil {
		t.Fatal(err)
	}
	list, err := chans.List(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := list[2]; got.Status != record.ConnectionError || got.Error != "190: token expired" || got.AccountID != "42" {
		t.Errorf("messenger = %+v, want error with the reason", got)
	}
}

// TestConnectStrict: each channel takes only its own fields, named by
// its spec; a field no channel has is unknown; an unknown channel is
// not_found.
func TestConnectStrict(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	chans := f.svc.Workspace("acme").Channels
	tok := "EAAGsecret-token-9f3a"
	for _, c := range []struct {
		channel string
		creds   *messaging.ChannelCredentials
		code    messaging.Code
		field   string
		message string
	}{
		{"whatsapp", creds(tok, "phone_number_id", "1", "waba_id", "2", "page_id", "3"), messaging.CodeValidation, "page_id", "page_id: is only for messenger; whatsapp takes phone_number_id"},
		{"whatsapp", creds(tok, "phone_number_id", "1", "waba_id", "2", "instagram_account_id", "3"), messaging.CodeValidation, "instagram_account_id", ""},
		{"whatsapp", creds(tok, "waba_id", "2"), messaging.CodeValidation, "phone_number_id", "phone_number_id: must be the account's numeric id (1 to 32 digits)"},
		{"whatsapp", creds(tok, "phone_number_id", "1"), messaging.CodeValidation, "waba_id", "waba_id: must be the WhatsApp Business Account's numeric id (1 to 32 digits)"},
		{"whatsapp", creds("", "phone_number_id", "1", "waba_id", "2"), messaging.CodeValidation, "access_token", "access_token: is required"},
		{"whatsapp", creds(tok, "phone_number_id", "1", "waba_id", "2", "pageid", "3"), messaging.CodeValidation, "pageid", "pageid: unknown field"},
		{"messenger", creds(tok, "phone_number_id", "1"), messaging.CodeValidation, "phone_number_id", "phone_number_id: is only for whatsapp; messenger takes page_id"},
		{"messenger", creds(tok, "page_id", "1", "waba_id", "2"), messaging.CodeValidation, "waba_id", "waba_id: is only for whatsapp"},
		{"messenger", creds(tok, "page_id", "1", "display_phone_number", "+254712345678"), messaging.CodeValidation, "display_phone_number", "display_phone_number: is only for whatsapp"},
		{"instagram", creds(tok, "page_id", "1"), messaging.CodeValidation, "page_id", ""},
		{"instagram", creds(tok, "instagram_account_id", "x1"), messaging.CodeValidation, "instagram_account_id", ""},
		{"sms", creds(tok), messaging.CodeNotFound, "", `channel "sms" not found; the channels are whatsapp, instagram, messenger`},
		{"WhatsApp", creds(tok, "phone_number_id", "1", "waba_id", "2"), messaging.CodeNotFound, "", ""},
	} {
		_, err := chans.Connect(f.ctx, c.channel, c.creds)
		e := wantError(t, err, c.code, c.field)
		if e != nil && c.message != "" && e.Message != c.message {
			t.Errorf("%s %v: message %q, want %q", c.channel, c.creds.Fields, e.Message, c.message)
		}
	}
	for _, call := range []func() error{
		func() error { return second(chans.Disconnect(f.ctx, "sms")) },
		func() error { return second(chans.Get(f.ctx, "sms")) },
		func() error { return second(chans.Verify(f.ctx, "sms")) },
		func() error { return second(chans.Connect(f.ctx, "", nil)) },
	} {
		wantError(t, call(), messaging.CodeNotFound, "")
	}
	if list, _ := chans.List(f.ctx); slices.ContainsFunc(list, func(s *messaging.ChannelState) bool { return s.Connection != nil }) {
		t.Errorf("a refused Connect stored a connection: %+v", list)
	}
}
