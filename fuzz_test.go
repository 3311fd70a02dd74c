package messaging_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/webhooksig"
)

// The fuzz targets of the root package. Their seed corpora are in
// testdata/fuzz/<name>; CI runs each for a few seconds (.ci/fuzz). Each
// checks properties, not just the absence of panics.

// wantValidation fails unless err is a validation_error naming field.
func wantValidation(t *testing.T, what string, err error, field string) {
	t.Helper()
	var e *messaging.Error
	if !errors.As(err, &e) || e.Code != messaging.CodeValidation {
		t.Fatalf("%s: error %v (%T), want a validation_error", what, err, err)
	}
	if field != "" && e.Field != field {
		t.Fatalf("%s: error field %q, want %q (%v)", what, e.Field, field, err)
	}
}

var e164Strict = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// FuzzNormalizePhone: NormalizePhone accepts only canonical E.164 numbers
// (returned unchanged, accepted again), refuses everything else with a
// validation_error on phone, and agrees with the SMS API's ValidMobile on
// the same number without its '+'.
func FuzzNormalizePhone(f *testing.F) {
	f.Add("+254712345678") // more seeds in testdata/fuzz/FuzzNormalizePhone
	f.Fuzz(func(t *testing.T, s string) {
		p, err := messaging.NormalizePhone(s)
		if err != nil {
			wantValidation(t, "NormalizePhone", err, "phone")
		} else {
			if p != s || !e164Strict.MatchString(p) {
				t.Fatalf("NormalizePhone(%q) = %q: want the input back, in E.164", s, p)
			}
			if again, err := messaging.NormalizePhone(p); err != nil || again != p {
				t.Fatalf("NormalizePhone(%q) = %q, %v: not idempotent", p, again, err)
			}
		}
		// The same number as the SMS API writes it (no '+').
		if m, ok := strings.CutPrefix(s, "+"); ok {
			cc, merr := sms.ValidMobile(m)
			if (merr == nil) != (err == nil) {
				t.Fatalf("NormalizePhone(%q) error %v but ValidMobile(%q) error %v: they disagree", s, err, m, merr)
			}
			if merr != nil {
				var se *sms.Error
				if !errors.As(merr, &se) || se.Code != sms.CodeInvalidMobile {
					t.Fatalf("ValidMobile(%q) = %v, want code %d", m, merr, sms.CodeInvalidMobile)
				}
			} else if !strings.HasPrefix(m, strconv.Itoa(cc)) {
				t.Fatalf("ValidMobile(%q) country code %d is not the number's prefix", m, cc)
			}
		}
	})
}

// FuzzValidEmail: an address ValidEmail accepts is plain (one '@', no
// space or control character, valid UTF-8, at most 254 bytes, a dotted
// domain, what net/mail parses back); a contact created with it is found by
// searching for it (or its first MaxSearchLen characters). An address it refuses is refused by Contacts.Create as a
// validation_error on email.
func FuzzValidEmail(f *testing.F) {
	f.Add("amina@example.com") // more seeds in testdata/fuzz/FuzzValidEmail
	store := memstore.New()
	svc, err := messaging.New(store, fakeprovider.New(), nil)
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "fuzz", Channels: svc.Channels()}); err != nil {
		f.Fatal(err)
	}
	cs := svc.Workspace("fuzz").Contacts
	f.Fuzz(func(t *testing.T, s string) {
		ok := messaging.ValidEmail(s)
		c, err := cs.Create(ctx, &messaging.ContactCreateParams{FirstName: "Fuzz", Email: s})
		if !ok {
			if s == "" {
				wantValidation(t, "Create with no email", err, "phone")
			} else {
				wantValidation(t, fmt.Sprintf("Create with %q", s), err, "email")
			}
			return
		}
		if len(s) > 254 || strings.Count(s, "@") != 1 || !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsControl(r)
		}) {
			t.Fatalf("ValidEmail accepted %q", s)
		}
		if _, domain, _ := strings.Cut(s, "@"); !strings.Contains(domain, ".") {
			t.Fatalf("ValidEmail accepted %q without a dotted domain", s)
		}
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			t.Fatalf("ValidEmail accepted %q, which net/mail reads as %v, %v", s, a, err)
		}
		if err != nil {
			if messaging.ErrorCode(err) == messaging.CodeConflict {
				return // the same address (in another case) came earlier
			}
			t.Fatalf("Create with valid email %q: %v", s, err)
		}
		q := s // searches hold at most MaxSearchLen characters: a prefix finds it too
		if r := []rune(q); len(r) > record.MaxSearchLen {
			q = string(r[:record.MaxSearchLen])
		}
		page, err := cs.List(ctx, &messaging.ContactQuery{Search: q, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(page.Items, func(x *messaging.Contact) bool { return x.ID == c.ID }) {
			t.Fatalf("a contact with email %q is not found by searching for it", s)
		}
	})
}

var placeholderRe = regexp.MustCompile(`\{\{([0-9]+)\}\}`)

