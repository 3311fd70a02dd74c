package callingcode

import "testing"

// TestOf: the shortest known prefix of 1 to 3 digits, shorter than the
// number; none for unknown prefixes, non-digits and numbers too short.
func TestOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		digits       string
		code, length int
	}{
		{"254712345678", 254, 3},
		{"12025550123", 1, 1},
		{"447911123456", 44, 2},
		{"8816", 881, 3},
		{"254", 0, 0},
		{"2", 0, 0},
		{"", 0, 0},
		{"999123456", 0, 0},
		{"x12345", 0, 0},
	} {
		if code, length := Of(c.digits); code != c.code || length != c.length {
			t.Errorf("Of(%q) = %d, %d; want %d, %d", c.digits, code, length, c.code, c.length)
		}
	}
}
