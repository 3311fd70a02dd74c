//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// dbLock holds an exclusive lock (flock) on a SQLite database file for as
// long as this server runs, so that a second server started on the same
// file refuses to start instead of sharing it unannounced: its caches,
// schedules and queue claims assume one process per file. The lock is the
// operating system's: it ends with the process, however it ends, and
// leaves nothing behind. SQLite's own locks (fcntl) are separate and
// unaffected.
type dbLock struct{ f *os.File }

// errDBInUse is the refusal of a database file another server holds.
var errDBInUse = errors.New("in use")

// lockDB locks the SQLite database file path; a file that does not exist
// (yet) is not locked (nil lock, no error): lock it once created.
func lockDB(path string) (*dbLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("-db: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("-db: the database file %s is in use by another server on this machine: stop that server, or give this one another -db (%w)", path, errDBInUse)
		}
		return nil, fmt.Errorf("-db: locking %s: %w", path, err)
	}
	return &dbLock{f: f}, nil
}

// release gives the lock up (nil-safe).
func (l *dbLock) release() {
	if l != nil {
		l.f.Close()
	}
}
