package messaging_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// sendOnly is a provider that declares no channels.
type sendOnly struct{ channel string }

func (p *sendOnly) Send(_ context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	p.channel = m.Channel
	return &messaging.SendReceipt{ProviderMessageID: "only-1"}, nil
}

// TestProviderMux: a mux serves the channels its providers declare, in
// order, and the ones Handle registers; it routes a send by channel; a
// channel registered twice, a provider without channels and a spec that
// breaks ChannelSpec's rules are refused, and so is a service whose
// provider serves no channel.
func TestProviderMux(t *testing.T) {
	t.Parallel()
	fake := fakeprovider.New()
	only := &sendOnly{}
	mux, err := messaging.NewProviderMux(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := mux.Handle(messaging.ChannelSpec{Name: "fax", Account: messaging.ChannelField{Name: "fax_number"}, MaxText: 500}, only); err != nil {
		t.Fatal(err)
	}
	svc, err := messaging.New(memstore.New(), mux, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"whatsapp", "instagram", "messenger", "fax"}, svc.Channels()); d != "" {
		t.Errorf("channels (-want +got):\n%s", d)
	}
	if mux.Provider("fax") != only || mux.Provider("whatsapp") != fake || mux.Provider("telex") != nil {
		t.Errorf("Provider routes wrongly")
	}
	if _, err := mux.Send(t.Context(), nil, &messaging.Message{Channel: "fax", To: "+254712345678", Type: "text", Text: "hi"}); err != nil || only.channel != "fax" {
		t.Errorf("Send on fax = %v, reached %q; want the fax provider", err, only.channel)
	}
	_, err = mux.Send(t.Context(), nil, &messaging.Message{Channel: "telex"})
	if se, ok := err.(*messaging.SendError); !ok || se.Code != record.CodeNoProvider || se.Retryable {
		t.Errorf("Send on an unserved channel = %v, want a permanent %s", err, record.CodeNoProvider)
	}

	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a channel twice", second(messaging.NewProviderMux(fake, fakeprovider.New())), `channel "whatsapp" is registered twice`},
		{"no channels declared", second(messaging.NewProviderMux(only)), "declares no channels"},
		{"bad name", mux.Handle(messaging.ChannelSpec{Name: "Fax", Account: messaging.ChannelField{Name: "n"}, MaxText: 1}, only), "Name must be"},
		{"no account field", mux.Handle(messaging.ChannelSpec{Name: "telex", MaxText: 1}, only), "Account.Name is required"},
		{"no text limit", mux.Handle(messaging.ChannelSpec{Name: "telex", Account: messaging.ChannelField{Name: "n"}}, only), "MaxText"},
		{"the token's name", mux.Handle(messaging.ChannelSpec{Name: "telex", Account: messaging.ChannelField{Name: "access_token"}, MaxText: 1}, only), "field \"access_token\""},
		{"a field twice", mux.Handle(messaging.ChannelSpec{Name: "telex", Account: messaging.ChannelField{Name: "n"}, Owner: messaging.ChannelField{Name: "n"}, MaxText: 1}, only), "field \"n\""},
		{"a service without channels", second(messaging.New(memstore.New(), only, nil)), "declares no channels"},
		{"a service on an empty mux", second(messaging.New(memstore.New(), &messaging.ProviderMux{}, nil)), "serves no channel"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
	if d := cmp.Diff([]string{"whatsapp", "instagram", "messenger", "fax"}, svc.Channels()); d != "" {
		t.Errorf("refused registrations changed the channels (-want +got):\n%s", d)
	}
}
