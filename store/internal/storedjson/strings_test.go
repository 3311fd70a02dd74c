package storedjson

import (
	"encoding/json"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
)

// jsonStrings is DecodeStrings without its fast path: encoding/json only.
func jsonStrings(s *string) ([]string, error) { return decode[string](s) }

// sameStrings fails unless DecodeStrings and encoding/json agree on s
// (the same strings, nil and empty told apart, an error for the same
// inputs), and reports whether the fast path decoded s.
func sameStrings(t *testing.T, s string) bool {
	t.Helper()
	want, wantErr := jsonStrings(&s)
	got, err := DecodeStrings(&s)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("DecodeStrings(%q) error %v, encoding/json error %v", s, err, wantErr)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("DecodeStrings(%q) (-encoding/json +got):\n%s", s, d)
	}
	_, fast := plainStrings(s)
	return fast
}

// TestDecodeStrings compares DecodeStrings with encoding/json on lists as
// EncodeStrings writes them and on near misses, and checks that plain
// lists (API-key scopes, channels) take the fast path.
func TestDecodeStrings(t *testing.T) {
	lists := [][]string{{}, {""}, {"messages:send"}, {"messages:send", "messages:read", "contacts:write", "templates:read"},
		{"a,b", "c"}, {`say "hi"`}, {`back\slash`}, {"<html> & co"}, {"tab\there"}, {"héllo", "日本"}, {"\u2028"}, {"bad\xff"}}
	fast := 0
	for _, l := range lists {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if sameStrings(t, string(b)) {
			fast++
		}
	}
	if fast != 5 {
		t.Errorf("%d lists took the fast path, want 5 (the plain ASCII ones)", fast)
	}
	for _, s := range []string{"null", "[]", " []", "[ ]", `[""]`, `["a",]`, `[,"a"]`, `["a""b"]`, `["a" ,"b"]`, `["a"`, `"a"]`, `[1]`,
		`["a\u0041"]`, `["a"]x`, `[`, `]`, "", `["\x7f"]`, "[\"\xff\"]", `["\x01"]`, `[null]`, `[["a"]]`, `["a",  "b"]`, `["ab"]`} {
		sameStrings(t, s)
	}
	if got, _ := DecodeStrings(nil); got != nil {
		t.Errorf("DecodeStrings(nil) = %q, want nil", got)
	}
}

// FuzzDecodeStrings: DecodeStrings answers as encoding/json on any stored
// text, and on the JSON encoding of any two strings.
func FuzzDecodeStrings(f *testing.F) {
	f.Add(`["messages:send","messages:read"]`, "a", "b")
	f.Add(`["a\"b"]`, "x\\", "\u00e9")
	f.Add(`[]`, "", ",")
	f.Fuzz(func(t *testing.T, s, a, b string) {
		sameStrings(t, s)
		enc, err := json.Marshal([]string{a, b})
		if err != nil {
			t.Fatal(err)
		}
		sameStrings(t, string(enc))
	})
}

// BenchmarkDecodeStrings compares DecodeStrings with encoding/json on the
// stored scopes of an API key with every scope.
func BenchmarkDecodeStrings(b *testing.B) {
	enc, err := json.Marshal(record.AllScopes())
	if err != nil {
		b.Fatal(err)
	}
	s := string(enc)
	for _, bc := range []struct {
		name string
		f    func(*string) ([]string, error)
	}{{"encoding-json", jsonStrings}, {"DecodeStrings", DecodeStrings}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.f(&s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
