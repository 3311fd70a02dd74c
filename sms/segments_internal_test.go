package sms

import (
	"testing"
	"unicode/utf8"
)

// TestGSM7Tables checks the tables against GSM 03.38: 127 basic characters
// (128 codes less the escape), all distinct, each costing one septet, and
// 10 extension characters costing two.
func TestGSM7Tables(t *testing.T) {
	if n := utf8.RuneCountInString(gsm7Basic); n != 127 {
		t.Errorf("basic table has %d characters, want 127", n)
	}
	seen := map[rune]bool{}
	for _, r := range gsm7Basic {
		if seen[r] {
			t.Errorf("%q twice in the basic table", r)
		}
		seen[r] = true
		if c := gsm7Cost(r); c != 1 {
			t.Errorf("gsm7Cost(%q) = %d, want 1", r, c)
		}
	}
	for _, r := range gsm7Extension {
		if seen[r] {
			t.Errorf("%q in both tables", r)
		}
		if c := gsm7Cost(r); c != 2 {
			t.Errorf("gsm7Cost(%q) = %d, want 2", r, c)
		}
	}
	if n := utf8.RuneCountInString(gsm7Extension); n != 10 {
		t.Errorf("extension table has %d characters, want 10", n)
	}
	// The ASCII fast path agrees with the tables.
	for r := rune(0); r < 0x80; r++ {
		want := 0
		if seen[r] {
			want = 1
		}
		for _, e := range gsm7Extension {
			if e == r {
				want = 2
			}
		}
		if c := gsm7Cost(r); c != want {
			t.Errorf("gsm7Cost(%q) = %d, want %d by the tables", r, c, want)
		}
	}
	for _, r := range "`\tçΣ€" {
		want := map[rune]int{'`': 0, '\t': 0, 'ç': 0, 'Σ': 1, '€': 2}[r]
		if c := gsm7Cost(r); c != want {
			t.Errorf("gsm7Cost(%q) = %d, want %d", r, c, want)
		}
	}
}
