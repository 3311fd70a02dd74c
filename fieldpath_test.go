package messaging_test

import (
	"errors"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

func TestPathString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path messaging.Path
		want string
	}{
		{nil, ""},
		{record.FieldPath("to"), "to"},
		{record.FieldPath("tags").Index(1), "tags[1]"},
		{record.FieldPath("components").Index(0).Member("parameters").Index(12).Member("coupon_code"), "components[0].parameters[12].coupon_code"},
		{record.FieldPath("components").Member("index"), "components.index"},
	} {
		if got := tc.path.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestPathHasPrefix(t *testing.T) {
	t.Parallel()
	comp := record.FieldPath("components").Index(1)
	param := comp.Member("parameters").Index(0).Member("text")
	for _, tc := range []struct {
		p, prefix messaging.Path
		want      bool
	}{
		{param, comp, true},
		{param, param, true},
		{param, comp.Member("parameters"), true},
		{param, nil, true},
		{comp, param, false},
		{param, record.FieldPath("components").Index(10), false},
		{param, record.FieldPath("to"), false},
	} {
		if got := tc.p.HasPrefix(tc.prefix); got != tc.want {
			t.Errorf("%s.HasPrefix(%s) = %v, want %v", tc.p, tc.prefix, got, tc.want)
		}
	}
}

// TestPathsAreBuiltNotParsed: a Path is extended without changing the
// path it extends, so one base serves several fields.
func TestPathsAreBuiltNotParsed(t *testing.T) {
	t.Parallel()
	base := record.FieldPath("components").Index(0)
	a, b := base.Member("text"), base.Member("format")
	if a.String() != "components[0].text" || b.String() != "components[0].format" || base.String() != "components[0]" {
		t.Errorf("base %s, a %s, b %s", base, a, b)
	}
}

// TestValidationErrorsCarryTheirPath: the validators name a nested field
// by its structured path, the Field rendered from it.
func TestValidationErrorsCarryTheirPath(t *testing.T) {
	t.Parallel()
	err := messaging.CheckTemplate(&messaging.TemplateCreateParams{Name: "promo", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi"}, {Type: "BUTTONS", Buttons: []messaging.TemplateButton{
			{Type: "QUICK_REPLY", Text: "Yes"}, {Type: "URL", Text: "Go", URL: "ftp://example.com"}}}}})
	var e *messaging.Error
	if !errors.As(err, &e) {
		t.Fatalf("CheckTemplate: %v, want a *messaging.Error", err)
	}
	want := messaging.Path{{Name: "components"}, {Index: 1}, {Name: "buttons"}, {Index: 1}, {Name: "url"}}
	if d := cmp.Diff(want, e.Path); d != "" {
		t.Errorf("Path (-want +got):\n%s", d)
	}
	if e.Field != "components[1].buttons[1].url" {
		t.Errorf("Field = %q", e.Field)
	}
}
