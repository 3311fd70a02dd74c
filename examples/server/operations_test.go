package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const opsKey = "ops_live_0123456789abcdef0123456789abcdef"

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServerOperations runs the server binary with -metrics-addr: a send
// through the API shows as the accepted counter at 1 in a scrape of
// /metrics, the profiler answers on the internal listener only, the probes
// answer without a key, and on SIGTERM /readyz turns 503 while the
// process still serves, before the listener closes.
func TestServerOperations(t *testing.T) {
	dir := t.TempDir()
	boot := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(boot, []byte(`{"workspaces": [{"id": "ops", "name": "Ops", "channels": ["whatsapp"],
		"api_keys": [{"key": "`+opsKey+`", "scopes": ["write:messages", "read:messages"]}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	bin := buildServer(t, t.TempDir())
	srv := startServer(t, bin, addr, "-db", filepath.Join(dir, "ops.db"), "-bootstrap", boot,
		"-metrics-addr", metricsAddr, "-log-format", "json", "-drain-delay", "3s")

	if code, body := get(t, srv.base+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, body := get(t, srv.base+"/readyz"); code != 200 || !strings.Contains(body, `"status":"ready"`) {
		t.Errorf("/readyz: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", srv.base+"/v1/messages",
		strings.NewReader(`{"channel":"whatsapp","to":"+14155550123","type":"text","text":"Hello!"}`))
	req.Header.Set("X-API-Key", opsKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("send: %d", resp.StatusCode)
	}

	code, metrics := get(t, "http://"+metricsAddr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	accepted := regexp.MustCompile(`(?m)^messaging_messages_accepted_total\{[^}]*channel="whatsapp"[^}]*type="text"[^}]*\} 1$`)
	if !accepted.MatchString(metrics) {
		t.Errorf("/metrics has no accepted counter at 1 for whatsapp text:\n%s", grepLines(metrics, "messaging_messages_accepted"))
	}
	route := regexp.MustCompile(`(?m)^http_server_request_duration_seconds_count\{[^}]*http_route="/v1/messages"[^}]*\} 1$`)
	if !route.MatchString(metrics) {
		t.Errorf("/metrics has no request count of 1 for the route /v1/messages:\n%s", grepLines(metrics, "http_server_request_duration_seconds_count"))
	}
	for _, name := range []string{"messaging_dispatch_queue_depth", "messaging_dispatch_queue_oldest_age_seconds", "messaging_sms_queue_depth", "go_goroutines"} {
		if !strings.Contains(metrics, "\n"+name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if strings.Contains(metrics, "14155550123") || strings.Contains(metrics, opsKey) {
		t.Error("/metrics holds the recipient or the key")
	}
	if code, _ := get(t, "http://"+metricsAddr+"/debug/pprof/"); code != 200 {
		t.Errorf("/debug/pprof/ on the metrics listener: %d, want 200", code)
	}
	if code, _ := get(t, srv.base+"/debug/pprof/"); code != 404 {
		t.Errorf("/debug/pprof/ on the public listener: %d, want 404", code)
	}
	if code, _ := get(t, srv.base+"/metrics"); code != 404 {
		t.Errorf("/metrics on the public listener: %d, want 404", code)
	}

	// Shutdown: not ready first, the listener still serving.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var readyz int
	for time.Now().Before(deadline) {
		if readyz, _ = get(t, srv.base+"/readyz"); readyz == 503 {
			break
		}
	}
	if readyz != 503 {
		t.Errorf("/readyz during the drain delay: %d, want 503", readyz)
	} else if code, body := get(t, srv.base+"/readyz"); !strings.Contains(body, `"draining"`) {
		t.Errorf("/readyz during the drain: %d %s, want it to name draining", code, body)
	}
	if code, _ := get(t, srv.base+"/healthz"); code != 200 {
		t.Errorf("/healthz during the drain delay: %d, want 200", code)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Errorf("graceful stop: %v\n%s", err, srv.log)
	}
}

// grepLines returns the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestOperationsFlagsRefused: a bad -log-format, -request-log,
// -drain-delay, -otlp-endpoint or -metrics-addr stops the start with an error naming
// the flag, before anything is opened.
func TestOperationsFlagsRefused(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	db := filepath.Join(t.TempDir(), "never.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-log-format", "xml"}, "-log-format"},
		{[]string{"-request-log", "false"}, "-request-log"},
		{[]string{"-drain-delay", "-1s"}, "-drain-delay"},
		{[]string{"-otlp-endpoint", "collector:4318"}, "-otlp-endpoint"},
		{[]string{"-otlp-endpoint", "ftp://collector"}, "-otlp-endpoint"},
		{[]string{"-metrics-addr", busy.Addr().String()}, "-metrics-addr"},
		{[]string{"-metrics-addr", "not an address"}, "-metrics-addr"},
	} {
		err := run(t.Context(), append([]string{"-db", db}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused start created the database")
	}
}

// TestRequestLogFlag: -request-log on (the default) keeps the API's
// per-request log lines, off drops them.
func TestRequestLogFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		disable bool
	}{
		{nil, false},
		{[]string{"-request-log", "on"}, false},
		{[]string{"-request-log", "off"}, true},
	} {
		cfg, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		o, err := apiOptions(cfg.limits, cfg.requestLog, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.DisableRequestLog != tc.disable {
			t.Errorf("%v: DisableRequestLog %v, want %v", tc.args, o.DisableRequestLog, tc.disable)
		}
	}
}

func TestOTLPTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://collector:4318":      "http://collector:4318/v1/traces",
		"http://collector:4318/":     "http://collector:4318/v1/traces",
		"https://otel.example/base/": "https://otel.example/base/v1/traces",
		"https://otel.example/a/b":   "https://otel.example/a/b/v1/traces",
	} {
		if got, err := otlpTracesURL(in); err != nil || got != want {
			t.Errorf("otlpTracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestServerExportsTraces runs the server with -otlp-endpoint on a fake
// collector: after a send and a graceful stop, the collector has received
// the spans of the request, the accept and the dispatch over OTLP/HTTP,
// naming the message and not its recipient.
func TestServerExportsTraces(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		if r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			bodies = append(bodies, string(b))
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	dir := t.TempDir()
	boot := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(boot, []byte(`{"workspaces": [{"id": "ops", "name": "Ops", "channels": ["whatsapp"],
		"api_keys": [{"key": "`+opsKey+`", "scopes": ["write:messages", "read:messages"]}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := buildServer(t, t.TempDir())
	srv := startServer(t, bin, freeAddr(t), "-db", filepath.Join(dir, "ops.db"), "-bootstrap", boot, "-otlp-endpoint", collector.URL)
	req, _ := http.NewRequest("POST", srv.base+"/v1/messages",
		strings.NewReader(`{"channel":"whatsapp","to":"+14155550123","type":"text","text":"Hello!"}`))
	req.Header.Set("X-API-Key", opsKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		MessageID string `json:"message_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&sent)
	resp.Body.Close()
	if resp.StatusCode != 201 || sent.MessageID == "" {
		t.Fatalf("send: %d", resp.StatusCode)
	}
	// The dispatch runs at once; the stop flushes the batch of spans.
	eventually(t, "the message sent", func() bool {
		var m struct{ Status string }
		return apiGetKey(t, srv.base+"/v1/messages/"+sent.MessageID, &m) == 200 && m.Status != "queued"
	})
	srv.stop(t)
	mu.Lock()
	all := strings.Join(bodies, "")
	mu.Unlock()
	for _, want := range []string{"POST /v1/messages", "messaging.accept", "messaging.dispatch", "messaging.provider.send", sent.MessageID, "messaging-server"} {
		if !strings.Contains(all, want) {
			t.Errorf("the exported traces lack %q (%d requests, %d bytes)", want, len(bodies), len(all))
		}
	}
	if strings.Contains(all, "14155550123") || strings.Contains(all, "Hello!") {
		t.Error("the exported traces hold the recipient or the text")
	}
}

// apiGetKey is GET url with the operations key, decoding into out.
func apiGetKey(t *testing.T, url string, out any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-API-Key", opsKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}
