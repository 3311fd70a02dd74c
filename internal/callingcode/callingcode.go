// Package callingcode finds the country calling code a phone number starts
// with, as libphonenumber's parser takes it. The root package's phone
// number check and the SMS API's mobile check share it.
package callingcode

import (
	"strconv"

	"github.com/nyaruka/phonenumbers"
)

// Of returns the country calling code that digits (a number without its
// '+') starts with, as phonenumbers.Parse takes it: the shortest prefix of
// 1 to 3 digits, shorter than digits, that libphonenumber knows; and its
// length. 0, 0 when there is none.
func Of(digits string) (code, length int) {
	for i := 1; i <= 3 && i < len(digits); i++ {
		c, err := strconv.Atoi(digits[:i])
		if err != nil {
			return 0, 0
		}
		if len(phonenumbers.GetRegionCodesForCountryCode(c)) > 0 {
			return c, i
		}
	}
	return 0, 0
}
