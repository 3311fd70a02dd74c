package sqlitestore

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ujumbe/messaging"
)

// TestNewDatabaseFilesAreOwnerOnly: a database Open creates, and its -wal
// and -shm files, are readable and writable by their owner only (0600),
// like the server's key file: they hold contacts and message texts.
func TestNewDatabaseFilesAreOwnerOnly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	path := filepath.Join(t.TempDir(), "new.sqlite")
	s := openTest(t, path)
	if err := s.WorkspaceCreate(context.Background(), &messaging.WorkspaceInfo{ID: "a", Name: "A", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", filepath.Base(p), got)
		}
	}
}
