package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// token is the access token the channel tests connect with.
const token = "EAAGtestTOKENsecret9876"

// TestChannelsPage: every channel is listed with its status; the
// flag-only channels of the fixture are connected without credentials.
func TestChannelsPage(t *testing.T) {
	f := setup(t)
	r := f.get("/w/acme/channels")
	if r.status != http.StatusOK {
		t.Fatalf("channels answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, "WhatsApp", "Instagram", "Messenger", `<span class="badge st-connected">connected</span>`,
		"connected without credentials", `name="phone_number_id"`, `name="page_id"`, `name="instagram_account_id"`,
		`type="password"`, "Disconnect whatsapp", `data-confirm="Disconnect whatsapp?`)
	other := f.get("/w/other/channels")
	other.wantContains(t, `<span class="badge st-disconnected">disconnected</span>`)
}

// TestChannelConnectTokenShownNever: connecting through the form stores
// the credentials (Channels.Connect); no page shows the token after,
// only its last 4 characters.
func TestChannelConnectTokenShownNever(t *testing.T) {
	f := setup(t)
	r := f.post("/w/acme/channels/whatsapp", url.Values{"phone_number_id": {"1234567890"}, "waba_id": {"555"},
		"display_phone_number": {"+254712345678"}, "access_token": {token}})
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/channels" {
		t.Fatalf("connect answered %d to %q:\n%s", r.status, r.location, r.body)
	}
	c, err := f.connection("acme", "whatsapp")
	if err != nil || c.AccountID != "1234567890" || c.WABAID != "555" || c.TokenHint != "9876" {
		t.Fatalf("connection = %+v, %v", c, err)
	}
	page := f.get("/w/acme/channels")
	page.wantContains(t, "<code>1234567890</code>", "<code>555</code>", "&#43;254712345678", "…9876", "Replace credentials")
	for _, path := range []string{"/w/acme/channels", "/w/acme/overview", "/w/acme/templates", "/workspaces"} {
		if strings.Contains(f.get(path).body, token) || strings.Contains(f.get(path).body, token[:len(token)-4]) {
			t.Errorf("%s shows the access token", path)
		}
	}
	events, _, err := f.svc.AuditEvents(f.ctx, "acme", "", 10)
	if err != nil || len(events) == 0 || events[0].Action != record.AuditChannelConnected || events[0].Actor != "dashboard:op" {
		t.Errorf("audit = %+v, %v; want channel.connected by dashboard:op first", events, err)
	}
}

// connection returns the connection record of ws on channel; not_found
// when the channel was never connected with credentials.
func (f *fixture) connection(ws, channel string) (*messaging.ChannelConnection, error) {
	st, err := f.svc.Workspace(ws).Channels.Get(f.ctx, channel)
	if err != nil {
		return nil, err
	}
	if st.Connection == nil {
		return nil, &messaging.Error{Code: messaging.CodeNotFound, Message: "no connection of " + channel}
	}
	return st.Connection, nil
}

