package metatest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// NoAnswer, given to SetSendDelay, makes the Server accept sends and never
// answer them: the answer waits until the client gives up (its context
// ends or its timeout passes) or the Server is closed.
const NoAnswer time.Duration = -1

// mockTimestamp is the time of the notifications the Server builds, in
// Unix seconds (the receiver does not read it).
const mockTimestamp = 1750263773

// Send is a send the Server accepted.
type Send struct {
	// WhatsApp is true for a WhatsApp Cloud API send (messaging_product
	// whatsapp), false for a Messenger or Instagram Send API one.
	WhatsApp bool
	// AccountID is the sending phone-number id, page id or Instagram
	// account id (the path's id).
	AccountID string
	// To is the recipient: WhatsApp's to, else recipient.id or
	// recipient.phone_number.
	To string
	// ProviderMessageID is the id the answer carries (or would carry):
	// wamid.mock.N or m_mock.N for the Nth send.
	ProviderMessageID string
	// Correlation is the send's biz_opaque_callback_data (WhatsApp) or
	// message.metadata (Send API), which Meta echoes in its webhooks.
	Correlation string
	// Text is the Send API message's text, echoed by EchoWebhook.
	Text string
}

// SetSendDelay makes the answers of later sends wait d (0, the default:
// answer at once; NoAnswer: never). A send is accepted, numbered and kept
// (Sends) when it arrives, before the wait, as Meta accepts a message
// whose answer is then lost; a send whose client leaves during the wait
// stays accepted.
func (s *Server) SetSendDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendDelay = d
}

// Sends returns a copy of the sends accepted so far, in order.
func (s *Server) Sends() []Send {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sends)
}

// send returns the accepted send of providerMessageID.
func (s *Server) send(providerMessageID string) (Send, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sd := range s.sends {
		if sd.ProviderMessageID == providerMessageID {
			return sd, nil
		}
	}
	return Send{}, fmt.Errorf("metatest: no send was accepted as %q", providerMessageID)
}

// StatusWebhook returns the body of the notification Meta posts when the
// WhatsApp message accepted as providerMessageID reaches status (sent,
// delivered, read; failed carries error 131026): object
// whatsapp_business_account, the entry of the phone number's WABA (see
// AddPhoneNumber; the phone-number id when it has none), value.metadata
// with the phone-number id, and the status with the send's
// biz_opaque_callback_data when it had one. A send that is not WhatsApp's,
// or no such send, is an error.
func (s *Server) StatusWebhook(providerMessageID, status string) ([]byte, error) {
	sd, err := s.send(providerMessageID)
	if err != nil {
		return nil, err
	}
	if !sd.WhatsApp {
		return nil, fmt.Errorf("metatest: %s was sent with the Send API; its webhook is EchoWebhook", providerMessageID)
	}
	st := map[string]any{"id": sd.ProviderMessageID, "status": status, "timestamp": fmt.Sprint(mockTimestamp),
		"recipient_id": strings.TrimPrefix(sd.To, "+")}
	if sd.Correlation != "" {
		st["biz_opaque_callback_data"] = sd.Correlation
	}
	if status == "failed" {
		st["errors"] = []map[string]any{{"code": 131026, "title": "Message undeliverable", "message": "Message undeliverable",
			"error_data": map[string]string{"details": "Message Undeliverable."}}}
	}
	value := map[string]any{"messaging_product": "whatsapp",
		"metadata": map[string]string{"display_phone_number": "15550000000", "phone_number_id": sd.AccountID},
		"statuses": []any{st}}
	return json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{
		"id": s.wabaOf(sd.AccountID), "changes": []any{map[string]any{"field": "messages", "value": value}}}}})
}

// wabaOf is the WABA holding the phone number id, else id itself.
func (s *Server) wabaOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for waba, nums := range s.numbers {
		for _, n := range nums {
			if n.id == id {
				return waba
			}
		}
	}
	return id
}

// EchoWebhook returns the body of the message_echoes notification Meta
// posts for the Messenger or Instagram message accepted as
// providerMessageID: object page (instagram for an account added with
// AddInstagramAccount), an entry of the sending account whose messaging
// event goes from the account to the recipient, with message {mid,
// is_echo: true, app_id, metadata (the send's message.metadata, when it
// had one), text}. A WhatsApp send, or no such send, is an error.
func (s *Server) EchoWebhook(providerMessageID string) ([]byte, error) {
	sd, err := s.send(providerMessageID)
	if err != nil {
		return nil, err
	}
	if sd.WhatsApp {
		return nil, fmt.Errorf("metatest: %s was sent on WhatsApp; its webhook is StatusWebhook", providerMessageID)
	}
	s.mu.Lock()
	_, ig := s.igTokens[sd.AccountID]
	s.mu.Unlock()
	object := "page"
	if ig {
		object = "instagram"
	}
	msg := map[string]any{"mid": sd.ProviderMessageID, "is_echo": true, "app_id": 1517776481860111}
	if sd.Correlation != "" {
		msg["metadata"] = sd.Correlation
	}
	if sd.Text != "" {
		msg["text"] = sd.Text
	}
	event := map[string]any{"sender": map[string]string{"id": sd.AccountID}, "recipient": map[string]string{"id": sd.To},
		"timestamp": int64(mockTimestamp) * 1000, "message": msg}
	return json.Marshal(map[string]any{"object": object, "entry": []any{map[string]any{
		"id": sd.AccountID, "time": int64(mockTimestamp) * 1000, "messaging": []any{event}}}})
}

// Signature is the X-Hub-Signature-256 header Meta sends with body:
// "sha256=" and the hex HMAC-SHA256 of body under the app secret.
func Signature(appSecret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// PostWebhook posts body to a webhook receiver at url as Meta does (JSON,
// signed with appSecret), and returns the receiver's status and answer.
func PostWebhook(ctx context.Context, url, appSecret string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hub-Signature-256", Signature(appSecret, body))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, ans, err
}
