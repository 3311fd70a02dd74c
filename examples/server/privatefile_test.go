package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenSecretKey: the secret key file follows the operator token
// file's mode rule (a file its group or others may read is refused,
// naming the flag and the fix); opening a missing file writes nothing,
// create writes it with mode 0600, and a second start that opened it
// missing too takes the first one's key instead of overwriting it.
func TestOpenSecretKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db.key")
	a, err := openSecretKey(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openSecretKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("opening a missing key file created it: %v", err)
	}
	if created, err := a.create(); err != nil || !created {
		t.Fatalf("create: %v, %v; want created", created, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", st, err)
	}
	if created, err := b.create(); err != nil || created || string(b.body) != string(a.body) {
		t.Fatalf("second create: %v, %v; want not created and the first key", created, err)
	}
	key, err := secretKey(a.body)
	if err != nil || len(key) != 32 {
		t.Fatalf("secretKey: %x, %v", key, err)
	}
	again, err := openSecretKey(path)
	if err != nil || again.missing || string(again.body) != string(a.body) {
		t.Fatalf("reopening: %v, %v", again, err)
	}

	for name, tc := range map[string]struct {
		body string
		mode os.FileMode
		want string
	}{
		"world readable": {string(a.body), 0o644, "-secret-key-file: " + filepath.Join(dir, "world_readable") + " holds a secret but its mode is 0644, readable by others: chmod 600"},
		"group readable": {string(a.body), 0o640, "chmod 600"},
		"not hex":        {strings.Repeat("z", 64), 0o600, "must hold 64 hex digits"},
		"short":          {"abcd", 0o600, "must hold 64 hex digits"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		pf, err := openSecretKey(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want an error saying %q", name, pf, err, tc.want)
		} else if strings.Contains(err.Error(), strings.TrimSpace(string(a.body))) {
			t.Errorf("%s: the error holds the key", name)
		}
	}
}
