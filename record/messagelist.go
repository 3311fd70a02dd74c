package record

import "time"

// StatusChange is one change of a message's status, as recorded by the
// store: the status the message moved to and when.
type StatusChange struct {
	Status string
	At     time.Time
}

// MessageCount is the number of a workspace's messages created in one
// hour that now have one status (see messaging.Messages.HourlyCounts).
type MessageCount struct {
	// Hour is the start of the hour, UTC.
	Hour   time.Time
	Status string
	Count  int
}
