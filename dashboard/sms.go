package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ujumbe/messaging/sms"
)

// SMS pages: the accounts a viewer may see, and each account's balance,
// sender ids, ledger and recent messages. They are mounted only when
// Options.SMS is set.

// smsPageSize is the number of ledger entries and of messages on a page.
const smsPageSize = 20

// maxTotalAccounts bounds the accounts whose credit the operator's total
// adds up.
const maxTotalAccounts = 10 * sms.MaxListPage

// smsOnly makes a route of the SMS pages answer 404 when Options.SMS is
// not set.
func smsOnly(fn func(h *Handler, w http.ResponseWriter, r *http.Request, req *request) error) func(h *Handler, w http.ResponseWriter, r *http.Request, req *request) error {
	return func(h *Handler, w http.ResponseWriter, r *http.Request, req *request) error {
		if h.sms == nil {
			p := &page{Title: "Not found"}
			p.fill(h, req)
			h.renderStatus(w, r, http.StatusNotFound, p, "The SMS pages are not enabled on this server.")
			return nil
		}
		return fn(h, w, r, req)
	}
}

// mayViewSMS reports whether v may see the SMS account partnerID.
func (v *Viewer) mayViewSMS(partnerID string) bool {
	return v.Operator || slices.Contains(v.SMSAccounts, partnerID)
}

// smsAccountsData is the SMS accounts page.
type smsAccountsData struct {
	Accounts []*sms.Account
	// Total is the credit of every account the viewer may see; Partial is
	// set when there were more than maxTotalAccounts (Total counts the
	// first ones).
	Total   sms.Credit
	Partial bool
	// Counted is the number of accounts Total adds up.
	Counted int
	// Next and First are the URLs of the next and first pages (operator).
	Next, First string
}

// smsNotFound answers that there is no such SMS account (or none the
// viewer may see: the answer is the same).
func (h *Handler) smsNotFound(w http.ResponseWriter, r *http.Request, req *request) {
	p := &page{Title: "Not found", Nav: "sms"}
	p.fill(h, req)
	h.renderStatus(w, r, http.StatusNotFound, p, "There is no such SMS account.")
}

// smsAccounts lists the SMS accounts the viewer may see, with their
// balance: every account for an operator (paged), the viewer's
// SMSAccounts otherwise.
func (h *Handler) smsAccounts(w http.ResponseWriter, r *http.Request, req *request) error {
	d := &smsAccountsData{}
	p := &page{Title: "SMS accounts", Nav: "sms", Data: d}
	p.fill(h, req)
	if !req.viewer.Operator {
		list, err := h.viewerSMSAccounts(req)
		if err != nil {
			return err
		}
		d.Accounts, d.Counted = list, len(list)
		for _, a := range list {
			d.Total += a.Credit
		}
		h.render(w, r, http.StatusOK, "smsaccounts", p)
		return nil
	}
	cursor := r.URL.Query().Get("cursor")
	list, next, err := h.sms.Accounts(req.ctx, cursor, smsPageSize*2)
	if err != nil {
		if p.smsFieldError(err) {
			h.render(w, r, http.StatusBadRequest, "smsaccounts", p)
			return nil
		}
		return err
	}
	d.Accounts = list
	base := h.prefix + "sms"
	if next != "" {
		d.Next = base + "?" + url.Values{"cursor": {next}}.Encode()
	}
	if cursor != "" {
		d.First = base
	}
	if d.Total, d.Counted, d.Partial, err = h.smsCredit(req); err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "smsaccounts", p)
	return nil
}

