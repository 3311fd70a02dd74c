package sms_test

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/ujumbe/messaging/sms"
)

// The fuzz targets of package sms. Their seed corpora are in
// testdata/fuzz/<name>; CI runs each for a few seconds (.ci/fuzz).

// fuzzZones are the account time zones FuzzParseTimeToSend picks from:
// with and without daylight saving, and odd offsets.
var fuzzZones = []string{"UTC", "Africa/Nairobi", "America/New_York", "Europe/London", "Asia/Kathmandu", "Pacific/Chatham", "Australia/Lord_Howe"}

// timeToSendRe is every form of timeToSend the README documents.
var timeToSendRe = regexp.MustCompile(`^(?:[0-9]{1,12}|[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}(?::[0-9]{2})?)$`)

// FuzzParseTimeToSend: a timeToSend is accepted only in a documented form
// (Unix seconds, or YYYY-MM-DD HH:MM with optional :SS); an accepted one is
// either "now" (not scheduled) or a time after now and at most a year ahead,
// in UTC, that reads back as the same wall time in the account's zone unless
// daylight saving skipped it. Every refusal is code 1009 on timeToSend.
func FuzzParseTimeToSend(f *testing.F) {
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC).Unix()
	f.Add("2026-03-04 14:30", uint8(1), now) // more seeds in testdata/fuzz/FuzzParseTimeToSend
	locs := make([]*time.Location, len(fuzzZones))
	for i, z := range fuzzZones {
		l, err := time.LoadLocation(z)
		if err != nil {
			f.Fatal(err)
		}
		locs[i] = l
	}
	f.Fuzz(func(t *testing.T, s string, zone uint8, nowUnix int64) {
		loc := locs[int(zone)%len(locs)]
		nowUnix = min(max(nowUnix, 0), 1<<33) // 1970 to 2242
		now := time.Unix(nowUnix, 0).In(loc)
		due, scheduled, err := sms.ParseTimeToSend(s, loc, now)
		if err != nil {
			var e *sms.Error
			if !errors.As(err, &e) || e.Code != sms.CodeUnsupportedDataType || e.Field != "timeToSend" {
				t.Fatalf("ParseTimeToSend(%q) error %v, want code %d on timeToSend", s, err, sms.CodeUnsupportedDataType)
			}
			return
		}
		trimmed := strings.TrimSpace(s)
		if trimmed != "" && !timeToSendRe.MatchString(trimmed) {
			t.Fatalf("ParseTimeToSend accepted %q, which is not a documented form", s)
		}
		if due.Location() != time.UTC {
			t.Fatalf("due %v is not in UTC", due)
		}
		if !scheduled {
			if !due.Equal(now) {
				t.Fatalf("ParseTimeToSend(%q) not scheduled but due %v, not now %v", s, due, now)
			}
			return
		}
		if !due.After(now) || due.After(now.AddDate(1, 0, 0)) {
			t.Fatalf("ParseTimeToSend(%q) scheduled at %v: not within a year after %v", s, due, now)
		}
		if n, err := strconv.ParseInt(trimmed, 10, 64); err == nil {
			if due.Unix() != n {
				t.Fatalf("ParseTimeToSend(%q) = %v, not that Unix second", s, due)
			}
			return
		}
		layout := "2006-01-02 15:04"
		if len(trimmed) == len("2006-01-02 15:04:05") {
			layout = "2006-01-02 15:04:05"
		}
		if back := due.In(loc).Format(layout); back != trimmed {
			// Only a wall time that does not exist in the zone may move.
			wall, _ := time.ParseInLocation(layout, trimmed, time.UTC)
			probe := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc)
			if probe.Format(layout) == trimmed {
				t.Fatalf("ParseTimeToSend(%q) in %s = %v, which reads back as %q", s, loc, due, back)
			}
		}
	})
}

// gsm7Septets returns the septets of r in GSM-7 (1 or 2), or 0 when r is
// not in GSM-7, measured through Segments itself: 160 one-septet characters
// fit one part, 160 two-septet characters do not.
func gsm7Septets(r rune) int {
	if enc, _ := sms.Segments(string(r)); enc != sms.EncodingGSM7 {
		return 0
	}
	if _, parts := sms.Segments(strings.Repeat(string(r), sms.GSM7Single)); parts == 1 {
		return 1
	}
	return 2
}

// greedyParts packs costs into parts of size units without splitting one.
func greedyParts(costs []int, size int) int {
	parts, used := 1, 0
	for _, c := range costs {
		if used+c > size {
			parts++
			used = 0
		}
		used += c
	}
	return parts
}

// FuzzSegments: a text is GSM-7 exactly when each of its characters is; a
// text that fits one part (160 septets, 70 UTF-16 units) is one part;
// longer texts take the parts of greedy packing into 153 septets or 67
// units, never splitting an escape pair or a surrogate pair, which lies
// between ceil(n/153) and ceil(n/152) (ceil(n/67) and ceil(n/66)).
func FuzzSegments(f *testing.F) {
	f.Add("Hello, world!") // more seeds in testdata/fuzz/FuzzSegments
	f.Fuzz(func(t *testing.T, s string) {
		enc, parts := sms.Segments(s)
		var septets, units []int
		gsm := true
		for _, r := range s {
			c := gsm7Septets(r)
			if c == 0 {
				gsm = false
			}
			septets = append(septets, c)
			units = append(units, utf16.RuneLen(r)) // invalid bytes read as U+FFFD: 1
		}
		want := map[bool]string{true: sms.EncodingGSM7, false: sms.EncodingUCS2}[gsm]
		if enc != want {
			t.Fatalf("Segments(%q) encoding %s, want %s", s, enc, want)
		}
		costs, single, size := septets, sms.GSM7Single, sms.GSM7Part
		if !gsm {
			costs, single, size = units, sms.UCS2Single, sms.UCS2Part
		}
		n := 0
		for _, c := range costs {
			n += c
		}
		wantParts := 1
		if n > single {
			wantParts = greedyParts(costs, size)
			if lo, hi := (n+size-1)/size, (n+size-2)/(size-1); wantParts < lo || wantParts > hi {
				t.Fatalf("greedy packing of %d units gives %d parts, outside [%d, %d]", n, wantParts, lo, hi)
			}
		}
		if parts != wantParts {
			t.Fatalf("Segments(%q) = %d parts (%s, %d units), want %d", s, parts, enc, n, wantParts)
		}
	})
}
