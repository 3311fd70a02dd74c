package sqlrows

import (
	"errors"
	"fmt"

	"github.com/ujumbe/messaging/sms"
)

// AcceptResult is the stored form of an sms.AcceptResult, as an SMS
// idempotency record keeps it: the one error a result may hold is a
// refusal for want of credit. sqlitestore keeps a record's results as
// their JSON array; the field names are the stored ones.
type AcceptResult struct {
	Number  int64 `json:"n"`
	Balance int64 `json:"b"`
	Refused bool  `json:"r,omitempty"`
}

// StoreResults returns the stored forms of res; an error when a result
// holds an error other than sms.ErrInsufficientCredit.
func StoreResults(res []sms.AcceptResult) ([]AcceptResult, error) {
	out := make([]AcceptResult, len(res))
	for i, r := range res {
		switch {
		case r.Err == nil:
		case errors.Is(r.Err, sms.ErrInsufficientCredit):
			out[i].Refused = true
		default:
			return nil, fmt.Errorf("result %d: unexpected error %w", i, r.Err)
		}
		out[i].Number, out[i].Balance = r.Number, int64(r.Balance)
	}
	return out, nil
}

// LoadResults returns the results whose stored forms are stored.
func LoadResults(stored []AcceptResult) []sms.AcceptResult {
	out := make([]sms.AcceptResult, len(stored))
	for i, sr := range stored {
		out[i] = sms.AcceptResult{Number: sr.Number, Balance: sms.Credit(sr.Balance)}
		if sr.Refused {
			out[i].Err = sms.ErrInsufficientCredit
		}
	}
	return out
}
