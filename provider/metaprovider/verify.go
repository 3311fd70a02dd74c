package metaprovider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/ujumbe/messaging"
)

// MaxPhoneNumberPages bounds the pages of a WABA's phone numbers that
// VerifyConnection reads (of 100 numbers each).
const MaxPhoneNumberPages = 10

// VerifyConnection implements messaging.ConnectionVerifier with reads the
// token can make only if it controls the account:
//
//   - WhatsApp: GET /{waba-id}/phone_numbers (following paging.next on the
//     BaseURL's host) must list the phone-number id; its
//     display_phone_number, quality_rating (GREEN, YELLOW, RED, UNKNOWN)
//     and messaging_limit_tier (TIER_250 ... TIER_UNLIMITED; Meta
//     deprecates it for the portfolio's limit, and a number without one
//     reports nothing) are returned.
//   - Messenger: GET /me must answer the page id (the token is the page's
//     own; a public page is readable with any token, so reading the page
//     proves nothing).
//   - Instagram: GET /{instagram-account-id} must answer that id.
//
// Meta's code 190 refuses the access token; another refusal that retrying
// cannot change (an unknown or unreadable object, a missing permission)
// refuses the account field; a 5xx, a rate limit or an unreachable Graph
// API is an error that tells nothing.
func (p *Provider) VerifyConnection(ctx context.Context, s *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	if s == nil || s.AccountID == "" || s.AccessToken == "" {
		channel := messaging.ChannelWhatsApp
		if s != nil && s.Channel != "" {
			channel = s.Channel
		}
		return nil, notConfigured(channel)
	}
	switch s.Channel {
	case messaging.ChannelWhatsApp:
		return p.verifyPhoneNumber(ctx, s)
	case messaging.ChannelMessenger:
		var me struct {
			ID string `json:"id"`
		}
		if err := p.readNode(ctx, p.base+"me?fields=id,name", s.AccessToken, FieldPageID, &me); err != nil {
			return nil, err
		}
		if me.ID != s.AccountID {
			return nil, &messaging.VerificationError{Field: FieldPageID, Text: "the access token is not a page access token of this page"}
		}
		return &messaging.VerifiedAccount{}, nil
	case messaging.ChannelInstagram:
		var node struct {
			ID string `json:"id"`
		}
		if err := p.readNode(ctx, p.base+url.PathEscape(s.AccountID)+"?fields=id,username", s.AccessToken, FieldInstagramAccountID, &node); err != nil {
			return nil, err
		}
		if node.ID != s.AccountID {
			return nil, &messaging.VerificationError{Field: FieldInstagramAccountID, Text: "the Graph API answered another account"}
		}
		return &messaging.VerifiedAccount{}, nil
	}
	return nil, &messaging.VerificationError{Field: "channel", Text: "metaprovider does not serve channel " + s.Channel}
}

// readNode GETs rawURL with token into v. A refusal is as refusal
// returns it.
func (p *Provider) readNode(ctx context.Context, rawURL, token, field string, v any) error {
	raw, _, err := p.do(ctx, http.MethodGet, rawURL, token, nil)
	if err != nil {
		return refusal(err, field)
	}
	if json.Unmarshal(raw, v) != nil {
		return permanent(CodeInvalidResponse, "the Graph API answered a node that is not JSON")
	}
	return nil
}

// refusal turns a Graph error that retrying cannot change into a
// VerificationError naming field; other errors, and Meta's code 190 (a
// Credentials SendError, which refuses the access token), are returned as
// they are.
func refusal(err error, field string) error {
	var se *messaging.SendError
	if !errors.As(err, &se) || se.Retryable || se.Credentials {
		return err // a Credentials error refuses the access token as it is
	}
	return &messaging.VerificationError{Field: field, Code: se.Code, Text: se.Text}
}

// verifyPhoneNumber finds s.AccountID among the phone numbers of the
// WABA s.WABAID, read with s.AccessToken.
func (p *Provider) verifyPhoneNumber(ctx context.Context, s *messaging.ChannelSender) (*messaging.VerifiedAccount, error) {
	if s.WABAID == "" {
		return nil, &messaging.VerificationError{Field: FieldWABAID, Text: "a WhatsApp connection needs its WhatsApp Business Account id"}
	}
	first := p.base + url.PathEscape(s.WABAID) + "/phone_numbers?" + url.Values{"fields": {"id,display_phone_number,quality_rating,messaging_limit_tier"}, "limit": {"100"}}.Encode()
	next := first
	for range MaxPhoneNumberPages {
		var page struct {
			Data []struct {
				ID                 string `json:"id"`
				DisplayPhoneNumber string `json:"display_phone_number"`
				QualityRating      string `json:"quality_rating"`
				MessagingLimitTier string `json:"messaging_limit_tier"`
			} `json:"data"`
			Paging struct {
				Next    string `json:"next"`
				Cursors struct {
					After string `json:"after"`
				} `json:"cursors"`
			} `json:"paging"`
		}
		if err := p.readNode(ctx, next, s.AccessToken, FieldWABAID, &page); err != nil {
			return nil, err
		}
		for _, n := range page.Data {
			if n.ID == s.AccountID {
				return &messaging.VerifiedAccount{DisplayPhoneNumber: displayE164(n.DisplayPhoneNumber),
					QualityRating: n.QualityRating, MessagingTier: tierOf(n.MessagingLimitTier)}, nil
			}
		}
		switch {
		case page.Paging.Next == "":
			return nil, &messaging.VerificationError{Field: FieldPhoneNumberID,
				Text: "the phone number is not one of the WhatsApp Business Account's numbers that the access token can read"}
		case p.sameHost(page.Paging.Next):
			next = page.Paging.Next
		case page.Paging.Cursors.After != "":
			next = first + "&" + url.Values{"after": {page.Paging.Cursors.After}}.Encode()
		default:
			return nil, permanent(CodeInvalidResponse, "the Graph API's phone number list points to another host without a cursor")
		}
	}
	return nil, &messaging.VerificationError{Field: FieldPhoneNumberID,
		Text: "the phone number is not among the first pages of the WhatsApp Business Account's numbers"}
}

// displayE164 writes Meta's display number ("+1 555-555-0100", "15555550100")
// as "+" and its digits; the service keeps it only if it is valid E.164.
func displayE164(s string) string {
	out := []byte{'+'}
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i])
		}
	}
	if len(out) == 1 {
		return ""
	}
	return string(out)
}
