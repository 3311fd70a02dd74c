package messaging

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
)

// Secrets stored by the service (webhook signing secrets, channel access
// tokens) are sealed with Options.SecretKey: AES-256-GCM, each bound to
// its purpose.

// secretPurpose binds sealed webhook signing secrets to their use.
const secretPurpose = "webhook-secret"

// seal encrypts a webhook secret with the service's secret key.
func (s *Service) seal(b []byte) ([]byte, error) { return s.sealFor(secretPurpose, b) }

// unseal decrypts a webhook secret sealed by seal.
func (s *Service) unseal(b []byte) ([]byte, error) { return s.unsealFor(secretPurpose, b) }

// sealFor encrypts b with the service's secret key (AES-256-GCM), bound to
// purpose (a sealed value of one purpose does not open as another).
func (s *Service) sealFor(purpose string, b []byte) ([]byte, error) {
	if s.aead == nil {
		return nil, &Error{Code: CodeInternal, Message: "stored secrets (webhook secrets, channel access tokens) need Options.SecretKey", Err: errors.New("messaging: Options.SecretKey is not set")}
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, b, []byte(purpose)), nil
}

// unsealFor decrypts b sealed by sealFor with the same purpose.
func (s *Service) unsealFor(purpose string, b []byte) ([]byte, error) {
	if s.aead == nil || len(b) < s.aead.NonceSize() {
		return nil, errors.New("messaging: cannot unseal " + strings.ReplaceAll(purpose, "-", " "))
	}
	n := s.aead.NonceSize()
	return s.aead.Open(nil, b[:n], b[n:], []byte(purpose))
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("messaging: Options.SecretKey must be 32 bytes, got %d", len(key))
	}
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(blk)
}
