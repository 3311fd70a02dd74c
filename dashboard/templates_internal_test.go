package dashboard

import (
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// TestFormFieldOfLibraryPath: the library's path of a template field
// finds the authoring form's input: a component by its place in the form,
// a button by its row.
func TestFormFieldOfLibraryPath(t *testing.T) {
	t.Parallel()
	ff := &formFields{comps: []string{"header", "body", "footer", "buttons"}, buttonRows: []int{1, 3}}
	comp := func(i int) messaging.Path { return record.FieldPath("components").Index(i) }
	for _, tc := range []struct {
		path messaging.Path
		want string
	}{
		{record.FieldPath("name"), "name"},
		{record.FieldPath("category"), "category"},
		{record.FieldPath("components"), "body"},
		{record.FieldPath("status"), ""},
		{comp(0).Member("format"), "header_format"},
		{comp(0).Member("examples").Index(0), "header_example"},
		{comp(0).Member("text"), "header_text"},
		{comp(0), "header_text"},
		{comp(1).Member("text"), "body"},
		{comp(1).Member("examples"), "body_examples"},
		{comp(1).Member("examples").Index(1), "body_example_2"},
		{comp(2).Member("text"), "footer"},
		{comp(3).Member("buttons"), "buttons"},
		{comp(3).Member("buttons").Index(1).Member("type"), "button_type_3"},
		{comp(3).Member("buttons").Index(0).Member("text"), "button_text_1"},
		{comp(3).Member("buttons").Index(1).Member("url"), "button_value_3"},
		{comp(3).Member("buttons").Index(2).Member("url"), "buttons"},
		{comp(4).Member("text"), ""},
		{comp(1).Index(0), ""},
		{comp(3).Member("buttons").Index(0).Member("url").Index(0), ""},
		{record.FieldPath("components").Member("index"), ""},
	} {
		if got := ff.field(tc.path); got != tc.want {
			t.Errorf("field(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
