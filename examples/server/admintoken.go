package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// minAdminToken is the shortest operator token the server accepts.
const minAdminToken = 20

// loadOrCreateAdminToken returns the operator token held in path. When the
// file does not exist it is created (mode 0600, never overwritten: a
// concurrent start finds the first one's) with a random token of 256 bits,
// and created is true so that the caller prints it once. A file its group
// or others may read is refused, and so is a token shorter than 20
// characters or holding white space.
func loadOrCreateAdminToken(path string) (token string, created bool, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, err
	}
	tok := "op_" + base64.RawURLEncoding.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, werr := f.WriteString(tok + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = os.Remove(path)
			return "", false, fmt.Errorf("creating the operator token file: %w", werr)
		}
		return tok, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return "", false, fmt.Errorf("creating the operator token file: %w", err)
	}
	raw, err := readPrivateFile(path)
	if err != nil {
		return "", false, fmt.Errorf("-admin-token-file: %w", err)
	}
	token = strings.TrimSpace(string(raw))
	if len(token) < minAdminToken || strings.ContainsAny(token, " \t\r\n") {
		return "", false, fmt.Errorf("-admin-token-file: %s must hold one token of at least %d characters without white space", path, minAdminToken)
	}
	return token, false, nil
}
