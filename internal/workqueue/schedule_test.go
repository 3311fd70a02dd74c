package workqueue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waits returns the waits of s after the failures of attempts 1 to n,
// until the schedule stops.
func waits(s Schedule, n int) []time.Duration {
	var got []time.Duration
	for a := 1; a <= n; a++ {
		d, more := s.After(a)
		if !more {
			break
		}
		got = append(got, d)
	}
	return got
}

func TestExponentialWithoutJitter(t *testing.T) {
	t.Parallel()
	const s, m = time.Second, time.Minute
	tests := []struct {
		name                string
		initial, max        time.Duration
		maxAttempts, probes int
		want                []time.Duration
	}{
		{"doubles up to the cap", 10 * s, 15 * m, 0, 10, []time.Duration{10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 320 * s, 640 * s, 15 * m, 15 * m, 15 * m}},
		{"a cap between two steps", 10 * s, m, 0, 6, []time.Duration{10 * s, 20 * s, 40 * s, m, m, m}},
		{"stops after max attempts", 10 * s, 15 * m, 3, 10, []time.Duration{10 * s, 20 * s}},
		{"one attempt: no retry", 10 * s, 15 * m, 1, 10, nil},
		{"initial above max: waited once", 20 * m, 15 * m, 0, 3, []time.Duration{20 * m, 15 * m, 15 * m}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := waits(Exponential(tt.initial, tt.max, 0, tt.maxAttempts), tt.probes)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExponentialIsCappedDoubling: without jitter, the wait after attempt
// n is initial doubled n-1 times, capped: the rule the SMS scheduler had
// written by hand.
func TestExponentialIsCappedDoubling(t *testing.T) {
	t.Parallel()
	for _, initial := range []time.Duration{time.Second, 7 * time.Second, 10 * time.Second, 15 * time.Minute} {
		for _, capAt := range []time.Duration{15 * time.Minute, time.Hour, 90 * time.Second} {
			s := Exponential(min(initial, capAt), capAt, 0, 0)
			want := min(initial, capAt)
			for n := 1; n <= 20; n++ {
				if got, _ := s.After(n); got != want {
					t.Fatalf("initial %v cap %v: wait after attempt %d = %v; want %v", initial, capAt, n, got, want)
				}
				want = min(2*want, capAt)
			}
		}
	}
}

func TestExponentialJitterRange(t *testing.T) {
	t.Parallel()
	s := Exponential(time.Second, 8*time.Second, 0.2, 10)
	for n, base := range []time.Duration{1, 2, 4, 8, 8, 8} {
		base *= time.Second
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for range 300 {
			d, more := s.After(n + 1)
			if !more {
				t.Fatalf("attempt %d of 10: schedule stopped", n+1)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo < base*8/10 || hi > base*12/10+1 {
			t.Errorf("wait after attempt %d in [%v, %v]; want within %v +-20 %%", n+1, lo, hi, base)
		}
		if lo > base*9/10 || hi < base*11/10 {
			t.Errorf("wait after attempt %d in [%v, %v] over 300 draws; want spread over %v +-20 %%", n+1, lo, hi, base)
		}
	}
	if _, more := s.After(10); more {
		t.Error("attempt 10 of 10 may be retried")
	}
}

func TestDelays(t *testing.T) {
	t.Parallel()
	list := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute}
	if diff := cmp.Diff(list, waits(Delays(list), 10)); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if d, more := Delays(list).After(0); d != 5*time.Second || !more {
		t.Errorf("After(0) = %v, %v; want the first wait", d, more)
	}
	if got := waits(Delays(nil), 3); got != nil {
		t.Errorf("an empty list waits %v; want no retry", got)
	}
	b := Delays(list)()
	b.NextBackOff()
	b.NextBackOff()
	b.Reset()
	if d := b.NextBackOff(); d != 5*time.Second {
		t.Errorf("first wait after Reset = %v; want 5s", d)
	}
}

func TestPacerGrowsToItsCapAndResets(t *testing.T) {
	t.Parallel()
	p := newPacer(Exponential(time.Second, 8*time.Second, jitter, 0))
	for i, want := range []time.Duration{1, 2, 4, 8, 8, 8} {
		got := p.failed()
		w := want * time.Second
		if got < w*8/10 || got > w*12/10 {
			t.Errorf("wait %d = %v; want %v +-20 %%", i, got, w)
		}
	}
	if n := p.succeeded(); n != 6 {
		t.Errorf("succeeded after 6 failures = %d", n)
	}
	if n := p.succeeded(); n != 0 {
		t.Errorf("succeeded after a success = %d", n)
	}
	if got := p.failed(); got > 1200*time.Millisecond {
		t.Errorf("first wait after a success = %v; want about 1 s again", got)
	}
}