// TestChannelConnectErrors: the library's message is shown next to the
// field of the channel's form, the token is not put back into the form,
// and nothing changes.
func TestChannelConnectErrors(t *testing.T) {
	f := setup(t)
	r := f.post("/w/acme/channels/whatsapp", url.Values{"phone_number_id": {"12ab"}, "waba_id": {"555"}, "access_token": {token}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad account id answered %d; want 422", r.status)
	}
	r.wantContains(t, `id="whatsapp-phone_number_id-err">phone_number_id: must be the account&#39;s numeric id`, `id="whatsapp-phone_number_id" name="phone_number_id" type="text" value="12ab"`)
	if strings.Contains(r.body, token) {
		t.Error("the refused form echoes the access token")
	}
	if strings.Contains(r.body, `id="messenger-page_id-err"`) {
		t.Error("the error is shown on another channel's form")
	}
	if _, err := f.connection("acme", "whatsapp"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("the refused form stored a connection: %v", err)
	}
	r = f.post("/w/acme/channels/messenger", url.Values{"page_id": {"42"}, "access_token": {"short"}})
	r.wantContains(t, `id="messenger-access_token-err">access_token: must be 8 to`)
	// An account connected to another workspace: the library's conflict,
	// next to the account field.
	if r := f.post("/w/other/channels/whatsapp", url.Values{"phone_number_id": {"1234567890"}, "waba_id": {"555"}, "access_token": {token}}); r.status != http.StatusSeeOther {
		t.Fatalf("connecting other answered %d", r.status)
	}
	r = f.post("/w/acme/channels/whatsapp", url.Values{"phone_number_id": {"1234567890"}, "waba_id": {"556"}, "access_token": {token}})
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("another workspace's account answered %d; want 422", r.status)
	}
	r.wantContains(t, `id="whatsapp-phone_number_id-err">phone_number_id: the account is connected to another workspace`)
	if strings.Contains(r.body, token) {
		t.Error("the refused form echoes the access token")
	}
	if r := f.post("/w/acme/channels/telegram", url.Values{"access_token": {token}}); r.status != http.StatusNotFound {
		t.Errorf("an unknown channel answered %d; want 404", r.status)
	}
}

// TestChannelDisconnect: disconnecting keeps the record as history and
// shows the channel disconnected.
func TestChannelDisconnect(t *testing.T) {
	f := setup(t)
	f.post("/w/acme/channels/instagram", url.Values{"instagram_account_id": {"777"}, "access_token": {token}})
	r := f.post("/w/acme/channels/instagram/disconnect", nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("disconnect answered %d:\n%s", r.status, r.body)
	}
	states, err := f.svc.Workspace("acme").Channels.List(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if st.Channel == "instagram" && st.Status != record.ConnectionDisconnected {
			t.Errorf("instagram is %s after disconnect", st.Status)
		}
	}
	page := f.get("/w/acme/channels")
	if strings.Contains(page.body, "Disconnect instagram") {
		t.Error("a disconnected channel still offers to disconnect")
	}
	if strings.Contains(page.body, "<code>777</code>") {
		t.Error("a disconnected channel still shows its account")
	}
}

// TestChannelErrorReason: a connection the provider refused shows the
// reason.
func TestChannelErrorReason(t *testing.T) {
	f := setup(t)
	f.post("/w/acme/channels/whatsapp", url.Values{"phone_number_id": {"1234567890"}, "waba_id": {"555"}, "access_token": {token}})
	f.clock.Advance(time.Second)
	f.prov.FailNext(&messaging.SendError{Code: "190", Text: "Error validating access token: Session has expired", Credentials: true})
	if _, err := f.svc.Workspace("acme").Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Second)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.get("/w/acme/channels").wantContains(t, `<span class="badge st-error">error</span>`, "Session has expired")
}

// TestChannelsOtherWorkspace: a viewer cannot connect another workspace's
// channels.
func TestChannelsOtherWorkspace(t *testing.T) {
	f := setup(t)
	f.as = "acme"
	if r := f.post("/w/other/channels/whatsapp", url.Values{"phone_number_id": {"1"}, "waba_id": {"2"}, "access_token": {token}}); r.status != http.StatusNotFound {
		t.Errorf("connecting other's channel answered %d; want 404", r.status)
	}
	if _, err := f.connection("other", "whatsapp"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("other's channel was connected: %v", err)
	}
}

