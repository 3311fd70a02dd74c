// Package paging holds the steps that the cursor-paged listings of the
// root package and of package sms share: the page size, the cursors of
// listings ordered by a sequence number, and the cut of a store's answer
// into a page. Each caller words its own errors.
package paging

import "strconv"

// Size checks the page size limit of a listing: zero means def, and ok is
// false unless the size is 1 to max.
func Size(limit, def, max int) (size int, ok bool) {
	if limit == 0 {
		return def, true
	}
	if limit < 1 || limit > max {
		return 0, false
	}
	return limit, true
}

// ParseSeq reads the cursor of a listing ordered by sequence number, as
// FormatSeq wrote it: before is 0 for the empty cursor (from the newest),
// and ok is false for a cursor that is not a positive number.
func ParseSeq(cursor string) (before int64, ok bool) {
	if cursor == "" {
		return 0, true
	}
	before, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || before < 1 {
		return 0, false
	}
	return before, true
}

// FormatSeq is the cursor of the page after the item with sequence number
// seq.
func FormatSeq(seq int64) string {
	return strconv.FormatInt(seq, 10)
}

// Cut turns list, read with one item more than limit, into a page: at most
// limit items (never nil) and the cursor of the last one when there were
// more, empty when this is the last page.
func Cut[T any](list []T, limit int, cursorOf func(T) string) (items []T, next string) {
	if len(list) > limit {
		list = list[:limit]
		next = cursorOf(list[limit-1])
	}
	if list == nil {
		list = []T{}
	}
	return list, next
}
