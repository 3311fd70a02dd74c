// Package storedjson holds the JSON forms in which the SQL stores
// (sqlitestore, pgstore) keep the lists nested in root records: the
// components of a template and of a template send, and (in sqlitestore,
// which has no array columns) lists of strings; and the rich content of a
// message, inbound or outbound (EncodeContent). The structs are storage
// structs with tags of their own, so that what is stored does not follow
// the root types' JSON tags (the API's concern), and the forms are fixed:
// databases written by earlier versions read back unchanged (the stores'
// TestStoredEncodingIsPinned pins the bytes, and TestContentIsPinned those
// of a message's content).
//
// An encoder returns nil, stored as SQL NULL, for a nil list, and the
// decoders return nil for NULL, so that a nil and an empty list both
// round-trip; inside a message's content an empty list reads back as nil.
package storedjson

import (
	"encoding/json"
	"strings"

	"github.com/ujumbe/messaging"
)

// templateComponent is the stored form of a messaging.TemplateComponent.
// Unlike the API form it has no omitempty on Buttons: a nil list is
// stored as null and an empty one as [].
type templateComponent struct {
	Type    string           `json:"type"`
	Format  string           `json:"format,omitempty"`
	Text    string           `json:"text,omitempty"`
	Buttons []templateButton `json:"buttons"`
	// Examples has omitempty: components stored before it existed, and
	// those without examples, are stored alike.
	Examples []string `json:"examples,omitempty"`
	// ExampleMedia (omitempty, as Examples) is the id of a media
	// header's sample upload.
	ExampleMedia string `json:"example_media,omitempty"`
}

// templateButton is the stored form of a messaging.TemplateButton.
type templateButton struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	URL         string `json:"url,omitempty"`
	PhoneNumber string `json:"phone_number,omitempty"`
	Example     string `json:"example,omitempty"`
}

// sendComponent is the stored form of a messaging.SendComponent: a nil
// Parameters list is stored as null and an empty one as [].
type sendComponent struct {
	Type       string          `json:"type"`
	SubType    string          `json:"sub_type,omitempty"`
	Index      *int            `json:"index,omitempty"`
	Parameters []sendParameter `json:"parameters"`
}

// sendParameter is the stored form of a messaging.SendParameter.
type sendParameter struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Link       string `json:"link,omitempty"`
	Filename   string `json:"filename,omitempty"`
	CouponCode string `json:"coupon_code,omitempty"`
	Payload    string `json:"payload,omitempty"`
}

// convert returns f applied to each element of in, keeping nil nil.
func convert[In, Out any](in []In, f func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// encode returns the JSON text of the non-nil list v, or nil when isNil.
func encode(v any, isNil bool) (*string, error) {
	if isNil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// decode decodes the stored list s: nil for NULL, otherwise a non-nil
// list.
func decode[T any](s *string) ([]T, error) {
	if s == nil {
		return nil, nil
	}
	out := []T{}
	if err := json.Unmarshal([]byte(*s), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeAs decodes the stored list s and converts its elements with f.
func decodeAs[S, T any](s *string, f func(S) T) ([]T, error) {
	st, err := decode[S](s)
	if err != nil {
		return nil, err
	}
	return convert(st, f), nil
}

// EncodeStrings returns the stored form of ss, a JSON array of strings, or
// nil for nil.
func EncodeStrings(ss []string) (*string, error) { return encode(ss, ss == nil) }

// DecodeStrings returns the strings stored as s (nil for NULL). A list of
// plain strings, as EncodeStrings writes scopes, channels and most tags, is
// split without encoding/json (see plainStrings); anything else is decoded
// by encoding/json.
func DecodeStrings(s *string) ([]string, error) {
	if s != nil {
		if out, ok := plainStrings(*s); ok {
			return out, nil
		}
	}
	return decode[string](s)
}

// plainStrings decodes s when it is a JSON array of strings in the form
// json.Marshal writes when nothing needs escaping: '[', then strings of
// printable ASCII characters other than '"' and '\' between double
// quotes, separated by ',', then ']', without white space. For such an s
// the strings are exactly what encoding/json decodes (there is no escape
// to interpret); they share s's memory. It returns false for anything
// else (escapes, other bytes, white space, null, malformed text), which
// the caller then gives to encoding/json. FuzzDecodeStrings compares the
// two.
func plainStrings(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if body == "" {
		return []string{}, true
	}
	out := make([]string, 0, strings.Count(body, ",")+1)
	for {
		if len(body) < 2 || body[0] != '"' {
			return nil, false
		}
		end := 1
		for end < len(body) && body[end] != '"' {
			if c := body[end]; c < 0x20 || c > 0x7e || c == '\\' {
				return nil, false
			}
			end++
		}
		if end == len(body) {
			return nil, false
		}
		out = append(out, body[1:end])
		body = body[end+1:]
		if body == "" {
			return out, true
		}
		if body[0] != ',' {
			return nil, false
		}
		body = body[1:]
	}
}

// EncodeTemplateComponents returns the stored form of cs, nil for nil.
func EncodeTemplateComponents(cs []messaging.TemplateComponent) (*string, error) {
	return encode(convert(cs, storeTemplateComponent), cs == nil)
}

// DecodeTemplateComponents returns the components stored as s (nil for
// NULL).
func DecodeTemplateComponents(s *string) ([]messaging.TemplateComponent, error) {
	return decodeAs(s, templateComponent.root)
}

// EncodeSendComponents returns the stored form of cs, nil for nil.
func EncodeSendComponents(cs []messaging.SendComponent) (*string, error) {
	return encode(convert(cs, storeSendComponent), cs == nil)
}

// DecodeSendComponents returns the components stored as s (nil for
// NULL).
func DecodeSendComponents(s *string) ([]messaging.SendComponent, error) {
	return decodeAs(s, sendComponent.root)
}

// storeTemplateComponent returns the stored form of c.
func storeTemplateComponent(c messaging.TemplateComponent) templateComponent {
	return templateComponent{Type: c.Type, Format: c.Format, Text: c.Text,
		Buttons:  convert(c.Buttons, func(b messaging.TemplateButton) templateButton { return templateButton(b) }),
		Examples: c.Examples, ExampleMedia: c.ExampleMedia}
}

// root returns the component stored as c.
func (c templateComponent) root() messaging.TemplateComponent {
	return messaging.TemplateComponent{Type: c.Type, Format: c.Format, Text: c.Text,
		Buttons:  convert(c.Buttons, func(b templateButton) messaging.TemplateButton { return messaging.TemplateButton(b) }),
		Examples: c.Examples, ExampleMedia: c.ExampleMedia}
}

// storeSendComponent returns the stored form of c.
func storeSendComponent(c messaging.SendComponent) sendComponent {
	return sendComponent{Type: c.Type, SubType: c.SubType, Index: c.Index,
		Parameters: convert(c.Parameters, func(p messaging.SendParameter) sendParameter { return sendParameter(p) })}
}

// root returns the component stored as c.
func (c sendComponent) root() messaging.SendComponent {
	return messaging.SendComponent{Type: c.Type, SubType: c.SubType, Index: c.Index,
		Parameters: convert(c.Parameters, func(p sendParameter) messaging.SendParameter { return messaging.SendParameter(p) })}
}
