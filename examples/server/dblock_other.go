//go:build !unix

package main

// dbLock is not taken on systems without flock: two servers on one SQLite
// file are not refused there.
type dbLock struct{}

// lockDB takes no lock on this system.
func lockDB(string) (*dbLock, error) { return nil, nil }

// release does nothing.
func (l *dbLock) release() {}
