package main

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestOperatorSignIn: the operator token and the dashboard password sign
// in the operator; anything else, including a password near the right
// one, is refused; a short password is refused at start.
func TestOperatorSignIn(t *testing.T) {
	s, err := newOperatorSignIn("op_token-123", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, secret := range []string{"op_token-123", "correct horse battery"} {
		if v, err := s.check(ctx, secret); err != nil || v == nil || !v.Operator {
			t.Errorf("check(%q) = %+v, %v; want the operator", secret, v, err)
		}
	}
	for _, secret := range []string{"", "op_token-12", "op_token-1234", "correct horse batter", "Correct horse battery", strings.Repeat("x", 100)} {
		if v, err := s.check(ctx, secret); err != nil || v != nil {
			t.Errorf("check(%q) = %+v, %v; want refused", secret, v, err)
		}
	}
	if string(s.password) == "correct horse battery" || !strings.HasPrefix(string(s.password), "$2") {
		t.Errorf("the password is kept as %q; want a bcrypt hash", s.password)
	}
	noPassword, err := newOperatorSignIn("op_token-123", "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := noPassword.check(ctx, ""); v != nil {
		t.Error("an empty secret signed in when no password is set")
	}
	for _, bad := range []string{"short", strings.Repeat("y", 73)} {
		if _, err := newOperatorSignIn("op_token-123", bad); err == nil {
			t.Errorf("password of %d characters accepted", len(bad))
		}
	}
}

// TestParseTrustedProxies: -trusted-proxies takes prefixes and single
// addresses, comma-separated, and names what it refuses.
func TestParseTrustedProxies(t *testing.T) {
	got, err := parseTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,fd00::/8,")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("fd00::/8")}
	if !slices.Equal(got, want) {
		t.Errorf("parseTrustedProxies = %v; want %v", got, want)
	}
	if got, err := parseTrustedProxies(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %v; want none", got, err)
	}
	if _, err := parseTrustedProxies("10.0.0.0/8,proxy.internal"); err == nil || !strings.Contains(err.Error(), "proxy.internal") {
		t.Errorf("a host name: %v; want an error naming it", err)
	}
}
