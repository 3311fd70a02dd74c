package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// fakeInboundPath is the route of -fake-inbound.
const fakeInboundPath = "/fake/v1/inbound"

// fakeInboundRequest is the body of POST /fake/v1/inbound.
type fakeInboundRequest struct {
	WorkspaceID string `json:"workspace_id"`
	Channel     string `json:"channel"`
	From        string `json:"from"`
	Text        string `json:"text"`
	// ID is the provider message id; empty: a new one. Sending the same
	// id again simulates a repeated report.
	ID string `json:"id"`
}

// fakeInboundHandler serves POST /fake/v1/inbound, for local testing only:
// it makes the fake provider report a message from a contact, as Meta's
// webhook would (see fakeprovider.Provider.Receive), so that
// message.received webhooks, conversations and opt-out keywords can be
// tried without a phone. It takes the operator token (Authorization:
// Bearer), since it writes into any workspace.
func fakeInboundHandler(fake *fakeprovider.Provider, operatorToken string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(operatorToken)) != 1 {
			fail(http.StatusUnauthorized, "send the operator token as Authorization: Bearer <token>")
			return
		}
		var req fakeInboundRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			fail(http.StatusBadRequest, "body: "+err.Error())
			return
		}
		m, err := fake.Receive(r.Context(), &messaging.InboundMessage{WorkspaceID: req.WorkspaceID, Channel: req.Channel,
			From: req.From, Text: req.Text, ProviderMessageID: req.ID})
		if err != nil {
			var e *messaging.Error
			if errors.As(err, &e) && e.Code == messaging.CodeValidation {
				fail(http.StatusBadRequest, e.Message)
				return
			}
			if errors.As(err, &e) && e.Code == messaging.CodeNotFound {
				fail(http.StatusNotFound, e.Message)
				return
			}
			fail(http.StatusInternalServerError, "internal error")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"message_id": m.ID, "conversation_id": m.ConversationID,
			"provider_message_id": m.ProviderMessageID})
	})
}
