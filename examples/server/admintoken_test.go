package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// loadOrCreateAdminToken opens and creates the token file at path, as a
// start does.
func loadOrCreateAdminToken(path string) (token string, created bool, err error) {
	pf, err := openAdminToken(path)
	if err != nil {
		return "", false, err
	}
	if created, err = pf.create(); err != nil {
		return "", false, err
	}
	return adminToken(pf), created, nil
}

// TestLoadOrCreateAdminToken: a missing file is created with mode 0600 and
// a random token, reported created; the next call reads the same token,
// not created; a file its group or others may read, an empty file and a
// short token are refused.
func TestLoadOrCreateAdminToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db.admin-token")
	tok, created, err := loadOrCreateAdminToken(path)
	if err != nil || !created || !strings.HasPrefix(tok, "op_") || len(tok) != 46 {
		t.Fatalf("first call: %q, %v, %v; want a new op_ token", tok, created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v; want mode 0600", st.Mode(), err)
	}
	again, created, err := loadOrCreateAdminToken(path)
	if err != nil || created || again != tok {
		t.Errorf("second call: %q, %v, %v; want the same token, not created", again, created, err)
	}
	other, _, _ := loadOrCreateAdminToken(filepath.Join(dir, "y.admin-token"))
	if other == tok {
		t.Error("two token files got the same token")
	}
	for name, tc := range map[string]struct {
		body string
		mode os.FileMode
		want string
	}{
		"group readable": {tok, 0o640, "chmod 600"},
		"world readable": {tok, 0o604, "chmod 600"},
		"empty":          {"", 0o600, "at least 20 characters"},
		"short":          {"op_short", 0o600, "at least 20 characters"},
		"two tokens":     {tok + " " + tok, 0o600, "without white space"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, []byte(tc.body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		got, _, err := loadOrCreateAdminToken(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (got != "" && err != nil) {
			t.Errorf("%s: %q, %v; want an error saying %q", name, got, err, tc.want)
		}
		if err != nil && tok != "" && strings.Contains(err.Error(), tok) {
			t.Errorf("%s: the error holds the token", name)
		}
	}
}

// TestServerAdminToken runs the server binary: at first start it creates
// <db>.admin-token (mode 0600) and prints the token once; the token opens
// /admin/v1 and a wrong one does not; a restart prints nothing and keeps
// the token; a token file readable by others stops the start.
func TestServerAdminToken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	dir := t.TempDir()
	bin := buildServer(t, dir)
	db := filepath.Join(dir, "admin.db")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := startServer(t, bin, addr, "-db", db)
	raw, err := os.ReadFile(db + ".admin-token")
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(raw))
	if st, _ := os.Stat(db + ".admin-token"); st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode())
	}
	if m := regexp.MustCompile(`Operator token \(written to .*; shown once\): (\S+)`).FindStringSubmatch(srv.log.String()); m == nil || m[1] != tok {
		t.Fatalf("the first start did not print the token of the file:\n%s", srv.log)
	}
	get := func(auth string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.base+"/admin/v1/workspaces/demo", nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get("Bearer " + tok); st != 200 {
		t.Errorf("the printed token: %d, want 200", st)
	}
	if st := get("Bearer " + tok + "x"); st != 401 {
		t.Errorf("a wrong token: %d, want 401", st)
	}
	srv.stop(t)
	// The token is printed in the two lines of the first start's banner,
	// and nowhere else (no log line holds it).
	if n := strings.Count(srv.log.String(), tok); n != 2 {
		t.Errorf("the first run's output holds the token %d times, want 2 (the banner)", n)
	}

	srv2 := startServer(t, bin, addr, "-db", db)
	if st := get("Bearer " + tok); st != 200 {
		t.Errorf("after a restart the token gives %d, want 200", st)
	}
	srv2.stop(t)
	if strings.Contains(srv2.log.String(), tok) {
		t.Errorf("a restart printed or logged the token:\n%s", srv2.log)
	}

	if err := os.Chmod(db+".admin-token", 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-db", db, "-addr", addr).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "chmod 600") || strings.Contains(string(out), tok) {
		t.Errorf("a world-readable token file: %v\n%s", err, out)
	}
}
