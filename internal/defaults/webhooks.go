package defaults

import "time"

// DefaultWebhookSchedule is the default retry schedule of webhook
// deliveries (WebhookOptions.Schedule).
func DefaultWebhookSchedule() []time.Duration {
	return []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
}
