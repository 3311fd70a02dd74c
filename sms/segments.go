package sms

import "unicode/utf16"

// Encodings of an SMS.
const (
	// EncodingGSM7 is the GSM 03.38 7-bit default alphabet: 160 characters
	// in one part, 153 per part when split.
	EncodingGSM7 = "GSM-7"
	// EncodingUCS2 is UCS-2 (UTF-16): 70 code units in one part, 67 per
	// part when split.
	EncodingUCS2 = "UCS-2"
)

// Part sizes, in septets (GSM-7) or UTF-16 code units (UCS-2). A split
// message loses room in every part to the concatenation header.
const (
	GSM7Single = 160
	GSM7Part   = 153
	UCS2Single = 70
	UCS2Part   = 67
)

// gsm7Basic is the GSM 03.38 basic character set (without the escape code
// 0x1B), as Unicode.
const gsm7Basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsm7Extension is the GSM 03.38 extension table: each character is sent as
// the escape code and a second septet, so it counts two.
const gsm7Extension = "\f^{}\\[~]|€"

// gsm7Cost returns the septets r takes in GSM-7 (1 or 2), or 0 when r has no
// GSM-7 encoding.
func gsm7Cost(r rune) int {
	if r < 0x80 {
		// Fast path for ASCII: every printable ASCII character but ` is in
		// one of the tables.
		switch {
		case r == '\f' || r == '^' || r == '{' || r == '}' || r == '\\' || r == '[' || r == '~' || r == ']' || r == '|':
			return 2
		case r == '\n' || r == '\r' || (r >= ' ' && r <= '~' && r != '`'):
			return 1
		}
		return 0
	}
	for _, b := range gsm7Basic {
		if b == r {
			return 1
		}
	}
	if r == '€' {
		return 2
	}
	return 0
}

// Segments returns the encoding of text (EncodingGSM7 when every character
// is in the GSM 03.38 basic or extension table, else EncodingUCS2) and the
// number of SMS parts it is sent in. In GSM-7, extension characters
// (^ { } \ [ ~ ] | € and form feed) count two septets; in UCS-2, a character
// outside the Basic Multilingual Plane (an emoji) counts two code units.
// Parts are filled greedily and a part never ends between the two halves of
// an extension character or of a surrogate pair. An empty text is one part.
func Segments(text string) (encoding string, parts int) {
	gsm := true
	septets := 0
	for _, r := range text {
		c := gsm7Cost(r)
		if c == 0 {
			gsm = false
			break
		}
		septets += c
	}
	if gsm {
		if septets <= GSM7Single {
			return EncodingGSM7, 1
		}
		return EncodingGSM7, pack(text, GSM7Part, gsm7Cost)
	}
	units := 0
	for _, r := range text {
		units += utf16Len(r)
	}
	if units <= UCS2Single {
		return EncodingUCS2, 1
	}
	return EncodingUCS2, pack(text, UCS2Part, utf16Len)
}

// utf16Len returns the UTF-16 code units of r: 2 for a surrogate pair.
func utf16Len(r rune) int {
	if utf16.RuneLen(r) == 2 {
		return 2
	}
	return 1
}

// pack fills parts of size units greedily with the characters of text, each
// taking cost(r) units that are never split across parts, and returns the
// number of parts.
func pack(text string, size int, cost func(rune) int) int {
	parts, used := 1, 0
	for _, r := range text {
		c := cost(r)
		if used+c > size {
			parts++
			used = 0
		}
		used += c
	}
	return parts
}
