package defaults

// ProviderCodeUnconfirmed is the code in the failure_reason of a message
// failed because the provider never confirmed a send whose outcome was
// unknown, under the workspace policy UnconfirmedFail:
// "[unconfirmed] The provider did not confirm the send within 5m0s; ...".
const ProviderCodeUnconfirmed = "unconfirmed"
