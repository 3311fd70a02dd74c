package sms

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging/internal/paging"
)

// Credit is an amount of SMS credit in hundredths of a credit, so that sums
// and differences are exact. Credits(5) is five credits; String renders it
// as "5.00".
type Credit int64

// MaxCredit is the largest balance, top-up or cost the service accepts:
// one trillion credits.
const MaxCredit Credit = 1e12 * 100

// Credits returns n whole credits.
func Credits(n int64) Credit { return Credit(n * 100) }

// String renders c with two decimals, for example "545.00" or "0.50".
func (c Credit) String() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// ParseCredit parses a non-negative decimal amount of credits with at most
// two decimals ("100", "100.5", "0.25") and at most MaxCredit.
func ParseCredit(s string) (Credit, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || (hasDot && (frac == "" || len(frac) > 2 || !allDigits(frac))) {
		return 0, fmt.Errorf("must be a non-negative amount with at most two decimals (got %q)", s)
	}
	if len(strings.TrimLeft(whole, "0")) > 13 {
		return 0, fmt.Errorf("must be at most %s (got %q)", MaxCredit, s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be a non-negative amount with at most two decimals (got %q)", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	c := Credit(w*100 + f)
	if c > MaxCredit {
		return 0, fmt.Errorf("must be at most %s (got %q)", MaxCredit, s)
	}
	return c, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Credit: cost per segment, top-ups, the ledger and the balance.

// CheckCostPerSegment is the rule of a cost per SMS part: from 0.01 to
// MaxCredit. 0 is refused (CodeUnsupportedDataType naming
// "cost_per_segment"): an account never sends for free by mistake.
func CheckCostPerSegment(cost Credit) error {
	if cost <= 0 || cost > MaxCredit {
		return NewError(CodeUnsupportedDataType, "cost_per_segment", "must be from 0.01 to %s (got %s)", MaxCredit, cost)
	}
	return nil
}

// SetCostPerSegment sets what one SMS part costs an account, for the sends
// that follow (see CheckCostPerSegment).
func (s *SMS) SetCostPerSegment(ctx context.Context, partnerID string, cost Credit) error {
	if err := CheckCostPerSegment(cost); err != nil {
		return err
	}
	_, err := s.store.SMSAccountUpdate(ctx, &AccountUpdate{PartnerID: partnerID, CostPerSegment: &cost, At: s.now()})
	if err != nil {
		return s.accountError(err, partnerID)
	}
	return nil
}

// TopUp adds amount (positive) to an account's credit, recording it in the
// account's ledger without a reference, and returns the new balance. A
// top-up that would take the credit above MaxCredit is refused.
func (s *SMS) TopUp(ctx context.Context, partnerID string, amount Credit) (Credit, error) {
	if err := checkTopUpAmount(amount); err != nil {
		return 0, err
	}
	e, _, err := s.creditAdd(ctx, &CreditAddParams{PartnerID: partnerID, Amount: amount})
	if err != nil {
		return 0, err
	}
	return e.Balance, nil
}

func checkTopUpAmount(amount Credit) error {
	if amount <= 0 || amount > MaxCredit {
		return NewError(CodeUnsupportedDataType, "amount", "must be from 0.01 to %s", MaxCredit)
	}
	return nil
}

// creditAdd calls Store.SMSCreditAdd with p (its Max and At set here) and
// turns its errors into *Error.
func (s *SMS) creditAdd(ctx context.Context, p *CreditAddParams) (e, prev *LedgerEntry, err error) {
	p.Max, p.At = MaxCredit, s.now()
	e, prev, err = s.store.SMSCreditAdd(ctx, p)
	switch {
	case errors.Is(err, ErrCreditOverflow):
		ce := NewError(CodeUnsupportedDataType, "amount", "would take the credit above the maximum of %s", MaxCredit)
		ce.Err = err
		return nil, nil, ce
	case err != nil:
		return nil, nil, s.accountError(err, p.PartnerID)
	}
	return e, prev, nil
}

var referenceRe = regexp.MustCompile(`^[\x21-\x7e]{1,128}$`)

// TopUpParams are the arguments of AddTopUp.
type TopUpParams struct {
	PartnerID string
	// Amount is positive, at most MaxCredit.
	Amount Credit
	// Reference identifies the top-up (an invoice or payment number): 1
	// to 128 visible ASCII characters, unique in the account.
	Reference string
}

// TopUpResult is the outcome of AddTopUp.
type TopUpResult struct {
	// Entry is the top-up's ledger entry; its Balance is the credit just
	// after it.
	Entry *LedgerEntry
	// Replayed is true when Entry is the top-up an earlier call made with
	// the same reference: nothing was added this time.
	Replayed bool
}

// AddTopUp adds p.Amount to an account's credit once per p.Reference: a
// repeat with the same reference and amount adds nothing and returns the
// first top-up (Replayed), so that an operator retrying after a lost
// answer never credits twice. The same reference with another amount is
// CodeIdempotencyConflict naming "reference"; a top-up that would take the
// credit above MaxCredit is CodeUnsupportedDataType naming "amount".
func (s *SMS) AddTopUp(ctx context.Context, p *TopUpParams) (*TopUpResult, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedDataType, "", "parameters are required")
	}
	if err := checkTopUpAmount(p.Amount); err != nil {
		return nil, err
	}
	if !referenceRe.MatchString(p.Reference) {
		return nil, NewError(CodeUnsupportedDataType, "reference", "must be 1 to 128 visible ASCII characters")
	}
	e, prev, err := s.creditAdd(ctx, &CreditAddParams{PartnerID: p.PartnerID, Amount: p.Amount, Reference: p.Reference})
	if err != nil {
		return nil, err
	}
	if prev != nil {
		if prev.Amount != p.Amount {
			return nil, NewError(CodeIdempotencyConflict, "reference", "%q was used by a top-up of %s, not %s", clip(p.Reference), prev.Amount, p.Amount)
		}
		return &TopUpResult{Entry: prev, Replayed: true}, nil
	}
	return &TopUpResult{Entry: e}, nil
}

// MaxLedgerPage is the largest page of Ledger.
const MaxLedgerPage = 100

// Ledger returns a page of an account's ledger (top-ups, charges, refunds
// and its opening credit), newest first: at most limit (1 to
// MaxLedgerPage; 0 means 50) after the cursor (empty: from the newest).
// next is the cursor of the following page, empty when there is none.
func (s *SMS) Ledger(ctx context.Context, partnerID, cursor string, limit int) (entries []*LedgerEntry, next string, err error) {
	limit, ok := paging.Size(limit, 50, MaxLedgerPage)
	if !ok {
		return nil, "", NewError(CodeUnsupportedDataType, "limit", "must be 1 to %d", MaxLedgerPage)
	}
	before, ok := paging.ParseSeq(cursor)
	if !ok {
		return nil, "", NewError(CodeUnsupportedDataType, "cursor", "is not a cursor this API returned")
	}
	return accountPage(ctx, s, partnerID, limit, func(n int) ([]*LedgerEntry, error) {
		return s.store.SMSLedger(ctx, &LedgerParams{PartnerID: partnerID, Before: before, Limit: n})
	}, func(e *LedgerEntry) int64 { return e.Seq })
}

// BalanceResult is the answer of a balance request.
type BalanceResult struct {
	PartnerID string
	Credit    Credit
}

// Balance returns the credit of the account.
func (s *SMS) Balance(ctx context.Context, partnerID, apikey string) (*BalanceResult, error) {
	a, err := s.Authenticate(ctx, partnerID, apikey)
	if err != nil {
		return nil, err
	}
	return &BalanceResult{PartnerID: a.PartnerID, Credit: a.Credit}, nil
}
