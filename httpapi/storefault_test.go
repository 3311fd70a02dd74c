package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// failingWrites wraps a SQLite store; while broken, every write of the
// messaging and SMS stores fails with an error that quotes SQL, a file path
// and a secret, as a driver error might.
type failingWrites struct {
	*sqlitestore.Store
	broken atomic.Bool
	// panics makes every write panic instead.
	panics atomic.Bool
}

// errDisk is what a broken store answers: everything a 500 must not show.
var errDisk = errors.New(`sqlite3: disk I/O error: INSERT INTO messages (id, text) VALUES ('msg_1', 'x') in /var/lib/messaging/prod.db (key acme_live_0123456789abcdef)`)

func (s *failingWrites) fail() error {
	if s.panics.Load() {
		panic("runtime error: index out of range [3] with length 3: UPDATE contacts SET notes = ? in /home/dev/messaging/store/sqlitestore/contacts.go:88")
	}
	if s.broken.Load() {
		return errDisk
	}
	return nil
}

func (s *failingWrites) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	if err := s.fail(); err != nil {
		return nil, false, err
	}
	return s.Store.MessageCreate(ctx, m)
}

func (s *failingWrites) ContactCreate(ctx context.Context, c *messaging.Contact) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.ContactCreate(ctx, c)
}

func (s *failingWrites) ContactUpdate(ctx context.Context, p *driver.ContactReplaceParams) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.ContactUpdate(ctx, p)
}

func (s *failingWrites) MessageUpdateStatuses(ctx context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.MessageUpdateStatuses(ctx, ps)
}

func (s *failingWrites) SMSAccept(ctx context.Context, msgs []*sms.Message) ([]sms.AcceptResult, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.SMSAccept(ctx, msgs)
}

// leakRe matches what an error answer must never show: SQL, file paths,
// driver names, stack traces, the secret of errDisk.
var leakRe = regexp.MustCompile(`(?i)insert into|select |update |sqlite|/var/|\.db\b|\.go:\d|goroutine \d|panic|disk i/o|database is locked|acme_live|runtime\.`)

// faultWrites are the write requests of the storage fault tests, each
// valid, with the answer expected once the store works.
var faultWrites = []struct {
	method, path, body string
	sms                bool
	ok                 int
}{
	{"POST", "/v1/messages", `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"during the fault","idempotency_key":"fault-1"}`, false, 201},
	{"POST", "/v1/messages/templates", `{"to":"+254712345678","template_name":"welcome","language":"en_US","idempotency_key":"fault-2"}`, false, 201},
	{"POST", "/v1/contacts", `{"firstName":"Faulty","email":"faulty@example.com"}`, false, 201},
	{"PATCH", "/v1/contacts/<A.contact>", `{"company":"Written during the fault"}`, false, 200},
	{"POST", "/sms/v1/messages", `{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345678","message":"during the fault","shortcode":"ACME"}`, true, 200},
	{"POST", "/sms/v1/messages/bulk", `{"count":2,"smslist":[{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345678","message":"a","shortcode":"ACME"},{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345679","message":"b","shortcode":"ACME"}]}`, true, 200},
}

// faultEnv is the /v1 fixture and the SMS API on one SQLite file, with a
// read-only connection to count rows.
type faultEnv struct {
	*env
	ro   *sql.DB
	logs *syncBuffer
}

