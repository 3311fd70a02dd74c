package messaging_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// TestChannelStates: the flag and the connection record merge into one
// state per channel, in the order of Channels; the token never shows.
func TestChannelStates(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	ctx := f.ctx
	states := func() []messaging.ChannelState {
		t.Helper()
		list, err := f.svc.ChannelStates(ctx, "acme")
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
		return messaging.ChannelState{Channel: ch, Status: messaging.ConnectionDisconnected}
	}
	if d := cmp.Diff([]messaging.ChannelState{off("whatsapp"), off("instagram"), off("messenger")}, states()); d != "" {
		t.Errorf("a new workspace (-want +got):\n%s", d)
	}
	// The flag alone: connected without a sender.
	if err := f.svc.ConnectChannel(ctx, "acme", messaging.ChannelInstagram); err != nil {
		t.Fatal(err)
	}
	put, err := f.svc.PutChannel(ctx, "acme", messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		PhoneNumberID: "1065", WABAID: "1022", DisplayPhoneNumber: "+254712345678", AccessToken: "EAAGsecret-token-9f3a"})
	if err != nil {
		t.Fatal(err)
	}
	at := t0
	wa := messaging.ChannelState{Channel: "whatsapp", Status: "connected", AccountID: "1065", DisplayPhoneNumber: "+254712345678", TokenHint: "9f3a", ConnectedAt: &at}
	if d := cmp.Diff(wa, *put); d != "" {
		t.Errorf("PutChannel (-want +got):\n%s", d)
	}
	ig := messaging.ChannelState{Channel: "instagram", Status: "connected"}
	if d := cmp.Diff([]messaging.ChannelState{wa, ig, off("messenger")}, states()); d != "" {
		t.Errorf("connected (-want +got):\n%s", d)
	}
	// Replacing the credentials keeps the first connection's time.
	f.clock.Advance(time.Hour)
	if _, err := f.svc.PutChannel(ctx, "acme", messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		PhoneNumberID: "1065", WABAID: "1022", AccessToken: "EAAGnew-token-77b1"}); err != nil {
		t.Fatal(err)
	}
	wa.TokenHint, wa.DisplayPhoneNumber = "77b1", ""
	if d := cmp.Diff(wa, states()[0]); d != "" {
		t.Errorf("replaced (-want +got):\n%s", d)
	}
	// Removing shows disconnected, without the old account.
	gone, err := f.svc.RemoveChannel(ctx, "acme", messaging.ChannelWhatsApp)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(off("whatsapp"), *gone); d != "" {
		t.Errorf("RemoveChannel (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]messaging.ChannelState{off("whatsapp"), ig, off("messenger")}, states()); d != "" {
		t.Errorf("after RemoveChannel (-want +got):\n%s", d)
	}
	// The other workspace sees none of it.
	other, err := f.svc.ChannelStates(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range other {
		if s.Status != messaging.ConnectionDisconnected {
			t.Errorf("other: %+v", s)
		}
	}
}

// TestChannelStateError: a connection whose credentials the provider
// refused shows error with the reason.
func TestChannelStateError(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	if _, err := f.svc.PutChannel(f.ctx, "acme", messaging.ChannelMessenger, &messaging.ChannelCredentials{PageID: "42", AccessToken: "EAAGpage-token-0001"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.ConnectionUpdate(f.ctx, &messaging.ConnectionUpdateParams{WorkspaceID: "acme", Channel: messaging.ChannelMessenger,
		Generation: 1, Status: messaging.ConnectionError, StatusReason: "190: token expired", At: t0}); err != nil {
		t.Fatal(err)
	}
	list, err := f.svc.ChannelStates(f.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got := list[2]; got.Status != messaging.ConnectionError || got.Error != "190: token expired" || got.AccountID != "42" {
		t.Errorf("messenger = %+v, want error with the reason", got)
	}
}

// TestPutChannelStrict: each channel takes only its own account field;
// an unknown channel is not_found.
func TestPutChannelStrict(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	tok := "EAAGsecret-token-9f3a"
	for _, c := range []struct {
		channel string
		creds   messaging.ChannelCredentials
		code    messaging.Code
		field   string
	}{
		{"whatsapp", messaging.ChannelCredentials{PhoneNumberID: "1", WABAID: "2", PageID: "3", AccessToken: tok}, messaging.CodeValidation, "page_id"},
		{"whatsapp", messaging.ChannelCredentials{PhoneNumberID: "1", WABAID: "2", InstagramAccountID: "3", AccessToken: tok}, messaging.CodeValidation, "instagram_account_id"},
		{"whatsapp", messaging.ChannelCredentials{WABAID: "2", AccessToken: tok}, messaging.CodeValidation, "phone_number_id"},
		{"whatsapp", messaging.ChannelCredentials{PhoneNumberID: "1", AccessToken: tok}, messaging.CodeValidation, "waba_id"},
		{"whatsapp", messaging.ChannelCredentials{PhoneNumberID: "1", WABAID: "2"}, messaging.CodeValidation, "access_token"},
		{"messenger", messaging.ChannelCredentials{PhoneNumberID: "1", AccessToken: tok}, messaging.CodeValidation, "phone_number_id"},
		{"messenger", messaging.ChannelCredentials{PageID: "1", WABAID: "2", AccessToken: tok}, messaging.CodeValidation, "waba_id"},
		{"instagram", messaging.ChannelCredentials{PageID: "1", AccessToken: tok}, messaging.CodeValidation, "page_id"},
		{"instagram", messaging.ChannelCredentials{InstagramAccountID: "x1", AccessToken: tok}, messaging.CodeValidation, "instagram_account_id"},
		{"sms", messaging.ChannelCredentials{AccessToken: tok}, messaging.CodeNotFound, ""},
		{"WhatsApp", messaging.ChannelCredentials{PhoneNumberID: "1", WABAID: "2", AccessToken: tok}, messaging.CodeNotFound, ""},
	} {
		_, err := f.svc.PutChannel(f.ctx, "acme", c.channel, &c.creds)
		wantError(t, err, c.code, c.field)
	}
	_, err := f.svc.RemoveChannel(f.ctx, "acme", "sms")
	wantError(t, err, messaging.CodeNotFound, "")
	if list, _ := f.svc.Connections(f.ctx, "acme"); len(list) != 0 {
		t.Errorf("a refused PutChannel stored %d connections", len(list))
	}
}