// viewerSMSAccounts reads the SMS accounts of a viewer who is not an
// operator (Viewer.SMSAccounts), skipping those that do not exist.
func (h *Handler) viewerSMSAccounts(req *request) ([]*sms.Account, error) {
	var out []*sms.Account
	for _, id := range req.viewer.SMSAccounts {
		a, err := h.sms.GetAccount(req.ctx, id)
		if smsCode(err) == sms.CodeNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// smsCredit adds up the credit of the SMS accounts the viewer may see:
// counted accounts, partial when there were more than maxTotalAccounts.
func (h *Handler) smsCredit(req *request) (total sms.Credit, counted int, partial bool, err error) {
	if !req.viewer.Operator {
		list, err := h.viewerSMSAccounts(req)
		if err != nil {
			return 0, 0, false, err
		}
		for _, a := range list {
			total += a.Credit
		}
		return total, len(list), false, nil
	}
	c := ""
	for counted < maxTotalAccounts {
		all, n, err := h.sms.Accounts(req.ctx, c, sms.MaxListPage)
		if err != nil {
			return 0, 0, false, err
		}
		for _, a := range all {
			total += a.Credit
		}
		counted += len(all)
		if c = n; c == "" {
			break
		}
	}
	return total, counted, c != "", nil
}

// smsCode is the code of an *sms.Error, 0 for another error or nil.
func smsCode(err error) int {
	var e *sms.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// smsFieldError records an error of package sms that names a field next
// to it (or, without a field, above the form) and reports whether it did;
// system errors are not recorded.
func (p *page) smsFieldError(err error) bool {
	var e *sms.Error
	if !errors.As(err, &e) || e.Code == sms.CodeSystemError {
		return false
	}
	p.showError(e.Field, e.Description)
	return true
}

// smsAccountData is the page of one SMS account.
type smsAccountData struct {
	Account  *sms.Account
	Ledger   []*sms.LedgerEntry
	Messages []smsMessageRow
	// LedgerNext, LedgerFirst, MessagesNext and MessagesFirst are the
	// URLs of the neighbouring pages of each list.
	LedgerNext, LedgerFirst, MessagesNext, MessagesFirst string
}

// smsMessageRow is a message with its known delivery report.
type smsMessageRow struct {
	Msg    *sms.Message
	Report *sms.Report
}

// smsAccount shows an account: balance, sender ids (an operator may add
// one), the ledger and the recent messages with their delivery reports.
func (h *Handler) smsAccount(w http.ResponseWriter, r *http.Request, req *request) error {
	p := &page{Nav: "sms"}
	return h.renderSMSAccount(w, r, req, p, http.StatusOK)
}

func (h *Handler) renderSMSAccount(w http.ResponseWriter, r *http.Request, req *request, p *page, status int) error {
	id := r.PathValue("partnerID")
	if !req.viewer.mayViewSMS(id) {
		h.smsNotFound(w, r, req)
		return nil
	}
	a, err := h.sms.GetAccount(req.ctx, id)
	if smsCode(err) == sms.CodeNotFound {
		h.smsNotFound(w, r, req)
		return nil
	}
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if r.Method != http.MethodGet {
		q = url.Values{}
	}
	d := &smsAccountData{Account: a}
	p.Title, p.Nav, p.Data = "SMS account "+a.PartnerID, "sms", d
	p.fill(h, req)
	ledgerCursor, msgCursor := q.Get("ledger"), q.Get("messages")
	var next string
	d.Ledger, next, err = h.sms.Ledger(req.ctx, id, ledgerCursor, smsPageSize)
	if err == nil {
		var mnext string
		var msgs []*sms.Message
		msgs, mnext, err = h.sms.Messages(req.ctx, id, msgCursor, smsPageSize)
		for _, m := range msgs {
			d.Messages = append(d.Messages, smsMessageRow{Msg: m, Report: m.KnownReport()})
		}
		base := h.prefix + "sms/" + url.PathEscape(id)
		link := func(ledger, messages string) string {
			v := url.Values{}
			if ledger != "" {
				v.Set("ledger", ledger)
			}
			if messages != "" {
				v.Set("messages", messages)
			}
			if len(v) == 0 {
				return base
			}
			return base + "?" + v.Encode()
		}
		if next != "" {
			d.LedgerNext = link(next, msgCursor) + "#ledger"
		}
		if ledgerCursor != "" {
			d.LedgerFirst = link("", msgCursor) + "#ledger"
		}
		if mnext != "" {
			d.MessagesNext = link(ledgerCursor, mnext) + "#messages"
		}
		if msgCursor != "" {
			d.MessagesFirst = link(ledgerCursor, "") + "#messages"
		}
	}
	if err != nil {
		// A bad cursor names its field; cursor is ambiguous between the
		// two lists, so it is shown above them.
		if p.smsFieldError(err) {
			for f, msg := range p.Errors {
				p.Problem = strings.TrimSpace(p.Problem + " " + msg)
				delete(p.Errors, f)
			}
			h.render(w, r, http.StatusBadRequest, "smsaccount", p)
			return nil
		}
		return err
	}
	h.render(w, r, status, "smsaccount", p)
	return nil
}

// addSMSSender approves a sender id for an account (operator only): the
// same call as POST /admin/v1/sms/accounts/{partnerID}/senders.
func (h *Handler) addSMSSender(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	id := r.PathValue("partnerID")
	sender := r.PostForm.Get("shortcode")
	a, err := h.sms.AddSender(req.ctx, id, sender)
	if smsCode(err) == sms.CodeNotFound {
		h.smsNotFound(w, r, req)
		return nil
	}
	if err != nil {
		p := &page{Form: r.PostForm}
		if !p.smsFieldError(err) {
			return err
		}
		return h.renderSMSAccount(w, r, req, p, http.StatusUnprocessableEntity)
	}
	h.flash(w, "Sender id "+sender+" approved for "+a.PartnerID+".")
	http.Redirect(w, r, h.prefix+"sms/"+url.PathEscape(a.PartnerID), http.StatusSeeOther)
	return nil
}
