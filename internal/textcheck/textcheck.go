// Package textcheck finds text that no store can keep: a NUL character
// (PostgreSQL's text type refuses it, SQLite would keep it and cut it
// short in C strings) or bytes that are not UTF-8. The library's services
// run it over the parameters of every write, so Go callers get the same
// validation error as REST callers, on every store.
package textcheck

import (
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Problem is a string the stores cannot keep.
type Problem struct {
	// Field is the JSON path of the string (json tag names, or the field
	// name with a lower-case first letter when there is none), for example
	// "components[0].parameters[1].text".
	Field string
	// Rule says what is wrong, ready to follow "field: ".
	Rule string
}

// Find returns the first string in v (a struct, a pointer, a slice, a map
// or a string, walked in field order) that holds a NUL or is not UTF-8, or
// nil when every string is fine. Map keys are checked as well as values.
func Find(v any) *Problem {
	return walk(reflect.ValueOf(v), "")
}

func check(s, path string) *Problem {
	switch {
	case !utf8.ValidString(s):
		return &Problem{Field: path, Rule: "must be valid UTF-8"}
	case strings.IndexByte(s, 0) >= 0:
		return &Problem{Field: path, Rule: "must not contain NUL characters (\\u0000)"}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func walk(v reflect.Value, path string) *Problem {
	switch v.Kind() {
	case reflect.String:
		return check(v.String(), path)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return walk(v.Elem(), path)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes are not text
		}
		for i := range v.Len() {
			if p := walk(v.Index(i), path+"["+strconv.Itoa(i)+"]"); p != nil {
				return p
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			name := path + "[" + strconv.Quote(k.String()) + "]"
			if k.Kind() == reflect.String {
				if p := check(k.String(), path); p != nil {
					return p
				}
			}
			if p := walk(it.Value(), name); p != nil {
				return p
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, ok := fieldName(f)
			if !ok {
				continue
			}
			sub := join(path, name)
			if f.Anonymous && f.Tag.Get("json") == "" {
				sub = path
			}
			if p := walk(v.Field(i), sub); p != nil {
				return p
			}
		}
	}
	return nil
}

// fieldName is the JSON name of a struct field; false for fields that
// JSON skips (tag "-").
func fieldName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return lowerFirstWord(f.Name), true
}

// lowerFirstWord lower-cases the first word of a Go name: FirstName ->
// firstName, ID -> id, URLPath -> urlPath.
func lowerFirstWord(name string) string {
	r := []rune(name)
	for i := range r {
		if !unicode.IsUpper(r[i]) {
			break
		}
		if i > 0 && i+1 < len(r) && unicode.IsLower(r[i+1]) {
			break // the capital of the next word
		}
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}
