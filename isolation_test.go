package messaging_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

func TestWorkspaceIsolation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	msg := f.mustSend(t, f.acme, textMsg(kenya))
	ct := f.mustContact(t, f.acme, jane())
	tpl := f.mustTemplate(t, f.acme, approved("acme_only", body("Hi")))

	tests := []struct {
		name  string
		op    func() error
		code  messaging.Code
		field string
	}{
		{"Messages.Get", func() error { _, err := f.other.Messages.Get(f.ctx, msg.MessageID); return err }, messaging.CodeNotFound, ""},
		{"Contacts.Get", func() error { _, err := f.other.Contacts.Get(f.ctx, ct.ID); return err }, messaging.CodeNotFound, ""},
		{"Contacts.Update", func() error {
			_, err := f.other.Contacts.Update(f.ctx, ct.ID, &messaging.ContactUpdateParams{Company: ptr("Hijacked")})
			return err
		}, messaging.CodeNotFound, ""},
		{"Templates.Get", func() error { _, err := f.other.Templates.Get(f.ctx, tpl.ID); return err }, messaging.CodeNotFound, ""},
		{"Templates.SetStatus", func() error { _, err := f.other.Templates.SetStatus(f.ctx, tpl.ID, "paused", ""); return err }, messaging.CodeNotFound, ""},
		{"Templates.SetStatus pending", func() error { _, err := f.other.Templates.SetStatus(f.ctx, tpl.ID, "pending", ""); return err }, messaging.CodeNotFound, ""},
		{"SendTemplate by name", func() error {
			_, err := f.other.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: "acme_only"})
			return err
		}, messaging.CodeTemplateNotFound, "template_name"},
		{"UpdateStatus", func() error {
			_, err := f.svc.UpdateStatus(f.ctx, &messaging.StatusUpdate{WorkspaceID: "other", MessageID: msg.MessageID, Status: "sent"})
			return err
		}, messaging.CodeNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, tc.op(), tc.code, tc.field)
		})
	}

	// acme's records are untouched and still visible to acme.
	gotMsg, err := f.acme.Messages.Get(f.ctx, msg.MessageID)
	if err != nil || gotMsg.Status != "queued" {
		t.Errorf("acme message = %+v, %v", gotMsg, err)
	}
	gotCt, err := f.acme.Contacts.Get(f.ctx, ct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ct, gotCt); d != "" {
		t.Errorf("acme contact changed (-want +got):\n%s", d)
	}
	gotTpl, err := f.acme.Templates.Get(f.ctx, tpl.ID)
	if err != nil || gotTpl.Status != "approved" {
		t.Errorf("acme template = %+v, %v", gotTpl, err)
	}
	if evs := f.events.take(); len(evs) != 0 {
		t.Errorf("got %d events, want 0", len(evs))
	}

	// Lists of other show nothing of acme.
	page, err := f.other.Contacts.List(f.ctx, &messaging.ContactQuery{Search: "jane"})
	if err != nil || page.Total != 0 {
		t.Errorf("other's contact search = %+v, %v; want nothing", page, err)
	}
	tpls, err := f.other.Templates.List(f.ctx, nil)
	if err != nil || len(tpls) != 0 {
		t.Errorf("other's templates = %v, %v; want none", tpls, err)
	}
}
