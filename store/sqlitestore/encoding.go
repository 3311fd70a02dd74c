package sqlitestore

import "encoding/json"

// The stored forms of the lists of strings of a record, in TEXT columns:
// a JSON array of strings (the scopes of an API key, the tags of a
// contact). Lists of structs have storage structs of their own (package
// storedjson). Times are text too (fmtTime, parseTime).

// encodeStrings returns the stored form of ss: its JSON array, or nil
// (SQL NULL) when ss is nil.
func encodeStrings(ss []string) (*string, error) {
	if ss == nil {
		return nil, nil
	}
	b, err := json.Marshal(ss)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// decodeStrings decodes what encodeStrings stored: nil for NULL,
// otherwise a non-nil list.
func decodeStrings(s *string) ([]string, error) {
	if s == nil {
		return nil, nil
	}
	out := []string{}
	if err := json.Unmarshal([]byte(*s), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// encodeTags returns the stored form of a contact's tags, which are never
// NULL: nil is stored as [].
func encodeTags(tags []string) (string, error) {
	if tags == nil {
		tags = []string{}
	}
	s, err := encodeStrings(tags)
	if err != nil {
		return "", err
	}
	return *s, nil
}
