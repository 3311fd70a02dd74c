package paging

import "testing"

func TestSize(t *testing.T) {
	for _, c := range []struct {
		limit, want int
		ok          bool
	}{{0, 50, true}, {1, 1, true}, {100, 100, true}, {101, 0, false}, {-1, 0, false}} {
		if got, ok := Size(c.limit, 50, 100); got != c.want || ok != c.ok {
			t.Errorf("Size(%d) = %d, %v; want %d, %v", c.limit, got, ok, c.want, c.ok)
		}
	}
}

func TestSeqCursor(t *testing.T) {
	for _, c := range []struct {
		cursor string
		want   int64
		ok     bool
	}{{"", 0, true}, {"7", 7, true}, {"0", 0, false}, {"-3", 0, false}, {"x", 0, false}, {"99999999999999999999", 0, false}} {
		if got, ok := ParseSeq(c.cursor); got != c.want || ok != c.ok {
			t.Errorf("ParseSeq(%q) = %d, %v; want %d, %v", c.cursor, got, ok, c.want, c.ok)
		}
	}
	if got, ok := ParseSeq(FormatSeq(42)); got != 42 || !ok {
		t.Errorf("ParseSeq(FormatSeq(42)) = %d, %v", got, ok)
	}
}

func TestCut(t *testing.T) {
	str := func(n int) string { return FormatSeq(int64(n)) }
	items, next := Cut([]int{5, 4, 3}, 2, str)
	if len(items) != 2 || items[1] != 4 || next != "4" {
		t.Errorf("Cut of 3 by 2 = %v, %q", items, next)
	}
	items, next = Cut([]int{5, 4}, 2, str)
	if len(items) != 2 || next != "" {
		t.Errorf("Cut of 2 by 2 = %v, %q", items, next)
	}
	items, next = Cut[int](nil, 2, str)
	if items == nil || len(items) != 0 || next != "" {
		t.Errorf("Cut of nil = %#v, %q", items, next)
	}
}
