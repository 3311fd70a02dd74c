package sms

import (
	"context"

	"github.com/ujumbe/messaging/internal/paging"
)

// MaxListPage is the largest page of Accounts and Messages.
const MaxListPage = 100

// listLimit checks a page size: 0 means 50.
func listLimit(limit int) (int, error) {
	size, ok := paging.Size(limit, 50, MaxListPage)
	if !ok {
		return 0, NewError(CodeUnsupportedDataType, "limit", "must be 1 to %d", MaxListPage)
	}
	return size, nil
}

// Accounts returns a page of every account, in partnerID order (byte-wise):
// at most limit (1 to MaxListPage; 0 means 50) after the cursor (empty:
// from the first). next is the cursor of the following page, empty when
// there is none. It is an operator's listing: it shows every account.
func (s *SMS) Accounts(ctx context.Context, cursor string, limit int) (accounts []*Account, next string, err error) {
	if limit, err = listLimit(limit); err != nil {
		return nil, "", err
	}
	if cursor != "" && !partnerIDRe.MatchString(cursor) {
		return nil, "", NewError(CodeUnsupportedDataType, "cursor", "is not a cursor this API returned")
	}
	list, err := s.store.SMSAccountList(ctx, &AccountListParams{After: cursor, Limit: limit + 1})
	if err != nil {
		return nil, "", systemError(err)
	}
	list, next = paging.Cut(list, limit, func(a *Account) string { return a.PartnerID })
	return list, next, nil
}

// Messages returns a page of an account's messages, newest first, each
// with its state and the last delivery report stored (pushed by the
// gateway, or fetched by a DeliveryReport request; see KnownReport): at
// most limit (1 to MaxListPage; 0 means 50) after the cursor (empty: from
// the newest). next is the cursor of the following page, empty when there
// is none. A missing account is CodeNotFound.
func (s *SMS) Messages(ctx context.Context, partnerID, cursor string, limit int) (msgs []*Message, next string, err error) {
	if limit, err = listLimit(limit); err != nil {
		return nil, "", err
	}
	before, ok := paging.ParseSeq(cursor)
	if !ok || (cursor != "" && !allDigits(cursor)) {
		return nil, "", NewError(CodeUnsupportedDataType, "cursor", "is not a cursor this API returned")
	}
	return accountPage(ctx, s, partnerID, limit, func(n int) ([]*Message, error) {
		return s.store.SMSMessageList(ctx, &MessageListParams{PartnerID: partnerID, Before: before, Limit: n})
	}, func(m *Message) int64 { return m.Number })
}

// accountPage reads a page of an account's records, newest first by
// sequence number: list reads n records (one more than limit, to tell
// whether a next page exists) and seq gives a record's number, its
// cursor. A missing account is CodeNotFound; a store failure is a system
// error.
func accountPage[T any](ctx context.Context, s *SMS, partnerID string, limit int, list func(n int) ([]T, error), seq func(T) int64) (items []T, next string, err error) {
	if _, err := s.GetAccount(ctx, partnerID); err != nil {
		return nil, "", err
	}
	items, err = list(limit + 1)
	if err != nil {
		return nil, "", systemError(err)
	}
	items, next = paging.Cut(items, limit, func(v T) string { return paging.FormatSeq(seq(v)) })
	return items, next, nil
}

// KnownReport returns the delivery report of m as far as the service
// knows it without asking the gateway: its stored report when final,
// Scheduled while it waits for its timeToSend, DeliveryImpossible once it
// failed, otherwise its last stored report (nil when there is none yet).
// DeliveryReport answers the same, asking the gateway for a sent message
// whose stored report is not final.
func (m *Message) KnownReport() *Report {
	if m.Report != nil && m.Report.Final() {
		return m.Report
	}
	switch m.Status {
	case StatusScheduled:
		return &Report{Status: DeliveryStatus(DeliveryScheduled), Description: DeliveryScheduled, NetworkID: m.NetworkID}
	case StatusFailed:
		return &Report{Status: DeliveryStatus(DeliveryImpossible), Description: DeliveryImpossible, NetworkID: m.NetworkID, Time: m.UpdatedAt}
	}
	return m.Report
}
