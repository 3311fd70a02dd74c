// Package sqlrows holds what pgstore and sqlitestore share about the rows
// they keep, apart from the SQL of each dialect (their statements and
// column lists are their own): the bound of a page read newest first, the
// arguments of a message insert, and the stored form of SMS accept
// results.
package sqlrows

import "math"

// Before returns the bound of a page read newest first by a sequence
// (seq < bound): before, or the largest int64 when before is not set
// (zero or less).
func Before(before int64) int64 {
	if before <= 0 {
		return math.MaxInt64
	}
	return before
}
