package messaging

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/ujumbe/messaging/record"
)

// ProviderMux is a Provider made of providers that each serve some
// channels: it serves every channel registered with it, in registration
// order, and hands each send to the provider of the message's channel.
// Given to New, it makes the service serve its channels; the service then
// discovers the optional capabilities (ConnectionVerifier,
// TemplateManager, TemplateLister, MediaFetcher, CallbackReceiver) of the
// provider of each channel, and mounts the receiver of each provider.
//
// Register every provider before handing the mux to New; the mux is safe
// for concurrent use once registration is over.
type ProviderMux struct {
	routes []*channelRoute
}

var (
	_ Provider        = (*ProviderMux)(nil)
	_ ChannelProvider = (*ProviderMux)(nil)
)

// channelRoute is a channel and the provider serving it.
type channelRoute struct {
	spec     ChannelSpec
	provider Provider
}

// NewProviderMux returns a ProviderMux serving the channels each of
// providers declares (each must be a ChannelProvider), in their order. A
// channel declared twice is an error.
func NewProviderMux(providers ...Provider) (*ProviderMux, error) {
	m := &ProviderMux{}
	for _, p := range providers {
		if err := m.register(p); err != nil {
			return nil, fmt.Errorf("messaging: NewProviderMux: %w", err)
		}
	}
	return m, nil
}

// register registers p for every channel it declares.
func (m *ProviderMux) register(p Provider) error {
	cp, ok := p.(ChannelProvider)
	if !ok || p == nil {
		return fmt.Errorf("the provider %T declares no channels (it is not a ChannelProvider): register it for its channels with ProviderMux.Handle", p)
	}
	for _, spec := range cp.Channels() {
		if err := m.handle(spec, p); err != nil {
			return err
		}
	}
	return nil
}

// Handle registers p as the provider of the channel spec describes, after
// the channels registered before: for a provider that does not declare
// its channels, or to serve a channel with a spec of your own. A channel
// registered twice, or a spec that breaks the rules of ChannelSpec, is an
// error.
func (m *ProviderMux) Handle(spec ChannelSpec, p Provider) error {
	if err := m.handle(spec, p); err != nil {
		return fmt.Errorf("messaging: ProviderMux.Handle: %w", err)
	}
	return nil
}

func (m *ProviderMux) handle(spec ChannelSpec, p Provider) error {
	if p == nil {
		return fmt.Errorf("channel %q: the provider is nil", spec.Name)
	}
	if err := checkSpec(&spec); err != nil {
		return err
	}
	if m.route(spec.Name) != nil {
		return fmt.Errorf("channel %q is registered twice", spec.Name)
	}
	m.routes = append(m.routes, &channelRoute{spec: spec, provider: p})
	return nil
}

