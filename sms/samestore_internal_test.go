package sms

import "testing"

// TestSameStore: true only for the very same store value; another value
// of the type, a wrapper of it, nil, and values of one type that == cannot
// compare (without panicking) are false.
func TestSameStore(t *testing.T) {
	type pointerStore struct{ n int }
	type wrapper struct{ *pointerStore }
	type uncomparable struct {
		*pointerStore
		tags []string
	}
	a, b := &pointerStore{1}, &pointerStore{1}
	for _, c := range []struct {
		name string
		x, y any
		want bool
	}{
		{"the same store", a, a, true},
		{"another store", a, b, false},
		{"a wrapper", a, wrapper{a}, false},
		{"nil", a, nil, false},
		{"nil first", nil, a, false},
		{"a value == cannot compare", uncomparable{pointerStore: a}, uncomparable{pointerStore: a}, false},
	} {
		if got := sameStore(c.x, c.y); got != c.want {
			t.Errorf("%s: sameStore = %v, want %v", c.name, got, c.want)
		}
	}
}
