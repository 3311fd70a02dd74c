// Package messaging is an embeddable business-messaging service: it sends
// WhatsApp, Instagram and Messenger messages (text, media and pre-approved
// WhatsApp templates), keeps contacts, and exposes the workspace Messaging API
// of the spec in-process.
//
// A Service is created with New over a Store (store/memstore for tests,
// store/sqlitestore for a single server) and a Provider (the channel
// provider, for example provider/fakeprovider). Service.Workspace returns a
// handle whose Messages, Contacts, Templates and Conversations only ever see
// that workspace's data. The REST surface lives in package httpapi.
//
// Two-way messaging: Service.RecordInbound stores a message a contact sent
// (the Meta receiver in httpapi calls it) and announces it with a
// message.received event; Messages.List and Conversations.List page
// through a workspace's messages and conversations; an inbound STOP opts
// the sender out of the channel (a send to them is then refused with
// recipient_opted_out) and START opts them back in (the defaults: a
// workspace may have its own keyword lists, WorkspaceInfo.OptOutKeywords
// and OptInKeywords). An inbound message
// keeps its type and content (InboundContent: media, location, contacts,
// replies, reactions, the message it quotes; an unknown type is
// TypeUnsupported), and Messages.Media streams its media from the provider
// with the workspace's credentials. A workspace whose OutsideWindow is
// OutsideWindowReject refuses free-form sends outside the 24-hour
// customer-service window (outside_customer_service_window).
//
// Every operation returns *Error on failure, carrying the spec's error code
// (validation_error, conflict, not_found, ...) and, for validation errors,
// the offending field.
//
// The service records metrics and spans through the OpenTelemetry API when
// Options.MeterProvider and Options.TracerProvider are set (the Metric*
// names; nil, the default, records nothing and costs nothing), and
// Service.Running and Store.Ping answer readiness probes (httpapi.Health).
package messaging
