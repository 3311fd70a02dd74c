// Package statushistory is the stored form of a message's status history
// for the stores that keep it in one text column.
package statushistory

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
)

// Entry is the stored form of one status change: "status
// unix-nanoseconds;". A store records a change by appending its entry to
// the message's history column.
func Entry(status string, at time.Time) string {
	return status + " " + strconv.FormatInt(at.UnixNano(), 10) + ";"
}

// Decode parses a history column made of Entry values. An entry it cannot
// read is an error: the column is written only by stores.
func Decode(s string) ([]record.StatusChange, error) {
	if s == "" {
		return nil, nil
	}
	var out []record.StatusChange
	for entry := range strings.SplitSeq(strings.TrimSuffix(s, ";"), ";") {
		st, ns, ok := strings.Cut(entry, " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("stored status history is malformed: %q", entry)
		}
		out = append(out, record.StatusChange{Status: st, At: time.Unix(0, n).UTC()})
	}
	return out, nil
}