// FuzzTemplateVariables: TemplateVariables returns the numbers 1..n used in
// the text (each placeholder's number among them) or a validation_error on
// the field. Any template the service accepts has a SendExample that the
// service accepts and that the fake provider, which applies Meta's rules,
// accepts too: the send example is never wrong.
func FuzzTemplateVariables(f *testing.F) {
	f.Add("Order update", "Hi {{1}}, your order {{2}} has shipped.") // more in testdata/fuzz/FuzzTemplateVariables
	store := memstore.New()
	fake := fakeprovider.NewWithOptions(&fakeprovider.Options{Templates: func(ctx context.Context, ws, name, lang string) (*messaging.Template, error) {
		return store.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: ws, Name: name, Language: lang})
	}})
	svc, err := messaging.New(store, fake, nil)
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "fuzz", Channels: svc.Channels()}); err != nil {
		f.Fatal(err)
	}
	ws := svc.Workspace("fuzz")
	n := 0
	f.Fuzz(func(t *testing.T, header, body string) {
		vars, err := messaging.TemplateVariables("body", body)
		if err != nil {
			wantValidation(t, "TemplateVariables", err, "body")
		} else {
			sorted := slices.Sorted(slices.Values(vars))
			for i, v := range sorted {
				if v != i+1 {
					t.Fatalf("TemplateVariables(%q) = %v: not 1..n", body, vars)
				}
			}
			for _, m := range placeholderRe.FindAllStringSubmatch(body, -1) {
				if v, err := strconv.Atoi(m[1]); err == nil && !slices.Contains(vars, v) {
					t.Fatalf("TemplateVariables(%q) = %v misses %s", body, vars, m[0])
				}
			}
		}

		n++
		p := &messaging.TemplateCreateParams{Name: "t" + strconv.Itoa(n), Category: record.CategoryUtility, Language: "en",
			Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: body}}}
		if header != "" {
			p.Components = append([]messaging.TemplateComponent{{Type: "HEADER", Format: "TEXT", Text: header}}, p.Components...)
		}
		tpl, err := ws.Templates.Create(ctx, p)
		if err != nil {
			wantValidation(t, "Templates.Create", err, "")
			return
		}
		ex := messaging.SendExample(tpl)
		res, err := ws.Messages.SendTemplate(ctx, ex)
		if err != nil {
			t.Fatalf("the send example of header %q body %q is refused: %v", header, body, err)
		}
		m, err := ws.Messages.Get(ctx, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fake.Send(ctx, nil, m); err != nil {
			t.Fatalf("the provider refuses the send example of header %q body %q: %v", header, body, err)
		}
	})
}

// FuzzVerifyWebhook: VerifyWebhook accepts a request only when one of its
// v1 signatures is the HMAC of id, timestamp and body and the timestamp is
// within the tolerance; what SignWebhook signs always verifies, and
// changing the body or the id makes it fail.
func FuzzVerifyWebhook(f *testing.F) {
	f.Add(vectorID, "1614265330", vectorSig, []byte(vectorBody), int64(0)) // more in testdata/fuzz/FuzzVerifyWebhook
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte, skew int64) {
		now := time.Unix(vectorTS, 0).Add(time.Duration(skew))
		h := http.Header{}
		h["Webhook-Id"] = []string{id}
		h["Webhook-Timestamp"] = []string{ts}
		h["Webhook-Signature"] = []string{sig}
		err := webhooksig.Verify(vectorSecret, h, body, now, 0)
		if err == nil {
			n, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || id == "" {
				t.Fatalf("verified with id %q timestamp %q", id, ts)
			}
			d := now.Sub(time.Unix(n, 0))
			if d > 5*time.Minute || d < -5*time.Minute {
				t.Fatalf("verified a timestamp %v away from now", d)
			}
			want, _ := webhooksig.Sign(vectorSecret, id, time.Unix(n, 0), body)
			if !slices.Contains(strings.Fields(sig), want) {
				t.Fatalf("verified signatures %q, none of which is %q", sig, want)
			}
		} else if !errors.Is(err, webhooksig.ErrSignature) {
			t.Fatalf("VerifyWebhook = %v, want ErrWebhookSignature", err)
		}
		// What SignWebhook signs verifies, unless the id is empty.
		at := time.Unix(vectorTS, 0)
		good, err := webhooksig.Sign(vectorSecret, id, at, body)
		if err != nil {
			t.Fatal(err)
		}
		h["Webhook-Timestamp"] = []string{strconv.FormatInt(vectorTS, 10)}
		h["Webhook-Signature"] = []string{good}
		if err := webhooksig.Verify(vectorSecret, h, body, at, 0); (err == nil) != (id != "") {
			t.Fatalf("a signature made by SignWebhook for id %q: VerifyWebhook = %v", id, err)
		}
		if id == "" {
			return
		}
		if err := webhooksig.Verify(vectorSecret, h, append(body, 'x'), at, 0); err == nil {
			t.Fatalf("a longer body verified")
		}
		h["Webhook-Id"] = []string{id + "x"}
		if err := webhooksig.Verify(vectorSecret, h, body, at, 0); err == nil {
			t.Fatalf("another id verified")
		}
	})
}
