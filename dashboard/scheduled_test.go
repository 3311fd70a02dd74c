package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
)

// TestCancelScheduled: a scheduled message's page shows "Scheduled for
// <time>" and a Cancel form; posting it cancels the message, goes back to
// the page with a notice, and the page then shows canceled and no Cancel.
// A second post is 409 with the library's reason; a message already
// handed over offers no Cancel; another workspace's message is 404.
func TestCancelScheduled(t *testing.T) {
	f := setup(t)
	at := f.clock.Now().Add(2 * time.Hour)
	res, err := f.svc.Workspace("acme").Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "later", SendAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	page := "/w/acme/messages/" + res.MessageID
	form := `<form method="post" action="/dashboard/w/acme/messages/` + res.MessageID + `/cancel"`
	f.get(page).wantContains(t, `Scheduled for <time datetime="`+at.UTC().Format("2006-01-02T15:04:05.000Z")+`">`, form, `>Cancel</button>`)

	if r := f.post("/w/other/messages/"+res.MessageID+"/cancel", nil); r.status != http.StatusNotFound {
		t.Errorf("cancelling another workspace's message answered %d; want 404", r.status)
	}
	r := f.postFollow(page+"/cancel", nil)
	if r.status != http.StatusOK || r.location != "/dashboard"+page {
		t.Fatalf("cancel ended on %d %s; want the message's page", r.status, r.location)
	}
	r.wantContains(t, `<div class="notice" role="status">Message canceled: it will not be sent.</div>`, `badge st-canceled">canceled</span>`)
	if strings.Contains(r.body, form) {
		t.Error("a canceled message still offers Cancel")
	}
	r = f.post(page+"/cancel", nil)
	if r.status != http.StatusConflict {
		t.Errorf("a second cancel answered %d; want 409", r.status)
	}
	r.wantContains(t, `<div class="problem" role="alert">status: only a queued message can be canceled; this one is canceled`)

	out := f.sendText("acme", "+254712345678", "now")
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	if r := f.get("/w/acme/messages/" + out); strings.Contains(r.body, "/cancel\"") || strings.Contains(r.body, "Scheduled for") {
		t.Error("a message handed over offers Cancel or shows a schedule")
	}
	f.get("/w/acme/messages?status=canceled").wantContains(t, res.MessageID)
}
