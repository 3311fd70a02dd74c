package record

// CodeNoProvider is the code of the permanent SendError of a message on
// a channel that no provider serves (a message queued before the service
// was configured without its channel).
const CodeNoProvider = "no_provider"
