package record

// CodeUnverified is the code of the retryable SendError a send through a
// connection the provider has not verified fails with (see
// messaging.Service.ChannelSender).
const CodeUnverified = "pending_verification"
