// Package client is a typed Go client of the REST surface served by package
// httpapi: the workspace Messaging API under /v1 (Client) and the SMS API
// under /sms/v1 (SMSClient), and the operator routes under /admin/v1
// (AdminClient). It is for programs that call a deployed server;
// programs that embed the library call it in-process instead. The client's
// request and answer types (SendParams, SendTemplateParams,
// ContactCreateParams, ...) have the JSON of the API's schemas and the
// field names of the library's types of the same names, so switching
// between the two is a small change. The package imports nothing of the
// server library but package webhooksig (standard library only): a
// program using the client links neither the server nor its dependencies.
//
// Each resource has a service on the Client, as in stripe-go and
// twilio-go: c.Messages.Send, c.Templates.Get, c.Contacts.All, ... Every
// method takes a context first; its deadline bounds the call, retries
// included.
//
// Errors of the API are *Error values carrying the error envelope (code,
// message, statusCode, request_id, field) and the X-Correlation-ID header.
// Match one with errors.Is against an *Error carrying the code (the
// client's own Code constants; the library's errors and sentinels, such as
// messaging.ErrNotFound, do not match):
//
//	errors.Is(err, &client.Error{Code: client.CodeConflict})
//	errors.Is(err, &client.Error{ResponseCode: client.SMSCodeLowCredit})
//
// Retries follow the spec's policy: 429, 5xx and network errors are
// retried with exponential backoff starting at 1 second, doubling each
// time, with plus or minus 20 percent jitter, waiting at least the
// Retry-After the server gave, within Options.MaxAttempts and
// Options.MaxElapsed. A request is retried only when repeating it is safe:
// GET, PUT and DELETE, the read-only SMS requests, and a POST that carries
// an idempotency key. The client gives every send (messages, templates,
// SMS, bulk SMS) a UUID idempotency key unless the caller set one, and
// reuses it across the retries, so a retried send never sends twice.
//
// Media.Upload streams a file from an io.Reader as a multipart body
// written while the request goes (the file is never held in memory); it
// is never retried, as the reader cannot be read twice. Messages.MarkRead
// is retried as an idempotent call.
//
// Receivers of webhooks check a delivery with VerifyWebhook and decode it
// with ParseEvent (or both at once with ParseWebhook).
package client
