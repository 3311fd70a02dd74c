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
	"time"

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
	Channels  []string                         `json:"channels"`
	APIKeys   []bootstrapKey                   `json:"api_keys"`
	Templates []messaging.TemplateCreateParams `json:"templates"`
	Webhooks  []bootstrapWebhook               `json:"webhooks"`
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

// applyBootstrap applies f to svc idempotently: it first applies it to an
// empty in-memory service, so that any invalid element is reported with its
// JSON path before anything reaches svc's store, then checks the keys
// against svc's store, then applies it to svc.
func applyBootstrap(ctx context.Context, svc *messaging.Service, f *bootstrapFile, log *slog.Logger) error {
	dry, err := messaging.New(memstore.New(), fakeprovider.New(), &messaging.Options{SecretKey: make([]byte, 32)})
	if err != nil {
		return err
	}
	if err := apply(ctx, dry, f, nil); err != nil {
		return err
	}
	for i, ws := range f.Workspaces {
		for j, k := range ws.APIKeys {
			if existing, err := findKey(ctx, svc, k.Key); err != nil {
				return err
			} else if existing != nil && existing.WorkspaceID != ws.ID {
				return fmt.Errorf("workspaces[%d].api_keys[%d].key: already belongs to another workspace", i, j)
			}
		}
	}
	return apply(ctx, svc, f, log)
}

// findKey returns the stored key whose plaintext is key, or nil.
func findKey(ctx context.Context, svc *messaging.Service, key string) (*messaging.APIKey, error) {
	cands, err := svc.Store().APIKeysByPrefix(ctx, messaging.KeyLookupID(key))
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

func apply(ctx context.Context, svc *messaging.Service, f *bootstrapFile, log *slog.Logger) error {
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
		if _, err := svc.GetWorkspace(ctx, ws.ID); messaging.ErrorCode(err) == messaging.CodeNotFound {
			if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: ws.ID, Name: ws.Name}); err != nil {
				return pathError(p, err)
			}
		} else if err != nil {
			return err
		}
		for j, ch := range ws.Channels {
			if err := svc.ConnectChannel(ctx, ws.ID, ch); err != nil {
				return fmt.Errorf("%s.channels[%d]: must be whatsapp, instagram or messenger (got %q)", p, j, ch)
			}
		}
		for _, ch := range messaging.Channels() {
			if !slices.Contains(ws.Channels, ch) {
				if err := svc.DisconnectChannel(ctx, ws.ID, ch); err != nil {
					return err
				}
			}
		}
		for j, k := range ws.APIKeys {
			kp := fmt.Sprintf("%s.api_keys[%d]", p, j)
			if !messaging.WellFormedKey(k.Key) {
				return fmt.Errorf("%s.key: must be 20 to 128 visible ASCII characters", kp)
			}
			existing, err := findKey(ctx, svc, k.Key)
			if err != nil {
				return err
			}
			if existing == nil {
				existing, _, err = svc.CreateAPIKey(ctx, &messaging.CreateAPIKeyParams{WorkspaceID: ws.ID, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, Key: k.Key})
				if err != nil {
					return pathError(kp, err)
				}
			}
			if k.Revoked && existing.RevokedAt == nil {
				if err := svc.RevokeAPIKey(ctx, ws.ID, existing.ID); err != nil {
					return pathError(kp, err)
				}
			}
		}
		tpls := svc.Workspace(ws.ID).Templates
		for j, t := range ws.Templates {
			tp := fmt.Sprintf("%s.templates[%d]", p, j)
			_, err := tpls.Create(ctx, &t)
			if messaging.ErrorCode(err) == messaging.CodeConflict {
				continue // already applied
			}
			if err != nil {
				return pathError(tp, err)
			}
		}
		if len(ws.Webhooks) > 0 {
			existing, err := svc.ListWebhookEndpoints(ctx, ws.ID)
			if err != nil {
				return err
			}
			for j, h := range ws.Webhooks {
				if slices.ContainsFunc(existing, func(e *messaging.WebhookEndpoint) bool { return e.URL == h.URL }) {
					continue // already applied
				}
				if h.Secret == "" {
					return fmt.Errorf("%s.webhooks[%d].secret: is required", p, j)
				}
				if _, _, err := svc.CreateWebhookEndpoint(ctx, &messaging.WebhookEndpointParams{WorkspaceID: ws.ID, URL: h.URL, Secret: h.Secret}); err != nil {
					return pathError(fmt.Sprintf("%s.webhooks[%d]", p, j), err)
				}
			}
		}
	}
	return nil
}
