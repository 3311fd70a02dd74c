package record

// MaxWebhookDescription is the most characters of a webhook endpoint's
// description.
const MaxWebhookDescription = 500

// MaxWebhookDeliveryPage is the most deliveries of one page of
// messaging.Webhooks.Deliveries.
const MaxWebhookDeliveryPage = 100
