package sms_test

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/nyaruka/phonenumbers"

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

// mobileShape is the shape of a mobile: 7 to 15 digits, no leading zero.
var mobileShape = regexp.MustCompile(`^[1-9][0-9]{6,14}$`)

// libphonenumberMobile is ValidMobile as it was before it shared
// NormalizePhone's fast path: the shape, then phonenumbers.Parse,
// IsValidNumber, and Format giving the number back as written. It returns
// the country calling code, and whether the mobile is valid.
func libphonenumberMobile(mobile string) (int, bool) {
	if !mobileShape.MatchString(mobile) {
		return 0, false
	}
	n, err := phonenumbers.Parse("+"+mobile, "")
	if err != nil || !phonenumbers.IsValidNumber(n) || phonenumbers.Format(n, phonenumbers.E164) != "+"+mobile {
		return 0, false
	}
	return int(n.GetCountryCode()), true
}

// sameMobileVerdict fails unless ValidMobile answers as libphonenumber
// does on mobile: valid or not (code 1003 on mobile), with the same
// country calling code.
func sameMobileVerdict(t *testing.T, mobile string) {
	t.Helper()
	wantCC, valid := libphonenumberMobile(mobile)
	cc, err := sms.ValidMobile(mobile)
	var se *sms.Error
	switch {
	case valid && (err != nil || cc != wantCC):
		t.Fatalf("ValidMobile(%q) = %d, %v; libphonenumber: valid, country code %d", mobile, cc, err, wantCC)
	case !valid && (!errors.As(err, &se) || se.Code != sms.CodeInvalidMobile || se.Field != "mobile"):
		t.Fatalf("ValidMobile(%q) = %d, %v; libphonenumber: invalid (want code %d on mobile)", mobile, cc, err, sms.CodeInvalidMobile)
	}
}

// FuzzValidMobile: ValidMobile answers as libphonenumber on any string and
// on the number made of a country calling code and a national number
// zero-padded to width digits (real-looking numbers of every calling
// code).
func FuzzValidMobile(f *testing.F) {
	for _, s := range []string{"254712345678", "4407911123456", "3758102450911", "375291234567", "12025550123", "10000000000", "8613800138000", "390612345678", "0712345678"} {
		f.Add(s, uint16(0), uint64(0), uint8(0))
	}
	f.Add("", uint16(254), uint64(712345678), uint8(9))
	f.Add("", uint16(39), uint64(612345678), uint8(10))
	f.Fuzz(func(t *testing.T, s string, cc uint16, national uint64, width uint8) {
		sameMobileVerdict(t, s)
		n := strconv.FormatUint(national, 10)
		if w := int(width % 16); len(n) < w {
			n = strings.Repeat("0", w-len(n)) + n
		}
		sameMobileVerdict(t, strconv.Itoa(int(cc%1000))+n)
	})
}

// TestValidMobileEveryCallingCode compares ValidMobile with libphonenumber
// on random national numbers of every length after every calling code
// from 1 to 999, and on each example number libphonenumber has for a
// territory.
func TestValidMobileEveryCallingCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2026))
	for cc := 1; cc <= 999; cc++ {
		prefix := strconv.Itoa(cc)
		for range 10 {
			b := []byte(prefix)
			for range 1 + rng.IntN(15-len(prefix)) {
				b = append(b, byte('0'+rng.IntN(10)))
			}
			sameMobileVerdict(t, string(b))
		}
	}
	valid := 0
	for r := range phonenumbers.GetSupportedRegions() {
		for _, typ := range []phonenumbers.PhoneNumberType{phonenumbers.MOBILE, phonenumbers.FIXED_LINE} {
			if n := phonenumbers.GetExampleNumberForType(r, typ); n != nil {
				s := strconv.Itoa(int(n.GetCountryCode())) + phonenumbers.GetNationalSignificantNumber(n)
				sameMobileVerdict(t, s)
				if _, err := sms.ValidMobile(s); err == nil {
					valid++
				}
			}
		}
	}
	if valid < 300 {
		t.Errorf("only %d example numbers are valid mobiles; want most of them", valid)
	}
}

// BenchmarkValidMobile compares ValidMobile with the libphonenumber-only
// check on the Kenyan mobile numbers of internal/bench.
func BenchmarkValidMobile(b *testing.B) {
	for _, bc := range []struct {
		name string
		f    func(string) bool
	}{
		{"libphonenumber", func(s string) bool { _, ok := libphonenumberMobile(s); return ok }},
		{"ValidMobile", func(s string) bool { _, err := sms.ValidMobile(s); return err == nil }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				s := "2547" + strconv.Itoa(i/10_000_000%3) + strconv.Itoa(10_000_000 + i%10_000_000)[1:]
				if !bc.f(s) {
					b.Fatalf("%s refused", s)
				}
			}
		})
	}
}
