package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Figure 5: memory. examples/server (built from this repository, with its
// defaults except -rate-limits off, -dispatch-rate off and -dispatch-workers
// 32, as for a load test) serves the 1,000,000-contact workspace
// while 32 keep-alive clients send it messages through POST /v1/messages
// and its dispatcher hands them to the fake provider (which reports them
// delivered and read); a 33rd client searches contacts and reads deep pages
// all along. The figure is the peak resident set (VmHWM) of the server
// process, whose goal is 64 MiB at 1,000,000 messages (-memory-messages
// 1000000, about 10 minutes on 2 cores; the default, 100,000, keeps the suite short
// and is held to the same goal), and, as the measure of flatness, the
// highest resident set while the first quarter of the messages was
// accepted (the warm-up) against the peak of the whole run: 1.0 means no
// growth with the number of messages, 0.25 growth in proportion to them.
// The resident set counts the server's executable, mapped from the page
// cache (about 29 MiB with Linux 6.18 on ext4, which maps it in large
// folios, whole); the log (-v) splits the end's resident set into
// anonymous memory and file pages.

func runMemory(ctx context.Context, c *config) ([]*row, error) {
	cached, err := contactsDB(ctx, c, c.contacts)
	if err != nil {
		return nil, err
	}
	dir, bin, err := buildServer(ctx, c, "memory")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "server.sqlite")
	if err := copyDB(cached, db); err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%s messages, %s contacts", commas(int64(c.memoryMessages)), commas(int64(c.contacts)))
	peak := &row{figure: "5a", name: "server peak RSS (VmHWM), " + label, unit: "MiB",
		absolute:     func(v float64) (bool, string) { return v <= 64, "peak <= 64 MiB" },
		baselineName: "the server's highest RSS while it accepted the first quarter of the messages (the warm-up)"}
	flat := &row{figure: "5b", name: "server RSS after warm-up (highest while accepting the rest)", unit: "MiB", goal: 0.8}
	// The server's memory is measured once: the run is long, and the peak
	// of one run is the figure.
	m, err := memoryRun(ctx, c, bin, db)
	if err != nil {
		return nil, err
	}
	peak.product, peak.baseline = []float64{m.peak}, []float64{m.warm}
	flat.product, flat.baseline = []float64{m.late}, []float64{m.warm}
	return []*row{peak, flat}, nil
}

// rssFigures are resident set sizes of the server, in MiB.
type rssFigures struct {
	// peak is VmHWM at the end of the run.
	peak float64
	// warm is the highest sample while the first quarter of the messages
	// was accepted, late the highest while the rest was.
	warm, late float64
}

// buildServer makes the figure's directory name in the run's work
// directory and builds examples/server from this repository into it; it
// returns the directory, which the caller removes, and the binary's path.
func buildServer(ctx context.Context, c *config, name string) (dir, bin string, err error) {
	dir = filepath.Join(c.workDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "server")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/server")
	if build.Dir, err = moduleRoot(ctx); err != nil {
		return dir, "", err
	}
	if out, err := build.CombinedOutput(); err != nil {
		return dir, "", fmt.Errorf("building examples/server: %v\n%s", err, out)
	}
	return dir, bin, nil
}

// serverProcess is a running examples/server.
type serverProcess struct {
	cmd *exec.Cmd
	// base is the server's URL, http://127.0.0.1:port.
	base string
	// exited receives the result of Wait once the process has ended.
	exited chan error
	log    string
}

// startServer starts bin with args on a free loopback port (its -addr),
// writing its standard output and error (its log) to logPath, and waits
// until it answers. Stop (or kill) it when done.
func startServer(ctx context.Context, bin, logPath string, args ...string) (*serverProcess, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, append([]string{"-addr", addr}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serverProcess{cmd: cmd, base: "http://" + addr, exited: make(chan error, 1), log: logPath}
	go func() { p.exited <- cmd.Wait() }()
	client := newClient(1)
	defer client.CloseIdleConnections()
	if err := waitReady(ctx, client, p.base, p.exited); err != nil {
		p.kill()
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return p, nil
}

// kill ends the process at once, unless it has ended.
func (p *serverProcess) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// stop sends SIGTERM and waits up to 30 s for the process to end.
func (p *serverProcess) stop() error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		p.kill()
		return fmt.Errorf("server did not stop within 30 s of SIGTERM (log: %s)", p.log)
	}
}

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run the benchmark from within the module (go run ./internal/bench)")
	}
	return filepath.Dir(gomod), nil
}

