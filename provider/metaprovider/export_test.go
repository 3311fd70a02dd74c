package metaprovider

import (
	"context"

	"github.com/ujumbe/messaging"
)

// RecordStatuses makes rc hand a copy of every status report to record
// before the service applies it, so that tests see the reports as the
// receiver built them.
func RecordStatuses(rc *Receiver, record func(messaging.ProviderStatus)) {
	rc.svc = recordingService{service: rc.svc, record: record}
}

type recordingService struct {
	service
	record func(messaging.ProviderStatus)
}

func (r recordingService) ApplyProviderStatus(ctx context.Context, p *messaging.ProviderStatus) (bool, error) {
	r.record(*p)
	return r.service.ApplyProviderStatus(ctx, p)
}
