package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// bootstrapFile is the JSON applied at start-up with -bootstrap.
type bootstrapFile struct {
	Workspaces  []bootstrapWorkspace  `json:"workspaces"`
	SMSAccounts []bootstrapSMSAccount `json:"sms_accounts"`
}

type bootstrapWorkspace struct {
	ID        string                           `json:"id"`
	Name      string                           `json:"name"`
	Channels  []bootstrapChannel               `json:"channels"`
	APIKeys   []bootstrapKey                   `json:"api_keys"`
	Templates []messaging.TemplateCreateParams `json:"templates"`
	Webhooks  []bootstrapWebhook               `json:"webhooks"`
	// OutsideWindow, when given, is the workspace's policy for free-form
	// sends outside the customer-service window: "provider" or "reject".
	OutsideWindow string `json:"outside_window,omitempty"`
	// UnconfirmedSends, when given, is the workspace's policy for a send
	// whose outcome stays unknown through the confirmation window:
	// "resend" or "fail".
	UnconfirmedSends string `json:"unconfirmed_sends,omitempty"`
	// OptOutKeywords and OptInKeywords, when given, replace the
	// workspace's opt-out and opt-in keywords; an empty list restores the
	// defaults, and an absent one leaves the stored list.
	OptOutKeywords *[]string `json:"opt_out_keywords,omitempty"`
	OptInKeywords  *[]string `json:"opt_in_keywords,omitempty"`
}

// bootstrapChannel is a channel entry: a string (the channel, connected
// without credentials: enough for the fake provider) or an object with
// the credentials of a provider connection.
type bootstrapChannel struct {
	Channel            string `json:"channel"`
	PhoneNumberID      string `json:"phone_number_id,omitempty"`
	WABAID             string `json:"waba_id,omitempty"`
	PageID             string `json:"page_id,omitempty"`
	InstagramAccountID string `json:"instagram_account_id,omitempty"`
	AccessToken        string `json:"access_token,omitempty"`
	DisplayPhoneNumber string `json:"display_phone_number,omitempty"`
	// credentials is true for the object form.
	credentials bool
}

// UnmarshalJSON reads a string or an object (unknown members refused).
func (c *bootstrapChannel) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		*c = bootstrapChannel{}
		return json.Unmarshal(s, &c.Channel)
	}
	type plain bootstrapChannel
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*c = bootstrapChannel(p)
	c.credentials = true
	return nil
}

// connectCredentials returns the credentials of an object entry as the
// library takes them: the members given, by name; the library reads them
// by the channel's spec (and refuses a member of another channel).
func (c *bootstrapChannel) connectCredentials() *messaging.ChannelCredentials {
	creds := &messaging.ChannelCredentials{Fields: map[string]string{}, AccessToken: c.AccessToken}
	for name, v := range map[string]string{"phone_number_id": c.PhoneNumberID, "waba_id": c.WABAID, "page_id": c.PageID,
		"instagram_account_id": c.InstagramAccountID, "display_phone_number": c.DisplayPhoneNumber} {
		if v != "" {
			creds.Fields[name] = v
		}
	}
	return creds
}

type bootstrapWebhook struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

