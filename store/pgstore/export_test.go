package pgstore

// Internals for the tests of package pgstore_test.
var (
	ContactFilter = contactFilter
	QMessageClaim = qMessageClaim
	QSMSClaim     = qSMSClaim
	QWebhookClaim = qWebhookClaim
	QSessionSweep = qSessionSweep
)
