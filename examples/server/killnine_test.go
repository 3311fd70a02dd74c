package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
)

// TestKillBeforeTheAnswerSendsOnce: a server SIGKILLed after Meta took a
// message and before any answer was recorded sends it again only when
// Meta never confirms it, and then once.
//
// The server runs as a child process on a SQLite file with -provider meta
// against metatest on loopback, -lease 3s and -confirm-window 5s. Two
// WhatsApp messages are sent; the mock accepts both requests, records them
// and never answers (metatest.NoAnswer). As soon as it holds both, the
// server is killed: it dies after the provider took the messages and before
// an answer was recorded. That is also the state of a kill between Meta's
// answer and the commit of "sent": nothing of the answer is stored either
// way (the test checks the file: both queued, no provider id), so one test
// covers both. The server is restarted on the same file with the mock
// answering at once.
//
//   - confirmed: Meta's status webhook "delivered" for the first send,
//     carrying our message id in biz_opaque_callback_data, is posted to the
//     restarted server. The message is delivered with the provider's id of
//     that send, and past the confirmation window Meta saw exactly one
//     request for it.
//   - unconfirmed: no report comes for the second. It is not sent again
//     within the window; after it, it is sent again exactly once (two
//     requests in all) and ends sent with the second request's id.
//
// It takes about 10 s once the server is built. Nothing waits a fixed
// time: every wait polls with a deadline, and the wait for the absence of
// a second request for the confirmed message ends at a point the
// unconfirmed one's resend shows was past the window.
func TestKillBeforeTheAnswerSendsOnce(t *testing.T) {
	const (
		lease  = 3 * time.Second
		window = 5 * time.Second
	)
	graph := metatest.New()
	t.Cleanup(graph.Close)
	graph.AddPhoneNumber(metaWABA, metaPhoneID, "+254 700 000000", metaToken)
	graph.SetSendDelay(metatest.NoAnswer)
	dir := t.TempDir()
	boot := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(boot, []byte(metaBootstrap()), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("MESSAGING_META_APP_SECRET", metaSecret)
	bin := buildServer(t, t.TempDir())
	built := time.Now()
	db := filepath.Join(dir, "kill.db")
	args := []string{"-db", db, "-bootstrap", boot, "-rate-limits", "off", "-dispatch-rate", "off",
		"-provider", "meta", "-meta-base-url", graph.URL(), "-lease", lease.String(), "-confirm-window", window.String()}
	ro, err := sql.Open("sqlite3", "file:"+db+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })

	srv := startServer(t, bin, addr, args...)
	logs := srv.log
	defer func() {
		if t.Failed() {
			t.Logf("server logs (both runs):\n%s\n--- restarted ---\n%s", logs, srv.log)
		}
	}()
	// The earliest either message can have been claimed, and so marked as
	// possibly sent: the confirmation windows end no earlier than
	// accepted+window.
	accepted := time.Now()
	ids := map[string]string{}
	for _, name := range []string{"confirmed", "unconfirmed"} {
		status, out := postKey(t, srv.base+"/v1/messages", fmt.Sprintf(`{"channel":"whatsapp","to":"+14155550123","type":"text","text":"%s"}`, name))
		if status != 201 {
			t.Fatalf("send %s: %d %v", name, status, out)
		}
		ids[name] = fmt.Sprint(out["message_id"])
	}
	// sendsOf counts the requests the mock took for each message, by the
	// message id each carried, and returns the provider ids of the last.
	sendsOf := func() (map[string]int, map[string]string) {
		n, last := map[string]int{}, map[string]string{}
		for _, s := range graph.Sends() {
			n[s.Correlation]++
			last[s.Correlation] = s.ProviderMessageID
		}
		return n, last
	}
	eventually(t, "the mock taking both sends", func() bool {
		n, _ := sendsOf()
		return n[ids["confirmed"]] == 1 && n[ids["unconfirmed"]] == 1
	})
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()
	// Every mark was set before the kill: every window ends by then+window.
	killed := time.Now()
	_, first := sendsOf()
	if len(graph.Sends()) != 2 {
		t.Fatalf("the mock took %d sends before the kill, want 2: %+v", len(graph.Sends()), graph.Sends())
	}
	// Nothing of an answer is in the file: the state of a kill between
	// Meta's answer and the commit of sent.
	for name, id := range ids {
		var status, pid string
		if err := ro.QueryRow(`SELECT status, provider_message_id FROM messages WHERE id = ?`, id).Scan(&status, &pid); err != nil {
			t.Fatal(err)
		}
		if status != "queued" || pid != "" {
			t.Fatalf("%s message after the kill: status %q, provider id %q; want queued with none", name, status, pid)
		}
	}

	graph.SetSendDelay(0)
	srv = startServer(t, bin, addr, args...)
	restarted := time.Since(killed)
	body, err := graph.StatusWebhook(first[ids["confirmed"]], "delivered")
	if err != nil {
		t.Fatal(err)
	}
	code, answer, err := metatest.PostWebhook(context.Background(), srv.base+"/webhooks/meta", metaSecret, body)
	if err != nil || code != 200 {
		t.Fatalf("status webhook: %d %s %v", code, answer, err)
	}
	if d := time.Since(accepted); d >= window {
		t.Fatalf("the report reached the server %v after the sends, past the %v window: the restart was too slow for this test (%v)", d, window, restarted)
	}
	status := func(id string) string {
		var m map[string]any
		apiGet(t, srv.base, "/v1/messages/"+id, &m)
		return fmt.Sprint(m["status"])
	}

	// The unconfirmed message is sent again after its window, and not
	// before: a second request seen before accepted+window came too soon.
	var resentBy time.Time
	eventually(t, "the unconfirmed message sent again and sent", func() bool {
		n, _ := sendsOf()
		now := time.Now()
		if n[ids["unconfirmed"]] > 1 && resentBy.IsZero() {
			resentBy = now
			if now.Before(accepted.Add(window)) {
				t.Fatalf("the unconfirmed message was sent again %v after it was accepted, within the %v window", now.Sub(accepted), window)
			}
		}
		return !resentBy.IsZero() && status(ids["unconfirmed"]) == "sent"
	})
	// Its resend shows the dispatcher past its window; the confirmed
	// message's window ended by killed+window. Watch it a while longer
	// than a claim takes after that (the dispatcher polls every 200 ms).
	for end := killed.Add(window + 1500*time.Millisecond); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if n, _ := sendsOf(); n[ids["confirmed"]] > 1 {
			break
		}
	}

	n, last := sendsOf()
	if got := n[ids["confirmed"]]; got != 1 {
		t.Errorf("the mock took %d requests for the confirmed message, want 1", got)
	}
	if got := n[ids["unconfirmed"]]; got != 2 {
		t.Errorf("the mock took %d requests for the unconfirmed message, want 2", got)
	}
	if got := len(graph.Sends()); got != 3 {
		t.Errorf("the mock took %d requests in all, want 3: %+v", got, graph.Sends())
	}
	want := map[string]struct{ status, pid string }{
		"confirmed":   {"delivered", first[ids["confirmed"]]},
		"unconfirmed": {"sent", last[ids["unconfirmed"]]},
	}
	for name, id := range ids {
		var st, pid string
		if err := ro.QueryRow(`SELECT status, provider_message_id FROM messages WHERE id = ?`, id).Scan(&st, &pid); err != nil {
			t.Fatal(err)
		}
		if got := status(id); got != want[name].status || st != got || pid != want[name].pid {
			t.Errorf("%s message: API %s, file %s with provider id %q; want %s with %q", name, got, st, pid, want[name].status, want[name].pid)
		}
	}
	if first[ids["unconfirmed"]] == last[ids["unconfirmed"]] {
		t.Errorf("the unconfirmed message's two requests got one provider id %q", last[ids["unconfirmed"]])
	}
	t.Logf("%v after the build: restart took %v; resend seen %v after the sends were accepted (window %v); requests per message %v",
		time.Since(built).Round(time.Millisecond), restarted.Round(time.Millisecond), resentBy.Sub(accepted).Round(time.Millisecond), window, n)
	srv.stop(t)
}
