package webhooksig_test

import (
	"errors"
	"go/build"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/webhooksig"
)

// The Standard Webhooks specification's test vector.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set(webhooksig.HeaderID, id)
	h.Set(webhooksig.HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(webhooksig.HeaderSignature, sig)
	return h
}

func TestSignMatchesTheSpecVector(t *testing.T) {
	got, err := webhooksig.Sign(vectorSecret, vectorID, time.Unix(vectorTS, 0), []byte(vectorBody))
	if err != nil || got != vectorSig {
		t.Fatalf("Sign = %q, %v; want %q", got, err, vectorSig)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(vectorTS, 0)
	other := "whsec_" + strings.Repeat("QUFB", 8) // 24 bytes "AAA..."
	otherSig, _ := webhooksig.Sign(other, vectorID, now, []byte(vectorBody))
	for _, tc := range []struct {
		name string
		h    http.Header
		body string
		now  time.Time
		want error
	}{
		{"the vector", headers(vectorID, vectorTS, vectorSig), vectorBody, now, nil},
		{"one of two signatures (a rotated secret)", headers(vectorID, vectorTS, otherSig+" "+vectorSig), vectorBody, now, nil},
		{"another secret's signature", headers(vectorID, vectorTS, otherSig), vectorBody, now, webhooksig.ErrSignature},
		{"a changed body", headers(vectorID, vectorTS, vectorSig), vectorBody + " ", now, webhooksig.ErrSignature},
		{"another id", headers("msg_other", vectorTS, vectorSig), vectorBody, now, webhooksig.ErrSignature},
		{"another version tag", headers(vectorID, vectorTS, "v2"+vectorSig[2:]), vectorBody, now, webhooksig.ErrSignature},
		{"5 minutes late is in time", headers(vectorID, vectorTS, vectorSig), vectorBody, now.Add(5 * time.Minute), nil},
		{"too old", headers(vectorID, vectorTS, vectorSig), vectorBody, now.Add(5*time.Minute + time.Second), webhooksig.ErrSignature},
		{"from the future", headers(vectorID, vectorTS, vectorSig), vectorBody, now.Add(-5*time.Minute - time.Second), webhooksig.ErrSignature},
		{"no signature header", headers(vectorID, vectorTS, ""), vectorBody, now, webhooksig.ErrSignature},
		{"no id header", headers("", vectorTS, vectorSig), vectorBody, now, webhooksig.ErrSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := webhooksig.Verify(vectorSecret, tc.h, []byte(tc.body), tc.now, 0); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
	// A malformed secret is the caller's error, not a bad delivery.
	for _, secret := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64", "whsec_QUFBQUFBQUFBQUE=" /* 11 bytes: too short */} {
		if err := webhooksig.Verify(secret, headers(vectorID, vectorTS, vectorSig), []byte(vectorBody), now, 0); err == nil || errors.Is(err, webhooksig.ErrSignature) {
			t.Errorf("secret %q: %v; want a secret error", secret, err)
		}
	}
}

// TestImportsOnlyTheStandardLibrary: a receiver that imports this package
// links nothing of the service.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkg.Imports {
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			t.Errorf("imports %s, not of the standard library", p)
		}
	}
}
