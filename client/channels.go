package client

import (
	"context"
	"net/http"
)

// ChannelCredentials is the body of PUT /v1/channels/{channel} (schema
// ChannelCredentials): the ids of the channel's account and its access
// token: PhoneNumberID, WABAID and (optionally) DisplayPhoneNumber for
// whatsapp, PageID for messenger, InstagramAccountID for instagram, and
// AccessToken always. A field of another channel is refused.
type ChannelCredentials struct {
	PhoneNumberID      string `json:"phone_number_id,omitempty"`
	WABAID             string `json:"waba_id,omitempty"`
	DisplayPhoneNumber string `json:"display_phone_number,omitempty"`
	PageID             string `json:"page_id,omitempty"`
	InstagramAccountID string `json:"instagram_account_id,omitempty"`
	AccessToken        string `json:"access_token,omitempty"`
}

// Channels lists, connects and disconnects the channels of the workspace
// (scope manage:channels).
type Channels struct{ r *restClient }

// List returns every channel of the workspace with its state (GET
// /v1/channels).
func (s *Channels) List(ctx context.Context) ([]*Channel, error) {
	return getArray[*Channel](ctx, s.r, nil, "/v1/channels")
}

// Put connects channel ("whatsapp", "instagram", "messenger") with creds,
// or replaces its credentials (PUT /v1/channels/{channel}).
func (s *Channels) Put(ctx context.Context, channel string, creds *ChannelCredentials) (*Channel, error) {
	return send[Channel](ctx, s.r, http.MethodPut, creds, true, "/v1/channels/%s", channel)
}

// Update changes the settings of channel's connection (PATCH
// /v1/channels/{channel}): its throughput, 1 to 1000 messages per second.
// Repeating it is safe.
func (s *Channels) Update(ctx context.Context, channel string, p *ChannelPatch) (*Channel, error) {
	return send[Channel](ctx, s.r, http.MethodPatch, p, true, "/v1/channels/%s", channel)
}

// Delete disconnects channel (DELETE /v1/channels/{channel}) and returns
// its state.
func (s *Channels) Delete(ctx context.Context, channel string) (*Channel, error) {
	return send[Channel](ctx, s.r, http.MethodDelete, nil, true, "/v1/channels/%s", channel)
}

// Verify asks the channel provider now whether channel's stored
// credentials control its account, and returns the channel with the
// verdict recorded (POST /v1/channels/{channel}/verify): connected,
// or error with the provider's reason. A provider that cannot answer is a
// 503 *Error. Repeating it is safe.
func (s *Channels) Verify(ctx context.Context, channel string) (*Channel, error) {
	return send[Channel](ctx, s.r, http.MethodPost, nil, true, "/v1/channels/%s/verify", channel)
}
