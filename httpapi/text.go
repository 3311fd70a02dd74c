package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// The rule on text that every decoder of this package applies, once, to
// everything it takes (bodies of /v1 and /sms/v1, query parameters): text
// is valid UTF-8 without NUL characters. A body's UTF-8 is checked whole
// when it is read; NUL, which JSON can only carry escaped (\u0000), is
// found by nulString in every member name and string value after the body
// decoded, and named by its path. PostgreSQL cannot store NUL in text and
// no channel carries it, so refusing it here keeps every store answering
// alike.

// nulEscape is the only form a NUL character can take in valid JSON text:
// a raw NUL byte in a string is malformed JSON.
var nulEscape = []byte(`\u0000`)

// ruleNoNUL is the validation rule nulString's findings break.
const ruleNoNUL = "must not contain NUL characters (\\u0000)"

// nulString returns the path of the first member name or string value of
// the JSON document b that holds a NUL character, as the field of a
// validation error ("firstName", "components[1].parameters[0].coupon_code"),
// or "" when none does. The values of the top-level members named in
// opaque (matched case-insensitively) are skipped: their caller checks them
// one by one. b must be valid JSON (the decoder accepted it).
func nulString(b []byte, opaque ...string) string {
	if !bytes.Contains(b, nulEscape) {
		return "" // the common case costs one scan of the bytes
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	s := nulScan{dec: dec, opaque: opaque}
	return s.value("")
}

// nulScan walks a JSON document token by token.
type nulScan struct {
	dec    *json.Decoder
	opaque []string
}

// value reads one value at path and returns the path of a string holding
// NUL in it, or "".
func (s *nulScan) value(path string) string {
	tok, err := s.dec.Token()
	if err != nil {
		return ""
	}
	switch t := tok.(type) {
	case string:
		if strings.IndexByte(t, 0) >= 0 {
			return orBody(path)
		}
	case json.Delim:
		switch t {
		case '{':
			for s.dec.More() {
				k, err := s.dec.Token()
				if err != nil {
					return ""
				}
				name, _ := k.(string)
				at := name
				if path != "" {
					at = path + "." + name
				}
				if strings.IndexByte(name, 0) >= 0 {
					return at
				}
				if path == "" && s.isOpaque(name) {
					var skip json.RawMessage
					if s.dec.Decode(&skip) != nil {
						return ""
					}
					continue
				}
				if f := s.value(at); f != "" {
					return f
				}
			}
			_, _ = s.dec.Token() // '}'
		case '[':
			for i := 0; s.dec.More(); i++ {
				if f := s.value(orBody(path) + "[" + strconv.Itoa(i) + "]"); f != "" {
					return f
				}
			}
			_, _ = s.dec.Token() // ']'
		}
	}
	return ""
}

func (s *nulScan) isOpaque(name string) bool {
	for _, o := range s.opaque {
		if strings.EqualFold(o, name) {
			return true
		}
	}
	return false
}

// orBody returns path, or "body" for the document itself.
func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}
