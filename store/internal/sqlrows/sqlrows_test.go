package sqlrows

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
)

func TestBefore(t *testing.T) {
	for _, c := range []struct{ in, want int64 }{{0, math.MaxInt64}, {-1, math.MaxInt64}, {1, 1}, {42, 42}} {
		if got := Before(c.in); got != c.want {
			t.Errorf("Before(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestResultsRoundTrip(t *testing.T) {
	res := []sms.AcceptResult{{Number: 7, Balance: 90}, {Balance: 90, Err: sms.ErrInsufficientCredit}, {Number: 8, Balance: 80}}
	stored, err := StoreResults(res)
	if err != nil {
		t.Fatal(err)
	}
	want := []AcceptResult{{Number: 7, Balance: 90}, {Balance: 90, Refused: true}, {Number: 8, Balance: 80}}
	if d := cmp.Diff(want, stored); d != "" {
		t.Errorf("StoreResults (-want +got):\n%s", d)
	}
	got := LoadResults(stored)
	if len(got) != len(res) {
		t.Fatalf("LoadResults: %d results, want %d", len(got), len(res))
	}
	for i, r := range res {
		if g := got[i]; g.Number != r.Number || g.Balance != r.Balance || !errors.Is(g.Err, r.Err) {
			t.Errorf("LoadResults: result %d is %+v, want %+v", i, g, r)
		}
	}
	if _, err := StoreResults([]sms.AcceptResult{{Err: errors.New("boom")}}); err == nil {
		t.Error("StoreResults kept an error other than a refusal for want of credit")
	}
}

func TestRecordTimes(t *testing.T) {
	at, retry := time.Unix(100, 0), time.Unix(200, 0)
	for _, c := range []struct {
		state     string
		due       time.Time
		delivered bool
	}{
		{record.DeliveryPending, retry, false},
		{record.DeliveryDelivered, at, true},
		{record.DeliveryFailed, at, false},
	} {
		due, delivered := RecordTimes(&driver.WebhookRecordParams{State: c.state, At: at, DueAt: retry})
		if !due.Equal(c.due) || (delivered != nil) != c.delivered || (delivered != nil && !delivered.Equal(at)) {
			t.Errorf("%s: due %v, delivered %v; want due %v, delivered %v", c.state, due, delivered, c.due, c.delivered)
		}
	}
}