var (
	channelNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	fieldNameRe   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// checkSpec checks the rules of ChannelSpec.
func checkSpec(spec *ChannelSpec) error {
	if !channelNameRe.MatchString(spec.Name) {
		return fmt.Errorf("channel %q: Name must be 1 to 32 lower-case letters, digits or '_', starting with a letter", spec.Name)
	}
	if spec.Account.Name == "" {
		return fmt.Errorf("channel %q: Account.Name is required", spec.Name)
	}
	if spec.MaxText <= 0 {
		return fmt.Errorf("channel %q: MaxText must be positive", spec.Name)
	}
	var names []string
	for _, f := range spec.fields() {
		if !fieldNameRe.MatchString(f.Name) || f.Name == tokenField || slices.Contains(names, f.Name) {
			return fmt.Errorf("channel %q: field %q must be 1 to 64 lower-case letters, digits or '_', starting with a letter, other than %s and the channel's other fields",
				spec.Name, f.Name, tokenField)
		}
		names = append(names, f.Name)
	}
	return nil
}

// fields returns the credential fields the channel has (Account, then
// Owner and Display when set).
func (spec *ChannelSpec) fields() []ChannelField {
	out := []ChannelField{spec.Account}
	for _, f := range []ChannelField{spec.Owner, spec.Display} {
		if f.Name != "" {
			out = append(out, f)
		}
	}
	return out
}

// route returns the route of channel, nil when none.
func (m *ProviderMux) route(channel string) *channelRoute {
	i := slices.IndexFunc(m.routes, func(r *channelRoute) bool { return r.spec.Name == channel })
	if i < 0 {
		return nil
	}
	return m.routes[i]
}

// Channels implements ChannelProvider: the specs of the registered
// channels, in registration order.
func (m *ProviderMux) Channels() []ChannelSpec {
	out := make([]ChannelSpec, len(m.routes))
	for i, r := range m.routes {
		out[i] = r.spec
	}
	return out
}

// Provider returns the provider of channel; nil when none is registered.
func (m *ProviderMux) Provider(channel string) Provider {
	if r := m.route(channel); r != nil {
		return r.provider
	}
	return nil
}

// Send implements Provider: it hands msg, as s, to the provider of its
// channel. A channel without a provider is a permanent *SendError with
// code CodeNoProvider.
func (m *ProviderMux) Send(ctx context.Context, s *ChannelSender, msg *Message) (*SendReceipt, error) {
	p := m.Provider(msg.Channel)
	if p == nil {
		return nil, noProvider(msg.Channel)
	}
	return p.Send(ctx, s, msg)
}

func noProvider(channel string) *SendError {
	return &SendError{Code: record.CodeNoProvider, Text: fmt.Sprintf("no provider serves the channel %q", channel)}
}

// channelSet is the channels a service serves, in order, with their
// providers.
type channelSet struct {
	routes []*channelRoute
	// providers are the distinct providers of the routes, in order.
	providers []Provider
}

// newChannelSet returns the channels p serves: those registered in a
// ProviderMux, or those a ChannelProvider declares.
func newChannelSet(p Provider) (*channelSet, error) {
	m, ok := p.(*ProviderMux)
	if !ok {
		m = &ProviderMux{}
		if err := m.register(p); err != nil {
			return nil, err
		}
	}
	if len(m.routes) == 0 {
		return nil, fmt.Errorf("the provider serves no channel")
	}
	cs := &channelSet{routes: slices.Clone(m.routes)}
	for _, r := range cs.routes {
		if !slices.ContainsFunc(cs.providers, func(q Provider) bool { return sameProvider(q, r.provider) }) {
			cs.providers = append(cs.providers, r.provider)
		}
	}
	return cs, nil
}

// sameProvider reports whether a and b are the same provider (never
// comparing values whose type is not comparable).
func sameProvider(a, b Provider) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// route returns the route of channel, nil when the service does not
// serve it.
func (cs *channelSet) route(channel string) *channelRoute {
	for _, r := range cs.routes {
		if r.spec.Name == channel {
			return r
		}
	}
	return nil
}

// names returns the channels' names, in order.
func (cs *channelSet) names() []string {
	out := make([]string, len(cs.routes))
	for i, r := range cs.routes {
		out[i] = r.spec.Name
	}
	return out
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Channels returns the names of the channels the service serves (those
// its provider declares), in order.
func (s *Service) Channels() []string { return s.channels.names() }

// ChannelSpecs returns the specs of the channels the service serves, in
// order.
func (s *Service) ChannelSpecs() []ChannelSpec {
	out := make([]ChannelSpec, len(s.channels.routes))
	for i, r := range s.channels.routes {
		out[i] = r.spec
	}
	return out
}

// spec returns the spec of channel, nil when the service does not serve
// it.
func (s *Service) spec(channel string) *ChannelSpec {
	if r := s.channels.route(channel); r != nil {
		return &r.spec
	}
	return nil
}

// providerFor returns the provider of channel, nil when the service does
// not serve it.
func (s *Service) providerFor(channel string) Provider {
	if r := s.channels.route(channel); r != nil {
		return r.provider
	}
	return nil
}

// phoneRecipients reports whether the recipients of channel are phone
// numbers (ChannelSpec.PhoneRecipients).
func (s *Service) phoneRecipients(channel string) bool {
	spec := s.spec(channel)
	return spec != nil && spec.PhoneRecipients
}

// validateChannel checks that the service serves ch.
func (s *Service) validateChannel(ch string) error {
	switch {
	case ch == "":
		return validationError("channel", "is required")
	case s.spec(ch) == nil:
		return validationError("channel", "must be one of %s (got %q)", strings.Join(s.Channels(), ", "), ch)
	}
	return nil
}
