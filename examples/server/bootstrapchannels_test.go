package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

const channelsBootstrap = `{"workspaces":[{"id":"acme","name":"Acme Ltd",
  "channels":["instagram",
    {"channel":"whatsapp","phone_number_id":"1234567890","waba_id":"9876543210","access_token":"EAAGsecretTokenWXYZ","display_phone_number":"+254700000000"},
    {"channel":"messenger","page_id":"5550001","access_token":"EAAGpageTokenPQRS"}],
  "templates":[{"name":"submitted_at_start","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hi {{1}}"}]},
               {"name":"still_a_draft","category":"UTILITY","language":"en","status":"draft","components":[{"type":"BODY","text":"Hi"}]}]}]}`

// connectionOf returns the connection record of ws on channel, failing t
// when there is none.
func connectionOf(t *testing.T, svc *messaging.Service, ws, channel string) *messaging.ChannelConnection {
	t.Helper()
	st, err := svc.Workspace(ws).Channels.Get(context.Background(), channel)
	if err != nil || st.Connection == nil {
		t.Fatalf("connection of %s/%s: %+v, %v", ws, channel, st, err)
	}
	return st.Connection
}

func TestBootstrapChannelObjects(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f, err := loadBootstrap(writeFile(t, channelsBootstrap))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyBootstrap(ctx, svc, st, f, log); err != nil {
		t.Fatal(err)
	}
	w, _ := svc.GetWorkspace(ctx, "acme")
	if got := strings.Join(w.Channels, ","); got != "instagram,messenger,whatsapp" {
		t.Errorf("channels = %s", got)
	}
	snd, err := svc.ChannelSender(ctx, "acme", "whatsapp")
	if err != nil || snd.AccountID != "1234567890" || snd.WABAID != "9876543210" || snd.AccessToken != "EAAGsecretTokenWXYZ" {
		t.Fatalf("whatsapp sender = %v, %v", snd, err)
	}
	if snd, err := svc.ChannelSender(ctx, "acme", "messenger"); err != nil || snd.AccountID != "5550001" {
		t.Fatalf("messenger sender = %v, %v", snd, err)
	}
	if snd, err := svc.ChannelSender(ctx, "acme", "instagram"); err != nil || snd != nil {
		t.Errorf("instagram (a string entry) sender = %v, %v; want none, connected", snd, err)
	}
	c := connectionOf(t, svc, "acme", "whatsapp")
	ts := svc.Workspace("acme").Templates
	sub, err := st.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: "acme", Name: "submitted_at_start", Language: "en"})
	if err != nil || sub.Status != record.TemplatePending || sub.ProviderTemplateID == "" {
		t.Errorf("template without status = %+v, %v; want submitted (pending, with the provider's id)", sub, err)
	}
	draft, err := st.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: "acme", Name: "still_a_draft", Language: "en"})
	if err != nil || draft.Status != record.TemplateDraft {
		t.Errorf("draft = %+v, %v", draft, err)
	}

	// Applying the same file again changes nothing: same credentials, no
	// reconnect.
	if err := applyBootstrap(ctx, svc, st, f, log); err != nil {
		t.Fatal(err)
	}
	if c2 := connectionOf(t, svc, "acme", "whatsapp"); c2.Generation != c.Generation {
		t.Errorf("same credentials reconnected: generation %d -> %d", c.Generation, c2.Generation)
	}
	// A new token reconnects; the draft without its status is submitted.
	f2, err := loadBootstrap(writeFile(t, strings.Replace(strings.Replace(channelsBootstrap, "EAAGsecretTokenWXYZ", "EAAGrotatedTokenJKLM", 1), `"status":"draft",`, "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyBootstrap(ctx, svc, st, f2, log); err != nil {
		t.Fatal(err)
	}
	if c2 := connectionOf(t, svc, "acme", "whatsapp"); c2.Generation != c.Generation+1 || c2.TokenHint != "JKLM" {
		t.Errorf("rotated token: generation %d hint %s; want %d JKLM", c2.Generation, c2.TokenHint, c.Generation+1)
	}
	if d, _ := ts.Get(ctx, draft.ID); d.Status != record.TemplatePending {
		t.Errorf("draft after its status was dropped from the file: %s, want pending", d.Status)
	}
	for _, secret := range []string{"secretToken", "rotatedToken", "pageToken"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the bootstrap logged a token:\n%s", logs.String())
		}
	}
}

// TestBootstrapProviderRefusalIsNotFatal: credentials the provider refuses
// (the fake provider refuses deny_ tokens) are logged as an error and leave
// the channel as it was; the rest of the file applies and the start goes
// on, since a provider's verdict is not a mistake in the file.
func TestBootstrapProviderRefusalIsNotFatal(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f, err := loadBootstrap(writeFile(t, strings.Replace(channelsBootstrap, "EAAGsecretTokenWXYZ", "deny_expiredTokenWXYZ", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyBootstrap(ctx, svc, st, f, log); err != nil {
		t.Fatalf("applyBootstrap: %v; want the start to go on", err)
	}
	if st, err := svc.Workspace("acme").Channels.Get(ctx, "whatsapp"); err != nil || st.Connection != nil {
		t.Errorf("the refused whatsapp connection: %+v, %v; want none stored", st, err)
	}
	if snd, err := svc.ChannelSender(ctx, "acme", "messenger"); err != nil || snd.AccountID != "5550001" {
		t.Errorf("messenger sender = %v, %v; want the file's other channel connected", snd, err)
	}
	if !strings.Contains(logs.String(), "did not verify") || !strings.Contains(logs.String(), "workspaces[0].channels[1]") {
		t.Errorf("log does not name the refused entry:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "expiredToken") {
		t.Errorf("the bootstrap logged a token:\n%s", logs.String())
	}
}

func TestBootstrapRefusesBadCredentials(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, from, to, wantErr string
	}{
		{"phone-number id not digits", `"phone_number_id":"1234567890"`, `"phone_number_id":"12-34"`, "workspaces[0].channels[1].phone_number_id: must be the account's numeric id"},
		{"no waba id", `,"waba_id":"9876543210"`, ``, "workspaces[0].channels[1].waba_id: must be the WhatsApp Business Account's numeric id"},
		{"empty token", `"access_token":"EAAGpageTokenPQRS"`, `"access_token":""`, "workspaces[0].channels[2].access_token: is required"},
		{"page id not digits", `"page_id":"5550001"`, `"page_id":"acme-page"`, "workspaces[0].channels[2].page_id: must be the account's numeric id"},
		{"unknown member", `"page_id":"5550001"`, `"pageid":"5550001"`, `unknown field "pageid"`},
		{"channel twice", `["instagram",`, `["messenger",`, `workspaces[0].channels[2]: channel "messenger" appears twice`},
		{"unknown channel object", `{"channel":"messenger","page_id"`, `{"channel":"telegram","page_id"`, "workspaces[0].channels[2].channel: must be one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, st := newService(t)
			body := strings.Replace(channelsBootstrap, tc.from, tc.to, 1)
			if body == channelsBootstrap {
				t.Fatalf("the case changes nothing")
			}
			f, err := loadBootstrap(writeFile(t, body))
			if err == nil {
				err = applyBootstrap(ctx, svc, st, f, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "EAAG") {
				t.Errorf("the error shows a token: %v", err)
			}
			if _, err := svc.GetWorkspace(ctx, "acme"); messaging.ErrorCode(err) != messaging.CodeNotFound {
				t.Errorf("a refused bootstrap created the workspace (err %v)", err)
			}
		})
	}
}
