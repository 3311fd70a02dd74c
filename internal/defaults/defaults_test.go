package defaults

import (
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	type opts struct{ N int }
	if got := Of[opts](nil); got != (opts{}) {
		t.Errorf("Of(nil) = %+v, want the zero value", got)
	}
	in := &opts{N: 3}
	got := Of(in)
	got.N = 4
	if in.N != 3 {
		t.Errorf("Of returned the caller's struct, not a copy: caller's N = %d", in.N)
	}
}

func TestPositive(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out time.Duration
	}{{"zero", 0, time.Second}, {"negative", -1, time.Second}, {"positive", 2 * time.Second, 2 * time.Second}} {
		v := c.in
		Positive(&v, time.Second)
		if v != c.out {
			t.Errorf("%s: Positive(%v) = %v, want %v", c.name, c.in, v, c.out)
		}
	}
}

func TestClockAndLogger(t *testing.T) {
	at := time.Unix(5, 0)
	if got := Clock(func() time.Time { return at })(); !got.Equal(at) {
		t.Errorf("Clock(c) did not keep c: %v", got)
	}
	if Clock(nil) == nil {
		t.Error("Clock(nil) is nil, want time.Now")
	}
	if Logger(nil) == nil {
		t.Error("Logger(nil) is nil, want a discarding logger")
	}
}
