package sms_test

import (
	"strings"
	"testing"

	"github.com/ujumbe/messaging/sms"
)

// TestSegments checks the part counts against the published GSM 03.38 and
// 3GPP TS 23.040 rules (160/153 septets, 70/67 UCS-2 code units) as the
// common segment calculators apply them.
func TestSegments(t *testing.T) {
	t.Parallel()
	r := strings.Repeat
	tests := []struct {
		name  string
		text  string
		enc   string
		parts int
	}{
		{"empty", "", sms.EncodingGSM7, 1},
		{"hello", "Hello, world!", sms.EncodingGSM7, 1},
		{"160 GSM-7", r("a", 160), sms.EncodingGSM7, 1},
		{"161 GSM-7", r("a", 161), sms.EncodingGSM7, 2},
		{"306 GSM-7", r("a", 306), sms.EncodingGSM7, 2},
		{"307 GSM-7", r("a", 307), sms.EncodingGSM7, 3},
		{"459 GSM-7", r("a", 459), sms.EncodingGSM7, 3},
		{"460 GSM-7", r("a", 460), sms.EncodingGSM7, 4},
		{"1530 GSM-7", r("a", 1530), sms.EncodingGSM7, 10},
		{"GSM basic non-ASCII count one", r("£", 40) + r("é", 40) + r("Δ", 40) + r("Ä", 40), sms.EncodingGSM7, 1},
		{"80 euro signs are 160 septets", r("€", 80), sms.EncodingGSM7, 1},
		{"81 euro signs are 162 septets", r("€", 81), sms.EncodingGSM7, 2},
		{"80 carets", r("^", 80), sms.EncodingGSM7, 1},
		{"81 carets", r("^", 81), sms.EncodingGSM7, 2},
		{"every extension character counts two", r("^{}\\[~]|€", 8) + r("a", 16), sms.EncodingGSM7, 1},
		{"every extension character counts two, one more", r("^{}\\[~]|€", 8) + r("a", 17), sms.EncodingGSM7, 2},
		{"159 plus one extension", r("a", 159) + "{", sms.EncodingGSM7, 2},
		// 152 + 2 + 152 = 306 septets fit two parts of 153 by count, but
		// the escape pair may not be split, so the euro sign opens part 2.
		{"escape pair never split", r("a", 152) + "€" + r("a", 152), sms.EncodingGSM7, 3},
		{"70 UCS-2", r("я", 70), sms.EncodingUCS2, 1},
		{"71 UCS-2", r("я", 71), sms.EncodingUCS2, 2},
		{"134 UCS-2", r("я", 134), sms.EncodingUCS2, 2},
		{"135 UCS-2", r("я", 135), sms.EncodingUCS2, 3},
		{"one non-GSM character makes it UCS-2", r("a", 69) + "я", sms.EncodingUCS2, 1},
		{"one non-GSM character past 70", r("a", 70) + "я", sms.EncodingUCS2, 2},
		{"c cedilla is not GSM-7 (only capital Ç is)", "ç", sms.EncodingUCS2, 1},
		{"backtick is not GSM-7", "`", sms.EncodingUCS2, 1},
		{"tab is not GSM-7", "a\tb", sms.EncodingUCS2, 1},
		{"35 emoji are 70 code units", r("😀", 35), sms.EncodingUCS2, 1},
		{"36 emoji are 72 code units", r("😀", 36), sms.EncodingUCS2, 2},
		// 66 + 2 + 66 = 134 code units fit two parts of 67 by count, but a
		// surrogate pair may not be split, so the emoji opens part 2.
		{"surrogate pair never split", r("я", 66) + "😀" + r("я", 66), sms.EncodingUCS2, 3},
		{"newline and carriage return are GSM-7", "a\nb\rc", sms.EncodingGSM7, 1},
		{"invalid UTF-8 does not panic", "\xff\xfe", sms.EncodingUCS2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc, parts := sms.Segments(tc.text)
			if enc != tc.enc || parts != tc.parts {
				t.Errorf("Segments(%q...) = %s, %d; want %s, %d", clipText(tc.text), enc, parts, tc.enc, tc.parts)
			}
		})
	}
}

func clipText(s string) string {
	if len(s) > 20 {
		return s[:20]
	}
	return s
}
