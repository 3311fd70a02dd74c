package main

import (
	"errors"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
	"github.com/ujumbe/messaging/provider/providertest"
)

// TestMetaAppIDFlag: -meta-app-id (or MESSAGING_META_APP_ID) reaches the
// Meta provider, whose template sample uploads then open their session
// under that app at the Graph API; without it they fail with
// app_not_configured; an id that is not digits is refused at start.
func TestMetaAppIDFlag(t *testing.T) {
	graph := metatest.New()
	t.Cleanup(graph.Close)
	sender := &messaging.ChannelSender{WorkspaceID: "acme", Channel: messaging.ChannelWhatsApp, AccountID: metaPhoneID, WABAID: metaWABA, AccessToken: metaToken}
	upload := func(args ...string) error {
		t.Helper()
		cfg, err := parseFlags(append([]string{"-provider", "meta", "-meta-base-url", graph.URL()}, args...))
		if err != nil {
			t.Fatal(err)
		}
		p, err := newMetaProvider(cfg, metaSecret)
		if err != nil {
			return err
		}
		up, ok := p.(messaging.TemplateSampleUploader)
		if !ok {
			t.Fatalf("%T is not a TemplateSampleUploader", p)
		}
		r, err := up.UploadTemplateSample(t.Context(), sender, providertest.SampleUpload("image"))
		if err == nil && (r == nil || r.ProviderMediaID == "") {
			t.Fatalf("UploadTemplateSample = %+v, want a handle", r)
		}
		return err
	}

	if err := upload("-meta-app-id", "1517776481860111"); err != nil {
		t.Fatalf("-meta-app-id: %v", err)
	}
	t.Setenv("MESSAGING_META_APP_ID", "2222222222")
	if err := upload(); err != nil {
		t.Fatalf("MESSAGING_META_APP_ID: %v", err)
	}
	var apps []string
	for _, s := range graph.TemplateSamples() {
		apps = append(apps, s.AppID)
		if s.Handle == "" || s.Authorization != "OAuth "+metaToken {
			t.Errorf("sample %+v: want its bytes received with the token", s)
		}
	}
	if len(apps) != 2 || apps[0] != "1517776481860111" || apps[1] != "2222222222" {
		t.Errorf("upload sessions opened under apps %v, want the flag's then the env's", apps)
	}

	t.Setenv("MESSAGING_META_APP_ID", "")
	var se *messaging.SendError
	if err := upload(); !errors.As(err, &se) || se.Code != metaprovider.CodeAppNotConfigured {
		t.Errorf("no app id: %v, want %s", err, metaprovider.CodeAppNotConfigured)
	}
	if err := upload("-meta-app-id", "my-app"); err == nil {
		t.Error("-meta-app-id my-app was accepted")
	}
}