type bootstrapKey struct {
	Key       string     `json:"key"`
	Scopes    []string   `json:"scopes"`
	Revoked   bool       `json:"revoked"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// loadBootstrap reads and strictly decodes a bootstrap file.
func loadBootstrap(path string) (*bootstrapFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f bootstrapFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// pathError prefixes err with the JSON path of the element at fault.
func pathError(path string, err error) error {
	var me *messaging.Error
	if errors.As(err, &me) {
		msg := me.Message
		if me.Field != "" {
			return fmt.Errorf("%s.%s", path, msg)
		}
		return fmt.Errorf("%s: %s", path, msg)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// applyBootstrap makes svc hold what f says, idempotently: it first
// applies f to an empty in-memory service, so that any invalid element is
// reported with its JSON path before anything reaches svc's store; then it
// checks f against svc's records (a key of another workspace, a revoked key
// the file wants working, a template the file would edit or move along a
// transition the review rules forbid, a renamed workspace) and refuses the
// whole file, naming the JSON path, before anything is written; then it
// applies f to svc: new records are created, and the records f names take
// every field f gives them (key scopes, expiry and revocation, template
// status, webhook secret). Records f does not name are left as they are.
// st is the store svc runs on (the one given to messaging.New), where the
// existing keys and templates are looked up.
func applyBootstrap(ctx context.Context, svc *messaging.Service, st driver.Store, f *bootstrapFile, log *slog.Logger) error {
	if !svc.UsesStore(st) {
		return errors.New("bootstrap: the store is not the one the service runs on")
	}
	loopback, private := svc.WebhookAddressPolicy()
	if err := dryApply(ctx, f, loopback, private); err != nil {
		return err
	}
	if err := checkExisting(ctx, svc, st, f); err != nil {
		return err
	}
	return apply(ctx, svc, st, f, log)
}

// dryApply applies f's workspaces to an empty in-memory service with the
// given webhook address policy, reporting the first invalid element with
// its JSON path. It needs no store, so the server runs it before it
// creates any file.
func dryApply(ctx context.Context, f *bootstrapFile, loopback, private bool) error {
	st := memstore.New()
	dry, err := messaging.New(st, fakeprovider.New(), &messaging.Options{SecretKey: make([]byte, 32),
		Webhooks: messaging.WebhookOptions{AllowLoopback: loopback, AllowPrivate: private}})
	if err != nil {
		return err
	}
	return apply(ctx, dry, st, f, nil)
}

// checkExisting refuses f when it asks for a change to svc's records that
// the library's rules do not allow, reading its keys and templates in st
// (svc's store). It changes nothing.
func checkExisting(ctx context.Context, svc *messaging.Service, st driver.Store, f *bootstrapFile) error {
	for i, ws := range f.Workspaces {
		p := fmt.Sprintf("workspaces[%d]", i)
		cur, err := svc.GetWorkspace(ctx, ws.ID)
		if messaging.ErrorCode(err) == messaging.CodeNotFound {
			cur = nil
		} else if err != nil {
			return err
		}
		if cur != nil && cur.Name != ws.Name {
			return fmt.Errorf("%s.name: differs from the name %q of the existing workspace %q; the bootstrap file does not rename workspaces", p, cur.Name, ws.ID)
		}
		for j, k := range ws.APIKeys {
			kp := fmt.Sprintf("%s.api_keys[%d]", p, j)
			existing, err := findKey(ctx, st, k.Key)
			if err != nil {
				return err
			}
			switch {
			case existing == nil:
			case existing.WorkspaceID != ws.ID:
				return fmt.Errorf("%s.key: already belongs to another workspace", kp)
			case existing.RevokedAt != nil && !k.Revoked:
				return fmt.Errorf("%s.revoked: the key was revoked and revocation is final; the file must say \"revoked\": true", kp)
			}
		}
		if cur == nil {
			continue
		}
		for j, t := range ws.Templates {
			tp := fmt.Sprintf("%s.templates[%d]", p, j)
			existing, err := st.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: ws.ID, Name: t.Name, Language: t.Language})
			if errors.Is(err, messaging.ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			if existing.Category != t.Category {
				return fmt.Errorf("%s.category: differs from the submitted template %q (%s), which is %s; submitted templates cannot be edited: submit a correction under a new name", tp, t.Name, t.Language, existing.Category)
			}
			if !sameComponents(existing.Components, t.Components) {
				return fmt.Errorf("%s.components: differ from those of the submitted template %q (%s); submitted templates cannot be edited: submit a correction under a new name", tp, t.Name, t.Language)
			}
			if t.Status != "" && t.Status != existing.Status && !messaging.TemplateTransitionAllowed(existing.Status, t.Status) {
				return fmt.Errorf("%s.status: the template %q (%s) is %s, and the review rules do not allow moving it from %s to %s", tp, t.Name, t.Language, existing.Status, existing.Status, t.Status)
			}
		}
	}
	return nil
}

// sameComponents reports whether two template bodies are the same, as the
// API would show them.
func sameComponents(a, b []messaging.TemplateComponent) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// findKey returns the key of st whose plaintext is key, or nil.
func findKey(ctx context.Context, st driver.Store, key string) (*messaging.APIKey, error) {
	cands, err := st.APIKeysByPrefix(ctx, messaging.KeyLookupID(key))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	for _, k := range cands {
		if subtle.ConstantTimeCompare(sum[:], k.Hash) == 1 {
			return k, nil
		}
	}
	return nil, nil
}

// sameExpiry reports whether two optional expiry times are the same
// instant.
func sameExpiry(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// sameScopes reports whether the scopes of a stored key (sorted, no
// duplicates) are those the file lists.
func sameScopes(stored, file []string) bool {
	f := slices.Clone(file)
	slices.Sort(f)
	return slices.Equal(stored, slices.Compact(f))
}

// connect applies an object channel entry of workspace ws: it connects
// the channel with its credentials unless the workspace's connection
// already holds the account with exactly these (the account and owner ids
// read by the channel's spec, the token compared in constant time). The
// provider's verdict is not the file's: credentials the provider refuses,
// or cannot verify while the workspace's proven connection is kept, are
// logged as errors and leave the channel as it was; the start goes on.
func connect(ctx context.Context, svc *messaging.Service, ws string, ch *bootstrapChannel, path string, log *slog.Logger) error {
	chans := svc.Workspace(ws).Channels
	creds := ch.connectCredentials()
	i := slices.IndexFunc(svc.ChannelSpecs(), func(s messaging.ChannelSpec) bool { return s.Name == ch.Channel })
	if i < 0 {
		return fmt.Errorf("%s.channel: must be one of %s (got %q)", path, strings.Join(svc.Channels(), ", "), ch.Channel)
	}
	spec := svc.ChannelSpecs()[i]
	account, owner := creds.Fields[spec.Account.Name], creds.Fields[spec.Owner.Name]
	cur, err := chans.Get(ctx, ch.Channel)
	if err == nil && cur.Connection != nil && cur.Connection.Holds() && cur.Connection.AccountID == account && cur.Connection.WABAID == owner {
		snd, err := svc.ChannelSender(ctx, ws, ch.Channel)
		if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare([]byte(snd.AccessToken), []byte(creds.AccessToken)) == 1 {
			return nil
		}
	}
	st, err := chans.Connect(ctx, ch.Channel, creds)
	if err != nil {
		var ve *messaging.VerificationError
		if errors.As(err, &ve) || messaging.ErrorCode(err) == messaging.CodeServiceUnavailable {
			if log != nil {
				log.Error("bootstrap: the channel provider did not verify a channel's credentials; the channel is left as it was",
					"path", path, "err", err.Error())
			}
			return nil
		}
		return pathError(path, err)
	}
	// The token is never logged: only its last 4 characters.
	logChange(log, path, fmt.Sprintf("%s connected to account %s (token …%s): %s", ch.Channel, account, st.TokenHint, st.Status))
	return nil
}

// applySettings sets the workspace's outside_window and unconfirmed_sends
// policies and keyword lists when the file gives ones that differ from the stored ones cur, in
// one call (nothing is stored if one is refused).
func applySettings(ctx context.Context, svc *messaging.Service, log *slog.Logger, p string, ws *bootstrapWorkspace, cur *messaging.WorkspaceInfo) error {
	if ws.OutsideWindow == "" && ws.UnconfirmedSends == "" && ws.OptOutKeywords == nil && ws.OptInKeywords == nil {
		return nil
	}
	var set messaging.WorkspaceSettings
	var changes [][2]string
	stored := cur.ActiveOutsideWindow()
	if ws.OutsideWindow != "" && stored != ws.OutsideWindow {
		set.OutsideWindow = &ws.OutsideWindow
		changes = append(changes, [2]string{p + ".outside_window", fmt.Sprintf("%s (was %s)", ws.OutsideWindow, stored)})
	}
	if was := cur.ActiveUnconfirmedSends(); ws.UnconfirmedSends != "" && was != ws.UnconfirmedSends {
		set.UnconfirmedSends = &ws.UnconfirmedSends
		changes = append(changes, [2]string{p + ".unconfirmed_sends", fmt.Sprintf("%s (was %s)", ws.UnconfirmedSends, was)})
	}
	for _, l := range []struct {
		field    string
		file     *[]string
		stored   []string
		active   func() []string
		settings **[]string
	}{
		{"opt_out_keywords", ws.OptOutKeywords, cur.OptOutKeywords, cur.ActiveOptOutKeywords, &set.OptOutKeywords},
		{"opt_in_keywords", ws.OptInKeywords, cur.OptInKeywords, cur.ActiveOptInKeywords, &set.OptInKeywords},
	} {
		if l.file == nil {
			continue
		}
		folded := make([]string, len(*l.file))
		for i, k := range *l.file {
			folded[i] = messaging.FoldKeyword(k)
		}
		if slices.Equal(folded, l.stored) {
			continue
		}
		*l.settings = l.file
		now := "the defaults"
		if len(folded) > 0 {
			now = strings.Join(folded, ", ")
		}
		changes = append(changes, [2]string{p + "." + l.field, fmt.Sprintf("%s (was %s)", now, strings.Join(l.active(), ", "))})
	}
	if len(changes) == 0 {
		return nil
	}
	if _, err := svc.SetWorkspaceSettings(ctx, ws.ID, &set); err != nil {
		return pathError(p, err)
	}
	for _, c := range changes {
		logChange(log, c[0], c[1])
	}
	return nil
}

// logChange logs one change the file made to an existing record.
func logChange(log *slog.Logger, path, what string) {
	if log != nil {
		log.Info("bootstrap changed a record", "path", path, "change", what)
	}
}

// apply applies f's workspaces to svc, which runs on st, in order (see
// applyBootstrap).
func apply(ctx context.Context, svc *messaging.Service, st driver.Store, f *bootstrapFile, log *slog.Logger) error {
	seen := map[string]bool{}
	for i, ws := range f.Workspaces {
		p := fmt.Sprintf("workspaces[%d]", i)
		if ws.ID == "" {
			return fmt.Errorf("%s.id: is required", p)
		}
		if seen[ws.ID] {
			return fmt.Errorf("%s.id: workspace %q appears twice", p, ws.ID)
		}
		seen[ws.ID] = true
		cur, err := svc.GetWorkspace(ctx, ws.ID)
		if messaging.ErrorCode(err) == messaging.CodeNotFound {
			if cur, err = svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: ws.ID, Name: ws.Name}); err != nil {
				return pathError(p, err)
			}
		} else if err != nil {
			return err
		}
		for _, step := range []func() error{
			func() error { return applySettings(ctx, svc, log, p, &ws, cur) },
			func() error { return applyChannels(ctx, svc, log, p, &ws) },
			func() error { return applyKeys(ctx, svc, st, p, &ws, log) },
			func() error { return applyTemplates(ctx, svc, st, p, &ws, log) },
			func() error { return applyWebhooks(ctx, svc, p, &ws, log) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyChannels connects the channels ws lists (p is its JSON path) and
// disconnects the others.
func applyChannels(ctx context.Context, svc *messaging.Service, log *slog.Logger, p string, ws *bootstrapWorkspace) error {
	chans := svc.Workspace(ws.ID).Channels
	var listed []string
	for j, ch := range ws.Channels {
		cp := fmt.Sprintf("%s.channels[%d]", p, j)
		if slices.Contains(listed, ch.Channel) {
			return fmt.Errorf("%s: channel %q appears twice", cp, ch.Channel)
		}
		listed = append(listed, ch.Channel)
		if !ch.credentials {
			if _, err := chans.Connect(ctx, ch.Channel, nil); err != nil {
				return fmt.Errorf("%s: must be %s (got %q)", cp, orList(svc.Channels()), ch.Channel)
			}
			continue
		}
		if err := connect(ctx, svc, ws.ID, &ch, cp, log); err != nil {
			return err
		}
	}
	for _, ch := range svc.Channels() {
		if !slices.Contains(listed, ch) {
			if _, err := chans.Disconnect(ctx, ch); err != nil {
				return err
			}
		}
	}
	return nil
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// applyKeys makes the API keys of the workspace ws (at JSON path p) what
// the file says: new keys are created, and existing ones (found in st)
// take the file's scopes, expiry and revocation.
func applyKeys(ctx context.Context, svc *messaging.Service, st driver.Store, p string, ws *bootstrapWorkspace, log *slog.Logger) error {
	keys := svc.Workspace(ws.ID).APIKeys
	seen := map[string]bool{}
	for j, k := range ws.APIKeys {
		kp := fmt.Sprintf("%s.api_keys[%d]", p, j)
		if !messaging.WellFormedKey(k.Key) {
			return fmt.Errorf("%s.key: must be 20 to 128 visible ASCII characters", kp)
		}
		if seen[k.Key] {
			return fmt.Errorf("%s.key: appears twice", kp)
		}
		seen[k.Key] = true
		existing, err := findKey(ctx, st, k.Key)
		if err != nil {
			return err
		}
		if existing == nil && k.ExpiresAt != nil && !k.ExpiresAt.After(svc.Now()) {
			// A key that has expired already could never authenticate:
			// not creating it is the same (APIKeys.Create refuses a past
			// expiry). A later file with a future expiry creates it.
			logChange(log, kp, "skipped a new key whose expires_at has passed")
			continue
		}
		if existing == nil {
			existing, _, err = keys.Create(ctx, &messaging.KeyCreateParams{Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, Key: k.Key})
			if err != nil {
				return pathError(kp, err)
			}
		} else if !sameScopes(existing.Scopes, k.Scopes) || !sameExpiry(existing.ExpiresAt, k.ExpiresAt) {
			if _, err := keys.Update(ctx, existing.ID, &messaging.KeyUpdateParams{Scopes: k.Scopes, ExpiresAt: k.ExpiresAt}); err != nil {
				return pathError(kp, err)
			}
			logChange(log, kp, "scopes and expiry of key "+existing.ID)
		}
		if k.Revoked && existing.RevokedAt == nil {
			if _, err := keys.Revoke(ctx, existing.ID); err != nil {
				return pathError(kp, err)
			}
			logChange(log, kp, "revoked key "+existing.ID)
		}
	}
	return nil
}

// applyTemplates creates the templates of the workspace ws (at JSON path
// p) that do not exist, and moves the existing ones (found in st) to the
// status the file gives, submitting those without one.
func applyTemplates(ctx context.Context, svc *messaging.Service, st driver.Store, p string, ws *bootstrapWorkspace, log *slog.Logger) error {
	tpls := svc.Workspace(ws.ID).Templates
	for j, t := range ws.Templates {
		tp := fmt.Sprintf("%s.templates[%d]", p, j)
		_, err := tpls.Create(ctx, &t)
		if messaging.ErrorCode(err) == messaging.CodeConflict {
			existing, err := st.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: ws.ID, Name: t.Name, Language: t.Language})
			if err != nil {
				return err
			}
			if t.Status == "" && existing.Status == record.TemplateDraft {
				// A template without status is submitted at start.
				if _, err := tpls.Submit(ctx, existing.ID); err != nil {
					return pathError(tp, err)
				}
				logChange(log, tp, "template "+existing.ID+" submitted for review")
				continue
			}
			if t.Status != "" && t.Status != existing.Status {
				if _, err := tpls.SetStatus(ctx, existing.ID, t.Status, ""); err != nil {
					return pathError(tp, err)
				}
				logChange(log, tp, fmt.Sprintf("template %s moved from %s to %s", existing.ID, existing.Status, t.Status))
			}
			continue
		}
		if err != nil {
			return pathError(tp, err)
		}
	}
	return nil
}

// applyWebhooks creates the webhook endpoints of the workspace ws (at JSON
// path p) that do not exist, and gives the existing ones (same URL) the
// file's secret, enabled.
func applyWebhooks(ctx context.Context, svc *messaging.Service, p string, ws *bootstrapWorkspace, log *slog.Logger) error {
	if len(ws.Webhooks) == 0 {
		return nil
	}
	hooks := svc.Workspace(ws.ID).Webhooks
	existing, err := hooks.List(ctx)
	if err != nil {
		return err
	}
	for j, h := range ws.Webhooks {
		hp := fmt.Sprintf("%s.webhooks[%d]", p, j)
		if h.Secret == "" {
			return fmt.Errorf("%s.secret: is required", hp)
		}
		i := slices.IndexFunc(existing, func(e *messaging.WebhookEndpoint) bool { return e.URL == h.URL })
		if i < 0 {
			if _, _, err := hooks.Create(ctx, &messaging.WebhookCreateParams{URL: h.URL, Secret: h.Secret}); err != nil {
				return pathError(hp, err)
			}
			continue
		}
		e := existing[i]
		same, err := svc.WebhookEndpointHasSecret(e, h.Secret)
		if err != nil {
			return err
		}
		if same && e.DisabledAt == nil {
			continue
		}
		if _, err := hooks.Update(ctx, e.ID, &messaging.WebhookUpdateParams{Secret: &h.Secret}); err != nil {
			return pathError(hp, err)
		}
		logChange(log, hp, "secret of webhook endpoint "+e.ID+" set, endpoint enabled")
	}
	return nil
}
