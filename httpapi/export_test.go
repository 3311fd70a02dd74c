package httpapi

// StatusOf exposes the status of each error code to the external tests.
var StatusOf = statusOf

// SMSStatus exposes the status of each SMS API error to the external tests.
var SMSStatus = smsStatus
