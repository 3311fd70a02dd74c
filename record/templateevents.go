package record

// Provider template events and statuses (Meta's names), as reported by
// message_template_status_update webhooks and template lists.
const (
	ProviderTemplateApproved        = "APPROVED"
	ProviderTemplatePending         = "PENDING"
	ProviderTemplateRejected        = "REJECTED"
	ProviderTemplatePaused          = "PAUSED"
	ProviderTemplateDisabled        = "DISABLED"
	ProviderTemplateFlagged         = "FLAGGED"
	ProviderTemplateReinstated      = "REINSTATED"
	ProviderTemplateArchived        = "ARCHIVED"
	ProviderTemplateUnarchived      = "UNARCHIVED"
	ProviderTemplatePendingDeletion = "PENDING_DELETION"
	ProviderTemplateDeleted         = "DELETED"
	ProviderTemplateInAppeal        = "IN_APPEAL"
	ProviderTemplateLimitExceeded   = "LIMIT_EXCEEDED"
	// ProviderTemplateQuality is not Meta's: it stands for a
	// message_template_quality_update, which changes only the quality.
	ProviderTemplateQuality = "QUALITY"
)
