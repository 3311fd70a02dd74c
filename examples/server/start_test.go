package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestRefusedStartCreatesNothing: a start refused for any reason (a bad
// flag value, a secret file others may read, a bad bootstrap file, a
// password too short, a busy address, a missing -rate-limits file, a
// database another server holds, a database that cannot be opened)
// leaves the directory as it was: no <db>.key, no <db>.admin-token, no
// database.
func TestRefusedStartCreatesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	const tokenBody = "op_0123456789abcdefghijklmnopqrstuvwxyz\n"
	badBootstrap := strings.Replace(goodBootstrap, `"order_shipped"`, `"Order-Shipped"`, 1)
	for _, tc := range []struct {
		name string
		// setup prepares dir and returns extra flags.
		setup func(t *testing.T, dir string) []string
		want  string
	}{
		{"bad flag value", func(*testing.T, string) []string { return []string{"-dispatch-rate", "fast"} },
			`-dispatch-rate: "fast" is neither`},
		{"bad confirm window", func(*testing.T, string) []string { return []string{"-confirm-window", "5 minutes"} },
			`-confirm-window: "5 minutes" is not a duration`},
		{"negative confirm window from the environment", func(t *testing.T, _ string) []string {
			t.Setenv("MESSAGING_CONFIRM_WINDOW", "-1s")
			return nil
		}, `-confirm-window: "-1s" is not a duration`},
		{"unknown provider", func(*testing.T, string) []string { return []string{"-provider", "telegram"} },
			"-provider: must be fake or meta"},
		{"world-readable token file", func(t *testing.T, dir string) []string {
			writeMode(t, filepath.Join(dir, "x.db.admin-token"), tokenBody, 0o644)
			return nil
		}, "-admin-token-file: " + "%DIR%/x.db.admin-token holds a secret but its mode is 0644"},
		{"world-readable key file", func(t *testing.T, dir string) []string {
			writeMode(t, filepath.Join(dir, "x.db.key"), strings.Repeat("ab", 32)+"\n", 0o604)
			return nil
		}, "-secret-key-file: %DIR%/x.db.key holds a secret but its mode is 0604, readable by others: chmod 600"},
		{"bad bootstrap", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "boot.json")
			writeMode(t, p, badBootstrap, 0o600)
			return []string{"-bootstrap", p, "-webhooks-loopback"}
		}, "bootstrap refused, nothing applied: workspaces[0].templates[0].name"},
		{"loopback webhook in bootstrap without -webhooks-loopback", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "boot.json")
			writeMode(t, p, goodBootstrap, 0o600)
			return []string{"-bootstrap", p}
		}, "workspaces[0].webhooks[0].url"},
		{"short dashboard password", func(*testing.T, string) []string { return []string{"-dashboard-password", "short"} },
			"-dashboard-password: must be at least 12 characters"},
		{"tls cert without key", func(t *testing.T, dir string) []string {
			return []string{"-tls-cert", filepath.Join(dir, "cert.pem")}
		}, "-tls-cert needs -tls-key"},
		{"bad public url", func(*testing.T, string) []string { return []string{"-public-url", "ftp://example.com"} },
			"-public-url: must be an absolute http:// or https:// URL"},
		{"busy address", func(*testing.T, string) []string { return []string{"-addr", busy.Addr().String()} },
			"address already in use"},
		{"missing rate limits file", func(*testing.T, string) []string { return []string{"-rate-limits", "bogus.json"} },
			"-rate-limits: open bogus.json"},
		{"database held by another server", func(t *testing.T, dir string) []string {
			db := filepath.Join(dir, "x.db")
			writeMode(t, db, "", 0o600)
			held, err := lockDB(db)
			if err != nil || held == nil {
				t.Fatalf("lockDB: %v, %v", held, err)
			}
			t.Cleanup(held.release)
			return nil
		}, "-db: the database file %DIR%/x.db is in use by another server on this machine"},
		{"database cannot be opened", func(t *testing.T, dir string) []string {
			// The key and token files are created, then the database
			// fails to open: both are removed again.
			if err := os.Mkdir(filepath.Join(dir, "x.db"), 0o700); err != nil {
				t.Fatal(err)
			}
			return nil
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-db", filepath.Join(dir, "x.db"), "-addr", "127.0.0.1:0"}, tc.setup(t, dir)...)
			before := listDir(t, dir)
			// Cancelled: were the start not refused, the server would
			// stop at once instead of serving.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := run(ctx, args)
			want := strings.ReplaceAll(tc.want, "%DIR%", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("run: %v; want an error saying %q", err, want)
			}
			if after := listDir(t, dir); !slices.Equal(before, after) {
				t.Errorf("the refused start changed the directory: before %q, after %q", before, after)
			}
		})
	}
}

// writeMode writes body to path with the given mode.
func writeMode(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedStartKeepsTheKeyOfADatabaseThatStays: once a database that
// outlives the start (here one a first start made) is open, a start
// refused afterwards (a bootstrap that renames the workspace) keeps the
// secret key file it created, since secrets may already be sealed with it.
func TestRefusedStartKeepsTheKeyOfADatabaseThatStays(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	// The database of an earlier start, with the workspace acme.
	st, err := sqlitestore.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := messaging.New(st, fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme Ltd"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	renamed := filepath.Join(dir, "renamed.json")
	writeMode(t, renamed, strings.Replace(goodBootstrap, `"Acme Ltd"`, `"Acme Two"`, 1), 0o600)
	key := filepath.Join(dir, "second.key")
	err = run(ctx, []string{"-db", db, "-addr", "127.0.0.1:0", "-bootstrap", renamed, "-webhooks-loopback", "-secret-key-file", key})
	if err == nil || !strings.Contains(err.Error(), "workspaces[0].name") {
		t.Fatalf("second start: %v; want the bootstrap refused naming workspaces[0].name", err)
	}
	if _, err := os.Stat(key); err != nil {
		t.Errorf("the key file the refused start created beside the existing database: %v; want it kept", err)
	}
}
