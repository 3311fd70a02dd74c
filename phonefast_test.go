package messaging_test

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"

	"github.com/ujumbe/messaging"
)

// libphonenumberNormalizePhone is NormalizePhone as it was before its fast
// path: the E.164 shape, then phonenumbers.Parse, IsValidNumber and
// Format. NormalizePhone must answer exactly as it does (the same number,
// or an error with the same text).
func libphonenumberNormalizePhone(s string) (string, string) {
	if !e164Strict.MatchString(s) {
		return "", "validation_error: phone: must be in E.164 format: '+' then 7 to 15 digits"
	}
	n, err := phonenumbers.Parse(s, "")
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return "", "validation_error: phone: is not a valid phone number for its country code"
	}
	if out := phonenumbers.Format(n, phonenumbers.E164); out != s {
		return "", "validation_error: phone: must be in E.164 format (expected " + out + ")"
	}
	return s, ""
}

// samePhoneVerdict fails unless NormalizePhone and libphonenumber agree on
// s, and unless the fast path, when it accepts s, is right to. It reports
// whether the fast path accepted s.
func samePhoneVerdict(t *testing.T, s string) bool {
	t.Helper()
	want, wantErr := libphonenumberNormalizePhone(s)
	got, err := messaging.NormalizePhone(s)
	gotErr := ""
	if err != nil {
		gotErr = err.Error()
	}
	if got != want || gotErr != wantErr {
		t.Fatalf("NormalizePhone(%q) = %q, %q; libphonenumber: %q, %q", s, got, gotErr, want, wantErr)
	}
	if !e164Strict.MatchString(s) {
		return false
	}
	fast := messaging.ValidE164Fast(s)
	if fast && (want != s || wantErr != "") {
		t.Fatalf("fast path accepts %q, libphonenumber says %q", s, wantErr)
	}
	return fast
}

// e164 writes +cc then national, zero-padded to width digits.
func e164(cc uint16, national uint64, width uint8) string {
	n := strconv.FormatUint(national, 10)
	if w := int(width % 16); len(n) < w {
		n = strings.Repeat("0", w-len(n)) + n
	}
	return "+" + strconv.Itoa(int(cc)) + n
}

// exampleNumbers returns libphonenumber's example number of every type of
// every territory and non-geographic entity, as (country code, national
// significant number) pairs.
func exampleNumbers() [][2]string {
	var out [][2]string
	add := func(n *phonenumbers.PhoneNumber) {
		if n != nil {
			out = append(out, [2]string{strconv.Itoa(int(n.GetCountryCode())), phonenumbers.GetNationalSignificantNumber(n)})
		}
	}
	var regions []string
	for r := range phonenumbers.GetSupportedRegions() {
		regions = append(regions, r)
	}
	sort.Strings(regions)
	for _, r := range regions {
		for typ := phonenumbers.FIXED_LINE; typ <= phonenumbers.UNKNOWN; typ++ {
			add(phonenumbers.GetExampleNumberForType(r, typ))
		}
	}
	var nongeo []int
	for cc := range phonenumbers.GetSupportedGlobalNetworkCallingCodes() {
		nongeo = append(nongeo, cc)
	}
	sort.Ints(nongeo)
	for _, cc := range nongeo {
		add(phonenumbers.GetExampleNumberForNonGeoEntity(cc))
	}
	return out
}

