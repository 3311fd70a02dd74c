package sms

// PushesInTx reports whether s queues a report's push in the transaction
// that stores the report (see OutboxStore).
func PushesInTx(s *SMS) bool { return s.pushInTx }