// memoryRun runs the server on db, loads it and returns its resident set
// sizes.
func memoryRun(ctx context.Context, c *config, bin, db string) (rssFigures, error) {
	var none rssFigures
	srv, err := startServer(ctx, bin, db+".log", "-db", db, "-rate-limits", "off", "-dispatch-rate", "off", "-dispatch-workers", "32")
	if err != nil {
		return none, err
	}
	defer srv.kill()
	cmd, exited, base := srv.cmd, srv.exited, srv.base
	client := newClient(httpClients + 1)
	defer client.CloseIdleConnections()
	start := time.Now()

	// Sample the resident set all along.
	stopSampling := make(chan struct{})
	n := c.memoryMessages
	warmUntil := int64(n / 4)
	var accepted, maxRSS, warmRSS, lateRSS atomic.Int64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
			if rss, err := procStatus(cmd.Process.Pid, "VmRSS"); err == nil {
				if rss > maxRSS.Load() {
					maxRSS.Store(rss)
				}
				switch a := accepted.Load(); {
				case a <= warmUntil:
					warmRSS.Store(max(warmRSS.Load(), rss))
				case a < int64(n):
					lateRSS.Store(max(lateRSS.Load(), rss))
				}
			}
		}
	}()

	// Contact searches and deep pages all along.
	searchCtx, stopSearch := context.WithCancel(ctx)
	var searches atomic.Int64
	searchErr := make(chan error, 1)
	go func() { searchErr <- searchLoad(searchCtx, client, base, c.contacts, &searches) }()

	err = each(ctx, httpClients, n, func(ctx context.Context, k int) error {
		body := fmt.Sprintf(`{"channel":"whatsapp","to":"%s","type":"text","text":"Your order A-1042 has shipped.","idempotency_key":"mem-%d"}`, phone(k), k)
		status, b, err := do(ctx, client, "POST", base+"/v1/messages", body)
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("POST /v1/messages: status %d: %s", status, b)
		}
		if a := accepted.Add(1); a%int64(max(1, n/10)) == 0 {
			rss, _ := procStatus(cmd.Process.Pid, "VmRSS")
			c.logf("memory: %d accepted in %s, RSS %.1f MiB, %d searches", a, time.Since(start).Round(time.Second), float64(rss)/1024, searches.Load())
		}
		return nil
	})
	if err != nil {
		stopSearch()
		return none, err
	}
	acceptTime := time.Since(start)

	// Wait until the dispatcher has handed every message over.
	if err := waitDispatched(ctx, db, n, exited); err != nil {
		stopSearch()
		return none, err
	}
	stopSearch()
	if err := <-searchErr; err != nil && ctx.Err() == nil {
		return none, fmt.Errorf("contact searches: %w", err)
	}
	hwm, err := procStatus(cmd.Process.Pid, "VmHWM")
	if err != nil {
		return none, err
	}
	anon, _ := procStatus(cmd.Process.Pid, "RssAnon")
	file, _ := procStatus(cmd.Process.Pid, "RssFile")
	close(stopSampling)
	sampler.Wait()
	c.logf("memory: %d messages accepted in %s (%.0f/s), all dispatched after %s; %d contact searches; VmHWM %.1f MiB, sampled max %.1f MiB, warm-up max %.1f MiB, later max %.1f MiB; at the end %.1f MiB anonymous, %.1f MiB file pages (the executable, libraries)",
		n, acceptTime.Round(time.Millisecond), float64(n)/acceptTime.Seconds(), time.Since(start).Round(time.Millisecond), searches.Load(),
		float64(hwm)/1024, float64(maxRSS.Load())/1024, float64(warmRSS.Load())/1024, float64(lateRSS.Load())/1024, float64(anon)/1024, float64(file)/1024)
	if err := srv.stop(); err != nil {
		return none, err
	}
	return rssFigures{peak: float64(hwm) / 1024, warm: float64(warmRSS.Load()) / 1024, late: float64(lateRSS.Load()) / 1024}, nil
}

// waitReady waits until the server answers.
func waitReady(ctx context.Context, client *http.Client, base string, exited <-chan error) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("server exited at start: %v", err)
		default:
		}
		if status, _, err := do(ctx, client, "GET", base+"/v1/openapi.json", ""); err == nil && status == 200 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server not ready after 2 minutes")
}

// waitDispatched waits until the n messages of the run have left the
// queued status, reading the server's database.
func waitDispatched(ctx context.Context, path string, n int, exited <-chan error) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_query_only=1")
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Minute)
	for {
		var queued int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE status = 'queued'`).Scan(&queued); err != nil {
			return err
		}
		if queued == 0 {
			var total int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&total); err != nil {
				return err
			}
			if total < n {
				return fmt.Errorf("the server holds %d messages, want %d", total, n)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d messages still queued after 30 minutes", queued, n)
		}
		select {
		case err := <-exited:
			return fmt.Errorf("server exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// searchLoad runs contact searches and deep pages until ctx ends.
func searchLoad(ctx context.Context, client *http.Client, base string, contacts int, count *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := searchKinds((contacts + 24) / 25)
	s := &sample{first: "Amina", last: "Otieno", phone: "+254712345678", email: "amina.otieno12@gmail.com"}
	for ctx.Err() == nil {
		k := kinds[rng.IntN(len(kinds))]
		if _, _, err := listContacts(ctx, client, base+"/v1/contacts?"+k.gen(rng, s)); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		count.Add(1)
		// About 50 a second: a busy dashboard, not a second load test.
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// procStatus returns a kB field of /proc/<pid>/status.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
