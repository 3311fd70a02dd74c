package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/webhooksig"
)

// The crash-restart test runs the real server binary as a child process
// on a SQLite file, kills it with SIGKILL while it is accepting and
// dispatching, restarts it on the same file and checks what the database
// and the API say. It takes about 20 s; MESSAGING_LONG=1 runs it with five
// times the load and three crashes.

const (
	crashKey     = "crash_live_0123456789abcdef0123456789abcdef"
	crashSMSKey  = "crash_sms_0123456789abcdef0123456789abcdef"
	crashHookKey = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	crashPartner = "777"
)

// crashBootstrap is the server's bootstrap file: a workspace with every
// channel, a key, a template and a webhook endpoint, and an SMS account.
func crashBootstrap(hookURL string, credit int) string {
	return `{
  "workspaces": [{
    "id": "crash", "name": "Crash test", "channels": ["whatsapp", "instagram", "messenger"],
    "api_keys": [{"key": "` + crashKey + `", "scopes": ["read:messages", "write:messages", "read:templates", "read:contacts", "write:contacts"]}],
    "templates": [{"name": "order_shipped", "category": "UTILITY", "language": "en", "status": "approved",
      "components": [{"type": "BODY", "text": "Hi {{1}}, your order {{2}} has shipped."}]}],
    "webhooks": [{"url": "` + hookURL + `", "secret": "` + crashHookKey + `"}]
  }],
  "sms_accounts": [{"partnerID": "` + crashPartner + `", "apikey": "` + crashSMSKey + `", "shortcodes": ["CRASH"], "credit": ` + strconv.Itoa(credit) + `, "cost_per_segment": 1}]
}`
}

// server is one run of the server binary.
type server struct {
	cmd  *exec.Cmd
	log  *testlog.Buffer // stdout and stderr, read while the server writes
	base string
}

// buildServer builds this package into dir.
func buildServer(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build the server: %v", err)
	}
	bin := filepath.Join(dir, "server")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServer starts bin with args and waits until it answers.
func startServer(t *testing.T, bin, addr string, args ...string) *server {
	t.Helper()
	s := &server{log: &testlog.Buffer{}, base: "http://" + addr}
	s.cmd = exec.Command(bin, append([]string{"-addr", addr}, args...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.base + "/v1/openapi.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not answer in 60 s: %v\n%s", err, s.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop asks the server to shut down gracefully and waits.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("graceful stop: %v\n%s", err, s.log)
	}
}

// job is one request of the load, with its outcome.
type job struct {
	sms  bool
	path string
	body string
	// idempotency key of a message job.
	key string
	// cost of an SMS job, in credits; ahead, when set, is how far ahead
	// of the moment it is sent its timeToSend lies.
	cost  int
	ahead time.Duration

	// due and scheduled: the timeToSend sent and whether the answer said
	// scheduled.
	due       time.Time
	scheduled bool

	// outcome: "" not sent yet, "accepted", "refused", "unknown" (no
	// answer: the server died).
	outcome  string
	id       string // message_id or SMS id of an accepted job
	replayed bool
	code     int // SMS response-code of a refused job
}

// crashJobs makes n message jobs (text on the three channels, templates,
// some to numbers the fake provider fails) and m SMS jobs (one or two
// parts, a third scheduled five seconds after they are sent), the SMS
// spread evenly among the messages.
func crashJobs(n, m int) []*job {
	var jobs []*job
	for i := range n {
		j := &job{key: fmt.Sprintf("crash-%05d", i), path: "/v1/messages"}
		phone := fmt.Sprintf("+2547%08d", 10000000+i)
		if i%25 == 0 {
			phone = fmt.Sprintf("+2547%04d0000", i) // fails with 131026
		}
		switch {
		case i%10 == 0:
			j.path = "/v1/messages/templates"
			j.body = fmt.Sprintf(`{"to":%q,"template_name":"order_shipped","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-%d"}]}],"idempotency_key":%q}`, phone, i, j.key)
		case i%3 == 0:
			j.body = fmt.Sprintf(`{"channel":"instagram","to":"ig_%d","type":"text","text":"hello %d","idempotency_key":%q}`, i, i, j.key)
		case i%3 == 1:
			j.body = fmt.Sprintf(`{"channel":"messenger","to":"psid_%d","type":"text","text":"hello %d","idempotency_key":%q}`, i, i, j.key)
		default:
			j.body = fmt.Sprintf(`{"channel":"whatsapp","to":%q,"type":"text","text":"hello %d","idempotency_key":%q}`, phone, i, j.key)
		}
		jobs = append(jobs, j)
		if k := i * m / n; (i+1)*m/n > k {
			jobs = append(jobs, smsJob(k))
		}
	}
	return jobs
}

// smsJob is the k-th SMS job.
func smsJob(k int) *job {
	j := &job{sms: true, path: "/sms/v1/messages", cost: 1}
	text := fmt.Sprintf("SMS %d", k)
	if k%3 == 1 {
		text = strings.Repeat("Two parts. ", 16) // 176 GSM-7 characters
		j.cost = 2
	}
	if k%3 == 0 {
		j.ahead = 5 * time.Second
	}
	j.body = fmt.Sprintf(`{"apikey":%q,"partnerID":%q,"mobile":"2547%08d","message":%q,"shortcode":"CRASH"{due}}`, crashSMSKey, crashPartner, 20000000+k, text)
	return j
}

// do sends j once and records its outcome.
func (j *job) do(client *http.Client, base string) {
	body := j.body
	if j.sms {
		due := ""
		if j.ahead > 0 {
			j.due = time.Now().Add(j.ahead).Truncate(time.Second)
			due = fmt.Sprintf(`,"timeToSend":"%d"`, j.due.Unix())
		}
		body = strings.Replace(body, "{due}", due, 1)
	}
	req, _ := http.NewRequest("POST", base+j.path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if !j.sms {
		req.Header.Set("X-API-Key", crashKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		j.outcome = "unknown"
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		j.outcome = "unknown"
		return
	}
	var out struct {
		MessageID string `json:"message_id"`
		ID        string `json:"id"`
		Code      int    `json:"response-code"`
		Status    string `json:"status"`
	}
	_ = json.Unmarshal(b, &out)
	switch {
	case !j.sms && resp.StatusCode == 201:
		j.outcome, j.id, j.replayed = "accepted", out.MessageID, resp.Header.Get("Idempotent-Replayed") == "true"
	case j.sms && resp.StatusCode == 200 && out.Code == 200:
		j.outcome, j.id, j.scheduled = "accepted", out.ID, out.Status == "scheduled"
	default:
		j.outcome, j.code = "refused", out.Code
		if j.code == 0 {
			j.code = resp.StatusCode
		}
	}
}

// runJobs sends jobs with workers goroutines until they are all done or stop
// returns true (checked before each job); jobs not started stay "".
func runJobs(jobs []*job, workers int, base string, stop func() bool) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) || stop() {
					return
				}
				jobs[i].do(client, base)
			}
		})
	}
	wg.Wait()
	client.CloseIdleConnections()
}

