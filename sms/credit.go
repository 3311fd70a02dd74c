package sms

import (
	"fmt"
	"strconv"
	"strings"
)

// Credit is an amount of SMS credit in hundredths of a credit, so that sums
// and differences are exact. Credits(5) is five credits; String renders it
// as "5.00".
type Credit int64

// MaxCredit is the largest balance, top-up or cost the service accepts:
// one trillion credits.
const MaxCredit Credit = 1e12 * 100

// Credits returns n whole credits.
func Credits(n int64) Credit { return Credit(n * 100) }

// String renders c with two decimals, for example "545.00" or "0.50".
func (c Credit) String() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// ParseCredit parses a non-negative decimal amount of credits with at most
// two decimals ("100", "100.5", "0.25") and at most MaxCredit.
func ParseCredit(s string) (Credit, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || (hasDot && (frac == "" || len(frac) > 2 || !allDigits(frac))) {
		return 0, fmt.Errorf("must be a non-negative amount with at most two decimals (got %q)", s)
	}
	if len(strings.TrimLeft(whole, "0")) > 13 {
		return 0, fmt.Errorf("must be at most %s (got %q)", MaxCredit, s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be a non-negative amount with at most two decimals (got %q)", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	c := Credit(w*100 + f)
	if c > MaxCredit {
		return 0, fmt.Errorf("must be at most %s (got %q)", MaxCredit, s)
	}
	return c, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
