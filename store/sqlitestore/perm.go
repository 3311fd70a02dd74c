package sqlitestore

import (
	"errors"
	"io/fs"
	"os"
)

// createOwnerOnly creates the database file at path, empty and with mode
// 0600, if it does not exist yet. An empty file is a valid SQLite database,
// and SQLite gives the -wal and -shm files it creates next to a database
// the database file's mode, so all three are readable by their owner only.
// An existing file keeps its mode.
func createOwnerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