// TestChannelVerifyNow: "Verify now" asks the provider through
// Channels.Verify: a pending connection becomes connected once the
// provider answers, and one whose token the provider refuses shows the
// reason.
func TestChannelVerifyNow(t *testing.T) {
	f := setup(t)
	f.post("/w/acme/channels/messenger", url.Values{"page_id": {"5550001"}, "access_token": {fakeprovider.UnreachableTokenPrefix + token}})
	page := f.get("/w/acme/channels")
	page.wantContains(t, `<span class="badge st-pending_verification">pending_verification</span>`, "Verify messenger now")
	r := f.post("/w/acme/channels/messenger/verify", nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("verify answered %d:\n%s", r.status, r.body)
	}
	if st, err := f.connection("acme", "messenger"); err != nil || st.Status != record.ConnectionPending {
		t.Errorf("after a verification the provider could not answer: %+v, %v; want pending_verification", st, err)
	}

	f.post("/w/acme/channels/messenger", url.Values{"page_id": {"5550001"}, "access_token": {token}})
	f.get("/w/acme/channels").wantContains(t, `<span class="badge st-connected">connected</span>`)
	f.prov.SetAccountToken("5550001", "EAAGanother-token")
	if r := f.post("/w/acme/channels/messenger/verify", nil); r.status != http.StatusSeeOther {
		t.Fatalf("verify answered %d:\n%s", r.status, r.body)
	}
	st, err := f.connection("acme", "messenger")
	if err != nil || st.Status != record.ConnectionError {
		t.Fatalf("after a refused verification: %+v, %v; want error", st, err)
	}
	f.get("/w/acme/channels").wantContains(t, `<span class="badge st-error">error</span>`, "The provider refused the credentials:</strong> [100] Unsupported get request")
}

// TestChannelLimits: a connected WhatsApp channel shows its quality
// rating, messaging tier and throughput; the throughput form sets it
// (1 to 1000) and shows a refusal at its field; the templates page shows a
// template's quality.
func TestChannelLimits(t *testing.T) {
	f := setup(t)
	if r := f.post("/w/acme/channels/whatsapp", url.Values{"phone_number_id": {"1234567890"}, "waba_id": {"555"}, "access_token": {token}}); r.status != http.StatusSeeOther {
		t.Fatalf("connect answered %d:\n%s", r.status, r.body)
	}
	page := f.get("/w/acme/channels")
	page.wantContains(t, "Quality rating", `<span class="badge quality-GREEN">GREEN</span>`, "Messaging tier", "<code>TIER_1K</code>",
		`id="whatsapp-throughput" name="throughput" type="number" min="1" max="1000" step="1" value="80"`)
	if strings.Contains(page.body, `id="messenger-throughput"`) {
		t.Error("a channel without credentials shows a throughput form")
	}
	for _, bad := range []string{"0", "1001", "fast"} {
		r := f.post("/w/acme/channels/whatsapp/throughput", url.Values{"throughput": {bad}})
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("throughput %q answered %d; want 422", bad, r.status)
		}
		r.wantContains(t, `id="whatsapp-throughput-err">throughput: `, `value="`+bad+`"`)
	}
	r := f.post("/w/acme/channels/whatsapp/throughput", url.Values{"throughput": {"250"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("throughput 250 answered %d:\n%s", r.status, r.body)
	}
	if c, err := f.connection("acme", "whatsapp"); err != nil || c.Throughput != 250 {
		t.Errorf("connection = %+v, %v; want throughput 250", c, err)
	}
	f.get("/w/acme/channels").wantContains(t, `value="250"`)
	if _, err := f.svc.ApplyChannelQualityEvent(f.ctx, &messaging.ChannelQualityEvent{OwnerID: "555", Event: "FLAGGED", QualityRating: "RED"}); err != nil {
		t.Fatal(err)
	}
	f.get("/w/acme/channels").wantContains(t, `<span class="badge quality-RED">RED</span>`)

	tpl, err := f.svc.Workspace("acme").Templates.Create(f.ctx, &messaging.TemplateCreateParams{Name: "rated", Language: "en",
		Category: record.CategoryUtility, Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{WorkspaceID: "acme", Name: tpl.Name, Language: tpl.Language,
		Event: record.ProviderTemplateQuality, Quality: "YELLOW"}); err != nil {
		t.Fatal(err)
	}
	f.get("/w/acme/templates").wantContains(t, `<span class="badge quality-YELLOW">YELLOW</span>`)
}
