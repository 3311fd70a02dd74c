package messaging

// WebhookAddressAllowed exposes the webhook guard's address check to the
// external tests.
var WebhookAddressAllowed = webhookAddressAllowed
