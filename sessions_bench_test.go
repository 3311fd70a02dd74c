package messaging_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// BenchmarkSessionCheck compares the check of a session token (Session),
// made on every dashboard request, with its baseline, the check of an API
// key (Authenticate), made on every API request, on each store.
func BenchmarkSessionCheck(b *testing.B) {
	stores := map[string]func(b *testing.B) driver.Store{
		"memstore": func(*testing.B) driver.Store { return memstore.New() },
		"sqlite": func(b *testing.B) driver.Store {
			s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "db.sqlite"), nil)
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
	}
	for name, open := range stores {
		ctx := context.Background()
		st := open(b)
		svc, err := messaging.New(st, fakeprovider.New(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme"}); err != nil {
			b.Fatal(err)
		}
		_, key, err := svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: []string{record.ScopeReadMessages}})
		if err != nil {
			b.Fatal(err)
		}
		token, _, err := svc.StartSession(ctx, &messaging.SessionParams{Subject: "amina", Workspaces: []string{"acme"}})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/api-key", func(b *testing.B) {
			for b.Loop() {
				if _, err := svc.Authenticate(ctx, key); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/session", func(b *testing.B) {
			for b.Loop() {
				if _, err := svc.Session(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
		})
		_ = svc.Close(ctx)
		_ = st.Close()
	}
}