// hookSink receives the server's webhooks: for each message, the statuses
// its events announced, from those that verify.
type hookSink struct {
	mu       sync.Mutex
	ids      map[string]int             // event id -> deliveries
	statuses map[string]map[string]bool // message id -> statuses announced
	invalid  int
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	ts, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
	var ev struct {
		ID   string
		Data struct {
			MessageID string `json:"message_id"`
			Status    string
		}
	}
	if err := webhooksig.Verify(crashHookKey, r.Header, body, time.Unix(ts, 0), 0); err != nil ||
		time.Since(time.Unix(ts, 0)).Abs() > time.Minute || json.Unmarshal(body, &ev) != nil || ev.ID != r.Header.Get("webhook-id") {
		h.invalid++
		w.WriteHeader(400)
		return
	}
	h.ids[ev.ID]++
	if h.statuses[ev.Data.MessageID] == nil {
		h.statuses[ev.Data.MessageID] = map[string]bool{}
	}
	h.statuses[ev.Data.MessageID][ev.Data.Status] = true
}

// dbState is what the read-only connection sees.
type dbState struct {
	msgByKey     map[string]string // idempotency key -> message id
	msgRows      int
	msgStatus    map[string]string // message id -> status
	msgPID       map[string]string // message id -> provider message id
	msgReason    map[string]string
	smsRows      map[string]string // SMS id -> status
	smsCost      map[string]int    // SMS id -> cost in credits
	smsPending   int
	credit       int // credits
	hooksPending int // outbox rows left: pending, or failed for good
	queued       int
}

