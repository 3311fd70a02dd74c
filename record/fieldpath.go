package record

import (
	"slices"
	"strconv"
	"strings"
)

// Path locates a field in the parameters of a call, in the names the REST
// API gives them: member names and list indexes, outermost first. Its
// String form is the Field of an Error: names joined by dots, indexes in
// brackets, as in components[0].parameters[1].text.
type Path []PathStep

// PathStep is one step of a Path: a member Name, or, when Name is empty,
// the Index of an element of a list.
type PathStep struct {
	Name  string
	Index int
}

// FieldPath returns the path of the top-level member name.
func FieldPath(name string) Path { return Path{{Name: name}} }

// Member returns p followed by the member name, as a new Path.
func (p Path) Member(name string) Path { return p.with(PathStep{Name: name}) }

// Index returns p followed by the index i of a list element, as a new
// Path.
func (p Path) Index(i int) Path { return p.with(PathStep{Index: i}) }

func (p Path) with(s PathStep) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, s)
}

// Name returns the member name of p's first step, the top-level member
// the path is in ("components" for components[0].text); "" for an empty
// path.
func (p Path) Name() string {
	if len(p) == 0 {
		return ""
	}
	return p[0].Name
}

// HasPrefix reports whether p is prefix or a path inside it: prefix's
// steps are p's first ones.
func (p Path) HasPrefix(prefix Path) bool {
	return len(prefix) <= len(p) && slices.Equal(p[:len(prefix)], prefix)
}

// String renders p as Error.Field does: components[0].parameters[1].text.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		if s.Name == "" {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.Index))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Name)
	}
	return b.String()
}
