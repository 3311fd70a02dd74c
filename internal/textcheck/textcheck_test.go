package textcheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type param struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

type req struct {
	To       string            `json:"to"`
	Skip     string            `json:"-"`
	Params   []param           `json:"parameters"`
	Names    *string           // no tag: lower-case field name
	Tags     *[]string         `json:"tags"`
	Meta     map[string]string `json:"meta"`
	Raw      []byte            `json:"raw"`
	internal string
}

func TestLowerFirstWord(t *testing.T) {
	for in, want := range map[string]string{"FirstName": "firstName", "ID": "id", "URLPath": "urlPath", "ProviderMessageID": "providerMessageID", "Tags": "tags", "X": "x"} {
		if got := lowerFirstWord(in); got != want {
			t.Errorf("lowerFirstWord(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindNamesTheField(t *testing.T) {
	s := func(v string) *string { return &v }
	tags := []string{"ok", "b\x00d"}
	for _, tc := range []struct {
		name string
		in   any
		want *Problem
	}{
		{"clean", &req{To: "+254712345678", Params: []param{{Type: "text", Text: "héllo"}}, Names: s("Ann"), Raw: []byte{0}}, nil},
		{"nil pointer", (*req)(nil), nil},
		{"top level", &req{To: "+2547\x00"}, &Problem{"to", "must not contain NUL characters (\\u0000)"}},
		{"nested", &req{Params: []param{{Text: "ok"}, {Text: "a\x00"}}}, &Problem{"parameters[1].text", "must not contain NUL characters (\\u0000)"}},
		{"untagged pointer", &req{Names: s("\xff")}, &Problem{"names", "must be valid UTF-8"}},
		{"slice pointer", &req{Tags: &tags}, &Problem{"tags[1]", "must not contain NUL characters (\\u0000)"}},
		{"map value", &req{Meta: map[string]string{"k": "v\x00"}}, &Problem{`meta["k"]`, "must not contain NUL characters (\\u0000)"}},
		{"map key", &req{Meta: map[string]string{"k\x00": "v"}}, &Problem{"meta", "must not contain NUL characters (\\u0000)"}},
		{"skipped fields", &req{Skip: "\x00", internal: "\x00"}, nil},
		{"plain string", "a\x00", &Problem{"", "must not contain NUL characters (\\u0000)"}},
	} {
		if d := cmp.Diff(tc.want, Find(tc.in)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}
