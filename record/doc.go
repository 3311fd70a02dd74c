// Package record holds the library's records and their values: messages,
// contacts, templates, channel connections, webhook endpoints and
// deliveries, API keys, workspaces, audit events and sessions, with the
// constants that name their states, types and limits, and the error type
// every operation returns.
//
// The records are shared by the Service (package messaging, which
// re-exports the ones an embedder names most, such as messaging.Message)
// and the stores (package store/driver), like River's rivertype. The
// package holds data and the rules that belong to a value alone (cloning,
// a key's state at a time); the Service owns validation and state
// changes.
package record