func readDB(t *testing.T, ro *sql.DB) *dbState {
	t.Helper()
	s := &dbState{msgByKey: map[string]string{}, msgStatus: map[string]string{}, msgPID: map[string]string{}, msgReason: map[string]string{},
		smsRows: map[string]string{}, smsCost: map[string]int{}}
	rows, err := ro.Query(`SELECT id, idempotency_key, status, provider_message_id, failure_reason FROM messages WHERE workspace_id = 'crash'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, key, status, pid, reason string
		if err := rows.Scan(&id, &key, &status, &pid, &reason); err != nil {
			t.Fatal(err)
		}
		s.msgRows++
		if prev, dup := s.msgByKey[key]; dup {
			t.Errorf("idempotency key %s stored twice: %s and %s", key, prev, id)
		}
		s.msgByKey[key], s.msgStatus[id], s.msgPID[id], s.msgReason[id] = id, status, pid, reason
		if status == "queued" {
			s.queued++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	rows, err = ro.Query(`SELECT id, status, cost FROM sms_messages WHERE partner_id = ?`, crashPartner)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, status string
		var cost int
		if err := rows.Scan(&id, &status, &cost); err != nil {
			t.Fatal(err)
		}
		s.smsRows[id], s.smsCost[id] = status, cost/100
		if status == "scheduled" || status == "queued" || status == "sending" {
			s.smsPending++
		}
	}
	rows.Close()
	var credit int
	if err := ro.QueryRow(`SELECT credit FROM sms_accounts WHERE partner_id = ?`, crashPartner).Scan(&credit); err != nil {
		t.Fatal(err)
	}
	s.credit = credit / 100
	// Delivered rows are kept as history; the others are pending or failed.
	if err := ro.QueryRow(`SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'`).Scan(&s.hooksPending); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCrashRestart: SIGKILL mid-dispatch loses nothing and duplicates
// nothing. Every request answered 201/200 is in the database after the
// restart; every message job, resent after the restart with its
// idempotency key, is stored exactly once; every message and SMS reaches a
// final state (messages handed over after the restart get their delivered
// and read reports; those before keep what the fake provider reported
// before it died, since its schedule of reports lived in its memory);
// scheduled SMS go out; the credit is exactly the opening credit minus the
// cost of the stored SMS; every webhook event in the outbox arrives,
// validly signed; and neither the database files nor the server's logs
// hold a key or secret.
func TestCrashRestart(t *testing.T) {
	t.Parallel()
	nMsg, nSMS, crashes := 1000, 100, 1
	if os.Getenv("MESSAGING_LONG") != "" {
		nMsg, nSMS, crashes = 5000, 500, 3
	}
	// The SMS jobs ask for 4/3 credit each on average: some get 1004.
	credit := nSMS * 6 / 5
	dir := t.TempDir()
	bin := buildServer(t, dir)
	sink := &hookSink{ids: map[string]int{}, statuses: map[string]map[string]bool{}}
	hook := httptest.NewServer(sink)
	t.Cleanup(hook.Close)
	bootstrap := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(bootstrap, []byte(crashBootstrap(hook.URL+"/hook", credit)), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "crash.db")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// The messages the killed process had claimed may have reached its
	// (in-memory, dead) fake provider, whose reports die with it: they
	// wait for the confirmation window, then go out once more.
	args := []string{"-db", db, "-bootstrap", bootstrap, "-rate-limits", "off", "-lease", "2s", "-confirm-window", "3s", "-webhooks-loopback",
		"-fake-delivered-after", "200ms", "-fake-read-after", "200ms"}

	start := time.Now()
	jobs := crashJobs(nMsg, nSMS)
	srv := startServer(t, bin, addr, args...)
	var logs []*testlog.Buffer
	ro, err := sql.Open("sqlite3", "file:"+db+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })

	// Crash while accepting and dispatching, crashes times.
	var firstKill time.Time
	for c := range crashes {
		pending := slices.DeleteFunc(slices.Clone(jobs), func(j *job) bool { return j.outcome == "accepted" || j.outcome == "refused" })
		var started atomic.Int64
		var killed atomic.Bool
		var queuedAtKill, sentAtKill int
		var killErr error
		var killer sync.WaitGroup
		killer.Go(func() {
			for !killed.Load() {
				// Kill once a share of the jobs has started and the
				// dispatcher has handed some over with many still queued.
				if int(started.Load()) >= len(pending)/(crashes-c+1) {
					var queued, sent int
					_ = ro.QueryRow(`SELECT count(*) FILTER (WHERE status = 'queued'), count(*) FILTER (WHERE status <> 'queued') FROM messages WHERE workspace_id = 'crash'`).Scan(&queued, &sent)
					if queued > 0 && sent > 0 {
						killErr = srv.cmd.Process.Signal(syscall.SIGKILL)
						_ = srv.cmd.Wait()
						queuedAtKill, sentAtKill = queued, sent
						killed.Store(true)
						return
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
		runJobs(pending, 16, srv.base, func() bool { started.Add(1); return killed.Load() })
		killed.Store(true) // every job answered before the kill condition held: stop the killer
		killer.Wait()
		if killErr != nil || srv.cmd.ProcessState == nil {
			t.Fatalf("crash %d: the kill did not happen (%v): every job was answered before the dispatcher fell behind", c+1, killErr)
		}
		if firstKill.IsZero() {
			firstKill = time.Now()
		}
		for _, j := range jobs {
			if !j.sms && j.outcome == "refused" {
				t.Fatalf("%s %s refused: %d", j.path, j.key, j.code)
			}
		}
		logs = append(logs, srv.log)
		n := map[string]int{}
		for _, j := range jobs {
			n[j.outcome]++
		}
		t.Logf("crash %d after %v: %d messages queued and %d handed over at the kill; jobs by outcome %v", c+1, time.Since(start).Round(time.Millisecond), queuedAtKill, sentAtKill, n)
		// Everything accepted so far is in the file.
		st := readDB(t, ro)
		for _, j := range jobs {
			_, msgOK := st.msgStatus[j.id]
			_, smsOK := st.smsRows[j.id]
			if j.outcome == "accepted" && !msgOK && !smsOK {
				t.Errorf("accepted %s %s (%s) is not in the database after the kill", j.path, j.id, j.key)
			}
		}
		srv = startServer(t, bin, addr, args...)
	}

	// Resend what got no answer (messages with their idempotency keys) and
	// send what was never sent; SMS without an answer are not resent.
	var again []*job
	unknownSMSCost := 0
	for _, j := range jobs {
		switch {
		case j.outcome == "" || (j.outcome == "unknown" && !j.sms):
			again = append(again, j)
		case j.outcome == "unknown" && j.sms:
			unknownSMSCost += j.cost
		}
	}
	runJobs(again, 16, srv.base, func() bool { return false })
	replays := 0
	for _, j := range again {
		if j.outcome != "accepted" && !(j.sms && j.code == 1004) {
			t.Fatalf("after the restart %s %s: %s (code %d)", j.path, j.key, j.outcome, j.code)
		}
		if j.replayed {
			replays++
		}
	}

	// Wait until nothing is queued, pending or undelivered, and the
	// messages handed over after the last restart have their reports.
	var st *dbState
	deadline := time.Now().Add(90 * time.Second)
	for {
		st = readDB(t, ro)
		reported := true
		last := lastPrefix(st.msgPID)
		for id, pid := range st.msgPID {
			if strings.HasPrefix(pid, last) && st.msgStatus[id] != "read" && st.msgStatus[id] != "failed" {
				reported = false
				break
			}
		}
		if st.queued == 0 && st.smsPending == 0 && st.hooksPending == 0 && reported {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not final after 90 s: %d messages queued, %d SMS pending, %d webhooks pending, reports done %v", st.queued, st.smsPending, st.hooksPending, reported)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Messages: every job stored exactly once, under the id it was given.
	if st.msgRows != nMsg || len(st.msgByKey) != nMsg {
		t.Errorf("%d message rows for %d jobs (%d distinct keys)", st.msgRows, nMsg, len(st.msgByKey))
	}
	statuses := map[string]int{}
	for _, j := range jobs {
		if j.sms {
			continue
		}
		id, ok := st.msgByKey[j.key]
		if !ok {
			t.Errorf("job %s lost", j.key)
			continue
		}
		if id != j.id {
			t.Errorf("job %s: answered %s, stored %s", j.key, j.id, id)
		}
		status := st.msgStatus[id]
		statuses[status]++
		if status == "queued" {
			t.Errorf("message %s still queued", id)
		}
		if status == "failed" && st.msgReason[id] != "[131026] Message undeliverable" {
			t.Errorf("message %s failed with %q", id, st.msgReason[id])
		}
	}
	// SMS: every accepted one stored and sent (the scheduled ones too, also
	// those due after the crash), the credit exact.
	spent, acceptedCost, minRefused, scheduled, acrossCrash := 0, 0, 1<<30, 0, 0
	for _, j := range jobs {
		if !j.sms {
			continue
		}
		switch j.outcome {
		case "accepted":
			status, ok := st.smsRows[j.id]
			if !ok {
				t.Errorf("accepted SMS %s lost", j.id)
			} else if status != "sent" {
				t.Errorf("SMS %s (scheduled %v) ended %s", j.id, j.scheduled, status)
			}
			acceptedCost += j.cost
			if j.scheduled {
				scheduled++
				if j.due.After(firstKill) {
					acrossCrash++
				}
			}
		case "refused":
			if j.code != 1004 {
				t.Errorf("SMS refused with %d", j.code)
			}
			minRefused = min(minRefused, j.cost)
		}
	}
	if acrossCrash == 0 {
		t.Errorf("no scheduled SMS was due after the crash (%d scheduled): the test did not test that", scheduled)
	}
	for id, cost := range st.smsCost {
		if st.smsRows[id] != "failed" {
			spent += cost
		}
	}
	if st.credit != credit-spent {
		t.Errorf("credit %d, want %d - %d spent = %d", st.credit, credit, spent, credit-spent)
	}
	if spent < acceptedCost || spent > acceptedCost+unknownSMSCost {
		t.Errorf("%d credits spent; the accepted SMS cost %d and those without an answer %d", spent, acceptedCost, unknownSMSCost)
	}
	if minRefused < 1<<30 && st.credit >= minRefused {
		t.Errorf("an SMS costing %d was refused for low credit, but %d credits are left", minRefused, st.credit)
	}
	balance := smsBalance(t, srv.base)
	if balance != fmt.Sprintf("%d.00", st.credit) {
		t.Errorf("balance over the API %s, database %d", balance, st.credit)
	}
	// The API agrees with the database.
	client := &http.Client{Timeout: 10 * time.Second}
	for i, j := range jobs {
		if j.sms || i%20 != 0 {
			continue
		}
		req, _ := http.NewRequest("GET", srv.base+"/v1/messages/"+j.id, nil)
		req.Header.Set("X-API-Key", crashKey)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Status string }
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 200 || m.Status != st.msgStatus[j.id] {
			t.Errorf("GET %s: %d %s, database %s", j.id, resp.StatusCode, m.Status, st.msgStatus[j.id])
		}
	}
	// Webhooks: every status change of every message was announced (each
	// is written to the outbox with the change), validly signed.
	chain := map[string][]string{"sent": {"sent"}, "delivered": {"sent", "delivered"}, "read": {"sent", "delivered", "read"}, "failed": {"sent", "failed"}}
	sink.mu.Lock()
	missing, dup, events := 0, 0, 0
	for id, status := range st.msgStatus {
		got := sink.statuses[id]
		for _, want := range chain[status] {
			if !got[want] {
				missing++
			}
		}
		if len(got) != len(chain[status]) {
			t.Errorf("message %s (%s): events announced %v", id, status, got)
		}
	}
	for _, n := range sink.ids {
		events++
		if n > 1 {
			dup++
		}
	}
	invalid := sink.invalid
	sink.mu.Unlock()
	if missing > 0 || invalid > 0 {
		t.Errorf("webhooks: %d status changes never announced, %d deliveries did not verify", missing, invalid)
	}
	srv.stop(t)
	logs = append(logs, srv.log)
	t.Logf("after %v: %d messages %v (%d replays on resend), %d SMS stored (%d scheduled, %d of them due after the crash; %d credits spent, %d left), %d webhook events received (%d twice)",
		time.Since(start).Round(time.Millisecond), st.msgRows, statuses, replays, len(st.smsRows), scheduled, acrossCrash, spent, st.credit, events, dup)

	// No secret in the database files or the logs.
	var files []byte
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		b, _ := os.ReadFile(p)
		files = append(files, b...)
	}
	var all bytes.Buffer
	for _, l := range logs {
		all.WriteString(l.String())
	}
	if !bytes.Contains(files, []byte("crash-00001")) || !strings.Contains(all.String(), "/v1/messages") {
		t.Fatalf("the database or the logs do not hold the session: wrong files?")
	}
	for _, s := range []string{crashKey, crashKey[16:], crashSMSKey, crashSMSKey[16:], crashHookKey, strings.TrimPrefix(crashHookKey, "whsec_")} {
		if bytes.Contains(files, []byte(s)) {
			t.Errorf("the database files hold %q", s)
		}
		if strings.Contains(all.String(), s) {
			t.Errorf("the server's logs hold %q", s)
		}
	}
}

// lastPrefix returns the provider-id prefix of the last server process:
// the fake provider's ids are wamid.fake.<start nanos>.<seq>.
func lastPrefix(pids map[string]string) string {
	last := ""
	for _, pid := range pids {
		if i := strings.LastIndex(pid, "."); i > 0 {
			p := pid[:i+1]
			if len(p) > len(last) || (len(p) == len(last) && p > last) {
				last = p
			}
		}
	}
	return last
}

func smsBalance(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/sms/v1/account/balance", "application/json",
		strings.NewReader(fmt.Sprintf(`{"apikey":%q,"partnerID":%q}`, crashSMSKey, crashPartner)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b struct{ Credit string }
	_ = json.NewDecoder(resp.Body).Decode(&b)
	return b.Credit
}
