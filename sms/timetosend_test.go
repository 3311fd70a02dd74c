package sms_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
)

func TestParseTimeToSend(t *testing.T) {
	t.Parallel()
	nairobi, err := time.LoadLocation("Africa/Nairobi") // UTC+3, no DST
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC) // 13:00 in Nairobi
	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	tests := []struct {
		name      string
		in        string
		loc       *time.Location
		due       time.Time
		scheduled bool
		bad       bool
	}{
		{"empty is now", "", nairobi, now, false, false},
		{"spaces only is now", "   ", nairobi, now, false, false},
		{"local minutes in the account zone", "2026-03-04 14:30", nairobi, time.Date(2026, 3, 4, 11, 30, 0, 0, time.UTC), true, false},
		{"local seconds", "2026-03-04 14:30:15", nairobi, time.Date(2026, 3, 4, 11, 30, 15, 0, time.UTC), true, false},
		{"surrounding spaces", " 2026-03-04 14:30 ", nairobi, time.Date(2026, 3, 4, 11, 30, 0, 0, time.UTC), true, false},
		{"same wall time in UTC is later", "2026-03-04 14:30", time.UTC, time.Date(2026, 3, 4, 14, 30, 0, 0, time.UTC), true, false},
		{"nil zone is UTC", "2026-03-04 10:00:01", nil, time.Date(2026, 3, 4, 10, 0, 1, 0, time.UTC), true, false},
		{"exactly now is immediate", "2026-03-04 13:00", nairobi, now, false, false},
		{"past is immediate", "2026-03-04 12:59", nairobi, now, false, false},
		{"long past is immediate", "1999-01-01 00:00", nairobi, now, false, false},
		{"unix seconds", unix(now.Add(90 * time.Second)), nairobi, now.Add(90 * time.Second), true, false},
		{"unix zero is immediate", "0", nairobi, now, false, false},
		{"unix past is immediate", unix(now.Add(-time.Hour)), nairobi, now, false, false},
		{"exactly one year ahead", unix(now.AddDate(1, 0, 0)), nairobi, now.AddDate(1, 0, 0), true, false},
		{"one year and a second ahead", unix(now.AddDate(1, 0, 1)), nairobi, time.Time{}, false, true},
		{"local one year and a minute ahead", "2027-03-04 13:01", nairobi, time.Time{}, false, true},
		{"unix milliseconds are far ahead", strconv.FormatInt(now.UnixMilli(), 10), nairobi, time.Time{}, false, true},
		{"huge number", "99999999999999999999999", nairobi, time.Time{}, false, true},
		{"negative unix", "-5", nairobi, time.Time{}, false, true},
		{"fractional unix", "1772618400.5", nairobi, time.Time{}, false, true},
		{"exponent", "1.7e9", nairobi, time.Time{}, false, true},
		{"ISO T separator", "2026-03-04T14:30", nairobi, time.Time{}, false, true},
		{"RFC 3339", "2026-03-04T14:30:00Z", nairobi, time.Time{}, false, true},
		{"slashes", "2026/03/04 14:30", nairobi, time.Time{}, false, true},
		{"time only", "14:30", nairobi, time.Time{}, false, true},
		{"date only", "2026-03-04", nairobi, time.Time{}, false, true},
		{"no such day", "2026-02-30 10:00", nairobi, time.Time{}, false, true},
		{"hour 24", "2026-03-04 24:00", nairobi, time.Time{}, false, true},
		{"words", "tomorrow", nairobi, time.Time{}, false, true},
		{"trailing junk", "2026-03-04 14:30 please", nairobi, time.Time{}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			due, scheduled, err := sms.ParseTimeToSend(tc.in, tc.loc, now)
			if tc.bad {
				var e *sms.Error
				if !errors.As(err, &e) || e.Code != sms.CodeUnsupportedDataType || e.Field != "timeToSend" {
					t.Fatalf("ParseTimeToSend(%q) error = %v, want 1009 on timeToSend", tc.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTimeToSend(%q): %v", tc.in, err)
			}
			if !due.Equal(tc.due) || scheduled != tc.scheduled || due.Location() != time.UTC {
				t.Errorf("ParseTimeToSend(%q) = %s, %v; want %s, %v (in UTC)", tc.in, due, scheduled, tc.due, tc.scheduled)
			}
		})
	}
}

func TestCredit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want sms.Credit
		str  string
	}{
		{"0", 0, "0.00"},
		{"100", sms.Credits(100), "100.00"},
		{"545.00", 54500, "545.00"},
		{"0.5", 50, "0.50"},
		{"0.05", 5, "0.05"},
		{"1000000000000", sms.MaxCredit, "1000000000000.00"},
	} {
		got, err := sms.ParseCredit(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseCredit(%q) = %d (%s), %v; want %d (%s)", tc.in, got, got, err, tc.want, tc.str)
		}
	}
	for _, bad := range []string{"", "-1", "+1", "1.234", "1.", ".5", "1e3", "abc", "1,5", " 1", "1000000000000.01", "99999999999999999999"} {
		if got, err := sms.ParseCredit(bad); err == nil {
			t.Errorf("ParseCredit(%q) = %s, want an error", bad, got)
		}
	}
	// Too large is said as such, however many digits.
	for _, big := range []string{"1000000000000.01", "99999999999999", "99999999999999999999"} {
		if _, err := sms.ParseCredit(big); err == nil || !strings.Contains(err.Error(), "at most 1000000000000.00") {
			t.Errorf("ParseCredit(%q): %v, want an error naming the largest amount", big, err)
		}
	}
	if s := sms.Credit(-150).String(); s != "-1.50" {
		t.Errorf("Credit(-150) = %q, want -1.50", s)
	}
}
