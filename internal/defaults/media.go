package defaults

// DefaultMaxMediaBytes is the default of Options.MaxMediaBytes: 100 MiB,
// WhatsApp's largest media (a document).
const DefaultMaxMediaBytes = 100 << 20
