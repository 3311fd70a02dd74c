package sms

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are the accepted date-time forms of timeToSend, read in the
// account's time zone.
var timeLayouts = []string{"2006-01-02 15:04", "2006-01-02 15:04:05"}

// localTimeRe is the exact shape of those forms: time.Parse alone would
// also take a one-digit hour and fractional seconds.
var localTimeRe = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}(?::[0-9]{2})?$`)

// ParseTimeToSend reads a timeToSend value and returns when the message is
// due, in UTC, and whether it is scheduled (due after now).
//
// s is either a local date-time "YYYY-MM-DD HH:MM" or "YYYY-MM-DD HH:MM:SS"
// in loc (the account's time zone; nil means UTC), or a Unix timestamp in
// seconds written in decimal digits (a JSON number arrives here as its
// digits). Surrounding spaces are ignored. An empty s, or a time at or
// before now, means "send at once": it returns now and false. A time more
// than one year after now, or a value that is neither form, is an *Error
// with CodeUnsupportedDataType naming the field timeToSend.
//
// A local time that does not exist (skipped by a daylight-saving change) is
// normalized by time.Date; one that occurs twice takes the first.
func ParseTimeToSend(s string, loc *time.Location, now time.Time) (due time.Time, scheduled bool, err error) {
	now = now.UTC()
	s = strings.TrimSpace(s)
	if s == "" {
		return now, false, nil
	}
	if loc == nil {
		loc = time.UTC
	}
	var t time.Time
	switch {
	case allDigits(s):
		if len(s) > 12 {
			return time.Time{}, false, NewError(CodeUnsupportedDataType, "timeToSend",
				"a Unix timestamp must be in seconds and at most one year ahead (got %q)", s)
		}
		n, _ := strconv.ParseInt(s, 10, 64)
		t = time.Unix(n, 0).UTC()
	default:
		ok := false
		for _, layout := range timeLayouts {
			if !localTimeRe.MatchString(s) {
				break // not one of the layouts, whatever time.Parse would say
			}
			if v, perr := time.ParseInLocation(layout, s, loc); perr == nil {
				t, ok = v.UTC(), true
				break
			}
		}
		if !ok {
			return time.Time{}, false, NewError(CodeUnsupportedDataType, "timeToSend",
				"must be \"YYYY-MM-DD HH:MM\" (seconds optional) in the account's time zone, or a Unix timestamp in seconds (got %q)", s)
		}
	}
	if !t.After(now) {
		return now, false, nil
	}
	if t.After(now.AddDate(1, 0, 0)) {
		return time.Time{}, false, NewError(CodeUnsupportedDataType, "timeToSend",
			"must be at most one year ahead (got %q, which is %s UTC)", s, t.Format("2006-01-02 15:04:05"))
	}
	return t, true, nil
}
