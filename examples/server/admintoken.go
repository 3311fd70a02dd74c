package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// minAdminToken is the shortest operator token the server accepts.
const minAdminToken = 20

// openAdminToken opens the operator token file at path: an existing file
// its group or others may read is refused, and so is a token shorter than
// 20 characters or holding white space. A missing file gets a random
// token of 256 bits, written by create (mode 0600, never overwritten: a
// concurrent start finds the first one's), which the caller then prints
// once.
func openAdminToken(path string) (*secretFile, error) {
	return openSecretFile("-admin-token-file", path, func() ([]byte, error) {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		return []byte("op_" + base64.RawURLEncoding.EncodeToString(b[:]) + "\n"), nil
	}, func(b []byte) error {
		token := strings.TrimSpace(string(b))
		if len(token) < minAdminToken || strings.ContainsAny(token, " \t\r\n") {
			return fmt.Errorf("must hold one token of at least %d characters without white space", minAdminToken)
		}
		return nil
	})
}

// adminToken returns the token the file holds.
func adminToken(pf *secretFile) string { return strings.TrimSpace(string(pf.body)) }

// openSecretKey opens the file at path holding the 32-byte key (64 hex
// digits) that seals channel tokens and webhook secrets, under the same
// mode rule as the operator token; a missing file gets a random key,
// written by create.
func openSecretKey(path string) (*secretFile, error) {
	return openSecretFile("-secret-key-file", path, func() ([]byte, error) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(key) + "\n"), nil
	}, func(b []byte) error {
		if _, err := secretKey(b); err != nil {
			return err
		}
		return nil
	})
}

// secretKey decodes the key a secret key file holds.
func secretKey(b []byte) ([]byte, error) {
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("must hold 64 hex digits (a 32-byte key)")
	}
	return key, nil
}
