package defaults

import "time"

// WebhookSecretOverlap is how long the previous secret of an endpoint
// keeps signing deliveries after Webhooks.RotateSecret, beside the new one.
const WebhookSecretOverlap = 24 * time.Hour
