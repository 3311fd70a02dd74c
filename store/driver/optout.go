package driver

import "github.com/ujumbe/messaging/record"

// SuppressionSetParams are the arguments of Store.SuppressionSet.
type SuppressionSetParams struct {
	Suppression *record.Suppression
	// Event, when non-nil, is queued if the state changes.
	Event *EventRecord
}

// SuppressionListParams are the arguments of Store.SuppressionList.
type SuppressionListParams struct {
	WorkspaceID string
	// Recipients are the addresses asked about (at least one).
	Recipients []string
}
