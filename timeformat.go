package messaging

import (
	"time"

	"github.com/ujumbe/messaging/record"
)

// jsonTime is a time.Time that marshals with FormatTime.
type jsonTime time.Time

// MarshalJSON implements json.Marshaler.
func (t jsonTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + record.FormatTime(time.Time(t)) + `"`), nil
}
