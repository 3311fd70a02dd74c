package httpapi

// StatusOf exposes the status of each error code to the external tests.
var StatusOf = statusOf
