// Package queuegauges registers the three OpenTelemetry gauges of a work
// queue read from its store at each collection: how many items wait, how
// many are due now, and how long the oldest due one has waited. The
// message dispatcher and the SMS scheduler both report their queue so.
package queuegauges

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Stats are a queue's figures at one collection.
type Stats struct {
	// Pending counts the items not done yet; Due those due now and not
	// claimed.
	Pending, Due int64
	// OldestDueAt is when the oldest due item became due; nil when none
	// is.
	OldestDueAt *time.Time
}

// Gauge names and describes one gauge.
type Gauge struct{ Name, Description string }

// Queue describes the gauges of a queue.
type Queue struct {
	// Depth counts Pending and Due counts Due, in Unit; OldestAge is in
	// seconds.
	Depth, Due, OldestAge Gauge
	Unit                  string
	// Read returns the figures at now. It is given 2 s; a failure is
	// logged with Failed as the message, and the gauges are then absent
	// from that collection (an error returned to OpenTelemetry would go
	// to its global error handler).
	Read   func(ctx context.Context, now time.Time) (*Stats, error)
	Now    func() time.Time
	Log    *slog.Logger
	Failed string
}

// Register creates q's gauges on m and registers their callback.
func Register(m metric.Meter, q *Queue) error {
	depth, err1 := m.Int64ObservableGauge(q.Depth.Name, metric.WithUnit(q.Unit), metric.WithDescription(q.Depth.Description))
	due, err2 := m.Int64ObservableGauge(q.Due.Name, metric.WithUnit(q.Unit), metric.WithDescription(q.Due.Description))
	age, err3 := m.Float64ObservableGauge(q.OldestAge.Name, metric.WithUnit("s"), metric.WithDescription(q.OldestAge.Description))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	_, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		now := q.Now()
		st, err := q.Read(ctx, now)
		if err != nil {
			q.Log.WarnContext(ctx, q.Failed, "err", err.Error())
			return nil
		}
		o.ObserveInt64(depth, st.Pending)
		o.ObserveInt64(due, st.Due)
		var oldest float64
		if st.OldestDueAt != nil {
			oldest = max(0, now.Sub(*st.OldestDueAt).Seconds())
		}
		o.ObserveFloat64(age, oldest)
		return nil
	}, depth, due, age)
	return err
}