// TestNormalizePhoneEveryCountryCode compares NormalizePhone with
// libphonenumber on real-looking numbers of every country calling code:
// each example number of every type of every territory, the same with
// each digit changed, one digit less or more, a 0 or 1 after the country
// code, random digits changed; numbers whose national prefix libphonenumber
// strips (Belarus 8 10); and random national numbers of every length for every calling code
// from 1 to 999.
func TestNormalizePhoneEveryCountryCode(t *testing.T) {
	checked, fast := 0, 0
	perCode, variants := 30, 20
	if testing.Short() {
		perCode, variants = 5, 3
	}
	check := func(s string) {
		checked++
		if samePhoneVerdict(t, s) {
			fast++
		}
	}
	// Belarus: Parse strips "8" from 810... (a national prefix for
	// parsing) and the rest is not valid, though 810... as written is.
	for _, s := range []string{"+3758102450911", "+3758109457961", "+375291234567"} {
		check(s)
	}
	rng := rand.New(rand.NewPCG(19, 2026))
	examples := exampleNumbers()
	if len(examples) < 1000 {
		t.Fatalf("only %d example numbers from libphonenumber", len(examples))
	}
	exampleFast := 0
	for _, e := range examples {
		cc, nsn := e[0], e[1]
		s := "+" + cc + nsn
		checked++
		if samePhoneVerdict(t, s) {
			exampleFast++
			fast++
		}
		check("+" + cc + "0" + nsn)
		check("+" + cc + "1" + nsn)
		check("+" + cc + nsn + "5")
		check("+" + cc + nsn[:len(nsn)-1])
		for i := range len(nsn) {
			b := []byte(nsn)
			b[i] = '0' + (b[i]-'0'+3)%10
			check("+" + cc + string(b))
		}
		for range variants {
			b := []byte(nsn)
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] = byte('0' + rng.IntN(10))
			}
			check("+" + cc + string(b))
		}
	}
	for cc := 1; cc <= 999; cc++ {
		prefix := "+" + strconv.Itoa(cc)
		for range perCode {
			n := 16 - len(prefix)
			b := []byte(prefix)
			for range 1 + rng.IntN(n) {
				b = append(b, byte('0'+rng.IntN(10)))
			}
			check(string(b))
		}
	}
	// The fast path must be the usual path: most example numbers take it.
	if exampleFast < len(examples)/2 {
		t.Errorf("fast path took %d of %d example numbers, want at least half", exampleFast, len(examples))
	}
	t.Logf("%d numbers checked, %d through the fast path (%d of %d example numbers)", checked, fast, exampleFast, len(examples))
}

// FuzzNormalizePhoneFast: NormalizePhone answers exactly as libphonenumber
// (phonenumbers.Parse, IsValidNumber, Format) on any string s, and on the
// E.164 number made of a country code and a national number zero-padded
// to width digits (real-looking numbers of every country code); its fast
// path accepts only numbers libphonenumber accepts as written.
func FuzzNormalizePhoneFast(f *testing.F) {
	f.Add("+254712345678", uint16(254), uint64(712345678), uint8(9))
	f.Add("+4407911123456", uint16(39), uint64(612345678), uint8(10))
	for i, e := range exampleNumbers() {
		if i%7 != 0 {
			continue
		}
		cc, _ := strconv.Atoi(e[0])
		nn, _ := strconv.ParseUint(e[1], 10, 64)
		f.Add("+"+e[0]+e[1], uint16(cc), nn, uint8(len(e[1])))
	}
	f.Fuzz(func(t *testing.T, s string, cc uint16, national uint64, width uint8) {
		samePhoneVerdict(t, s)
		samePhoneVerdict(t, e164(cc%1000, national, width))
	})
}

// BenchmarkNormalizePhone compares NormalizePhone with the
// libphonenumber-only check on the Kenyan mobile numbers of internal/bench.
func BenchmarkNormalizePhone(b *testing.B) {
	for _, bc := range []struct {
		name string
		f    func(string) bool
	}{
		{"libphonenumber", func(s string) bool { _, e := libphonenumberNormalizePhone(s); return e == "" }},
		{"NormalizePhone", func(s string) bool { _, err := messaging.NormalizePhone(s); return err == nil }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				s := "+2547" + strconv.Itoa(i/10_000_000%3) + strconv.Itoa(10_000_000 + i%10_000_000)[1:]
				if !bc.f(s) {
					b.Fatalf("%s refused", s)
				}
			}
		})
	}
}