func setupFaultEnv(t *testing.T, path string, st interface {
	driver.Store
	sms.Store
}) *faultEnv {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := setupOn(t, st, &messaging.Options{Logger: log}, unlimited)
	smsSvc, err := sms.New(st, fakegateway.New(nil), &sms.Options{Clock: e.clock.Now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := smsSvc.CreateAccount(context.Background(), &sms.CreateAccountParams{
		PartnerID: smsPartner, APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(100),
	}); err != nil {
		t.Fatal(err)
	}
	o := &httpapi.Options{Clock: e.clock.Now, SMS: smsSvc, Logger: log}
	unlimited(o)
	e.h = httpapi.New(e.svc, o)
	ro, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return &faultEnv{env: e, ro: ro, logs: logs}
}

// rows counts what is stored: messages, contacts, SMS, the credit left,
// and A's contact's company.
func (e *faultEnv) rows(t *testing.T) string {
	t.Helper()
	var msgs, contacts, smsN, credit int
	var company string
	for _, q := range []struct {
		sql string
		dst any
	}{
		{"SELECT count(*) FROM messages", &msgs}, {"SELECT count(*) FROM contacts", &contacts},
		{"SELECT count(*) FROM sms_messages", &smsN}, {"SELECT credit FROM sms_accounts", &credit},
		{"SELECT company FROM contacts WHERE id = '" + e.A.Contact.ID + "'", &company},
	} {
		if err := e.ro.QueryRow(q.sql).Scan(q.dst); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	return fmt.Sprintf("messages %d, contacts %d, sms %d, credit %d, company %q", msgs, contacts, smsN, credit, company)
}

// runStorageFault breaks the store, checks that every write answers status
// (500 internal_error for an unexpected fault, 503 service_unavailable
// with Retry-After for a store that is unavailable; 1005 on the SMS API)
// leaking nothing and storing nothing, that reads still work, then mends it
// and checks that the same requests succeed as first requests (no trace of
// the failed ones: no replay).
func runStorageFault(t *testing.T, e *faultEnv, status int, brk, mend func()) {
	wantCode := "internal_error"
	if status == 503 {
		wantCode = "service_unavailable"
	}
	t.Helper()
	before := e.rows(t)
	brk()
	for i, w := range faultWrites {
		cid := fmt.Sprintf("fault-%d", i)
		r := e.doRaw(request{method: w.method, path: w.path, key: e.A.Full, body: w.body, headers: hdr("X-Correlation-ID", cid)})
		what := w.method + " " + w.path
		switch {
		case w.path == "/sms/v1/messages/bulk" && r.status != status:
			// A valid bulk request is 200; each entry carries its own 1005
			// (a panic fails the whole request: 500 and 1005, below).
			var bulk struct {
				Responses []map[string]any `json:"responses"`
			}
			if err := json.Unmarshal(r.body, &bulk); err != nil || r.status != 200 || len(bulk.Responses) != 2 {
				t.Errorf("%s during the fault: %d %s", what, r.status, r.body)
			}
			for _, en := range bulk.Responses {
				if en["response-code"] != float64(sms.CodeSystemError) || en["messageid"] != nil {
					t.Errorf("%s: entry %v, want 1005 without a messageid", what, en)
				}
			}
		case r.status != status:
			t.Errorf("%s during the fault: status %d, want %d: %s", what, r.status, status, r.body)
		case status == 503 && r.header.Get("Retry-After") == "":
			t.Errorf("%s during the fault: 503 without Retry-After", what)
		case w.sms:
			var flat struct {
				Code int    `json:"response-code"`
				Desc string `json:"response-description"`
			}
			if err := json.Unmarshal(r.body, &flat); err != nil || flat.Code != sms.CodeSystemError {
				t.Errorf("%s: body %s, want response-code 1005", what, r.body)
			}
		default:
			var env envelope
			if err := json.Unmarshal(r.body, &env); err != nil || env.Error.Code != wantCode || env.Error.StatusCode != status || env.Error.RequestID != cid {
				t.Errorf("%s: body %s, want %s with request_id %s", what, r.body, wantCode, cid)
			}
		}
		if m := leakRe.FindString(string(r.body)); m != "" {
			t.Errorf("%s: the 500 body shows %q: %s", what, m, r.body)
		}
		if !strings.Contains(e.logs.String(), cid) {
			t.Errorf("%s: the failure is not logged with its correlation id %s", what, cid)
		}
	}
	// Reads still work.
	if r := e.doRaw(request{method: "GET", path: "/v1/contacts/" + e.A.Contact.ID, key: e.A.Full}); r.status != 200 {
		t.Errorf("a read during the fault: %d %s", r.status, r.body)
	}
	if after := e.rows(t); after != before {
		t.Errorf("failed writes changed the database:\nbefore %s\nafter  %s", before, after)
	}
	mend()
	for _, w := range faultWrites {
		r := e.doRaw(request{method: w.method, path: w.path, key: e.A.Full, body: w.body})
		if r.status != w.ok {
			t.Errorf("%s %s after the fault: status %d, want %d: %s", w.method, w.path, r.status, w.ok, r.body)
		}
		if r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s after the fault replayed a request that had failed", w.path)
		}
	}
	if after := e.rows(t); after == before {
		t.Errorf("nothing was written after the fault: %s", after)
	}
}

// TestStorageFaultFailingWrites: a store whose writes fail.
func TestStorageFaultFailingWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fault.db")
	inner, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	st := &failingWrites{Store: inner}
	e := setupFaultEnv(t, path, st)
	runStorageFault(t, e, 500, func() { st.broken.Store(true) }, func() { st.broken.Store(false) })
	if !strings.Contains(e.logs.String(), "disk I/O error") {
		t.Errorf("the store's error is not in the log")
	}
}

// TestStorageFaultDatabaseLocked: another process holds the SQLite write
// lock, so every write fails with SQLITE_BUSY after the busy timeout and
// answers 503 with Retry-After (the client retries with its idempotency
// key); when it lets go, writes work again.
func TestStorageFaultDatabaseLocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "locked.db")
	st, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := setupFaultEnv(t, path, st)
	other, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	var tx *sql.Tx
	runStorageFault(t, e, 503, func() {
		var err error
		if tx, err = other.BeginTx(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		// Take the write lock and keep it.
		if _, err := tx.Exec(`UPDATE sms_accounts SET updated_at = updated_at`); err != nil {
			t.Fatal(err)
		}
	}, func() {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(e.logs.String(), "locked") && !strings.Contains(e.logs.String(), "busy") {
		t.Errorf("the lock error is not in the log:\n%s", e.logs.String())
	}
}

// TestPanicsAnswerWithoutTrace: a panic while serving any write (here in
// the store) answers 500 internal_error or 1005, without a stack trace, a
// file path or SQL in the body; it is logged with the correlation id, and
// the server keeps serving.
func TestPanicsAnswerWithoutTrace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "panic.db")
	inner, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	st := &failingWrites{Store: inner}
	e := setupFaultEnv(t, path, st)
	runStorageFault(t, e, 500, func() { st.panics.Store(true) }, func() { st.panics.Store(false) })
	if !strings.Contains(e.logs.String(), "index out of range") {
		t.Errorf("the panic is not in the log")
	}
}
