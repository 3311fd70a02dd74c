package messaging

import (
	"regexp"
	"strconv"
	"sync"

	"github.com/nyaruka/phonenumbers"

	"github.com/ujumbe/messaging/internal/callingcode"
)

// isE164Shape reports whether s is '+', a digit 1 to 9, then 6 to 14
// digits: the regular expression ^\+[1-9][0-9]{6,14}$ without the regexp
// engine.
func isE164Shape(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] < '1' || s[1] > '9' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// nationalPrefixes maps every country calling code of libphonenumber's
// metadata to the national prefixes for parsing of every territory using
// it, each anchored at the start ("^(?:...)"). It is built once, on first
// use, and never changed; it is nil if the metadata cannot be read (then
// validE164Fast always defers to libphonenumber).
var nationalPrefixes = sync.OnceValue(func() map[int][]*regexp.Regexp {
	coll, err := phonenumbers.MetadataCollection()
	if err != nil || coll == nil {
		return nil
	}
	m := make(map[int][]*regexp.Regexp)
	for _, md := range coll.GetMetadata() {
		cc := int(md.GetCountryCode())
		res := m[cc]
		if res == nil {
			res = []*regexp.Regexp{}
		}
		if p := md.GetNationalPrefixForParsing(); p != "" {
			re, err := regexp.Compile("^(?:" + p + ")")
			if err != nil {
				return nil
			}
			res = append(res, re)
		}
		m[cc] = res
	}
	return m
})

// validE164Fast reports true only when libphonenumber's verdict on s (a
// string of isE164Shape) is certainly "valid, and formatted in E.164 as
// s": it builds the number that phonenumbers.Parse(s, "") builds, without
// Parse's general-purpose text handling (extraction, extensions, IDD
// prefixes, all written with regular expressions), and asks
// phonenumbers.IsValidNumber and phonenumbers.Format about it. Whenever
// Parse could build a different number it answers false, and the caller
// runs the full libphonenumber check:
//
//   - the country calling code is the shortest prefix of 1 to 3 digits
//     that libphonenumber knows (as Parse takes it); none: false;
//   - a national number starting with 0 (Parse records leading zeros
//     separately): false;
//   - a national number that a national prefix for parsing of the
//     country code matches at its start (Parse may strip or transform
//     it): false.
//
// FuzzNormalizePhone and TestNormalizePhoneEveryCountryCode compare
// NormalizePhone with the libphonenumber-only check.
func validE164Fast(s string) bool {
	digits := s[1:]
	cc, i := callingcode.Of(digits)
	if cc == 0 {
		return false
	}
	nsn := digits[i:]
	if len(nsn) < 2 || nsn[0] == '0' {
		return false
	}
	prefixes, ok := nationalPrefixes()[cc]
	if !ok {
		return false
	}
	for _, re := range prefixes {
		if re.MatchString(nsn) {
			return false
		}
	}
	nn, err := strconv.ParseUint(nsn, 10, 64)
	if err != nil {
		return false
	}
	code := int32(cc)
	n := &phonenumbers.PhoneNumber{CountryCode: &code, NationalNumber: &nn}
	return phonenumbers.IsValidNumber(n) && phonenumbers.Format(n, phonenumbers.E164) == s
}
