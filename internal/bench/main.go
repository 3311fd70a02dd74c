// Command bench measures every hot path of the messaging library as a ratio
// to its physical limit, measured in the same run on the same machine:
//
//	go run ./internal/bench            # the full suite (about 20 minutes on 2 cores; capacity about 12)
//	go run ./internal/bench -short     # a quick pass proving the suite works (CI)
//	go run ./internal/bench -only accept,http -repeat 5
//
// For each figure it prints the product's number and the baseline's (the
// limit), each as the median and the worst of the repeats, and their ratio
// (the median of the per-repeat ratios and the worst one), oriented so that
// higher is better and compared with its goal. Absolute numbers
// are noisy on shared machines; the ratios are what is tracked.
//
// Figures (names for -only):
//
//	accept    Messages.Send, 8 callers, SQLite on disk, vs a raw INSERT per transaction
//	http      POST /v1/messages through httpapi, 32 keep-alive clients, vs a bare strict decoder
//	dispatch  queued -> sent with a no-op provider vs a raw claim-and-ack loop; 2,000 sends of 50 ms
//	contacts  search and deep pages on a 1,000,000-contact workspace: p50 and p99
//	memory    peak RSS of examples/server accepting and dispatching messages (-memory-messages)
//	smsbulk   POST /sms/v1/messages/bulk of 20 vs 20 single sends
//	telemetry POST /v1/messages with OpenTelemetry SDK metrics and traces on (not exported) vs off (no-op)
//	messages  GET /v1/messages on a 1,000,000-message workspace: a page in the last tenth vs the first page, p50 and p99;
//	          and the first page of one recipient (to=), p99, whose goal is absolute (at most 10 ms)
//	river     the product beside River v0.51.2 on SQLite and on PostgreSQL: accept (Messages.Send vs Client.Insert,
//	          8 callers) and dispatch (queued -> sent, 8 workers, vs River working as many jobs with 8 no-op workers)
//	capacity  the highest open-loop rate of POST /v1/messages examples/server sustains for 30 s through the
//	          whole lifecycle (p99 <= 50 ms, no errors, no growing backlog) vs a naive durable service; the
//	          cost of the request log and of metrics; on PostgreSQL with one and two instances
//	          (-capacity-profile <dir>: a CPU profile of the server at its capacity)
//
// The 1,000,000-contact and 1,000,000-message databases are generated once (bulk insert) and cached
// in -cache (default: the system temporary directory); it is generated
// again when the schema changes. -short asserts nothing about speed: it
// runs every figure on small inputs and fails only if something does not
// work. A figure whose goal is not met is marked NOT MET but does not fail
// the run.
//
// To profile a figure, -cpuprofile and -blockprofile write pprof profiles
// of the whole run (the figures other than memory run in this process), and
// -side product (or baseline) measures one side only.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// config is what the flags set.
type config struct {
	short   bool
	repeat  int
	only    map[string]bool
	cache   string
	workDir string
	verbose bool
	out     io.Writer
	log     io.Writer

	side string // "product" or "baseline" to measure one side only (for profiling)

	postgres string // URL of the PostgreSQL server the figures on PostgreSQL create their databases on

	contacts       int // contacts in the search workspace
	messages       int // messages in the message-list workspace
	memoryMessages int // messages accepted by the server in the memory figure

	capacityProfile string // directory of the capacity figure's CPU profile of the server; "" for none
}

// figure is one benchmark; run returns its rows.
type figure struct {
	name string
	run  func(ctx context.Context, c *config) ([]*row, error)
}

func figures() []figure {
	return []figure{
		{"accept", runAccept},
		{"http", runHTTPAccept},
		{"dispatch", runDispatch},
		{"contacts", runContacts},
		{"memory", runMemory},
		{"smsbulk", runSMSBulk},
		{"telemetry", runTelemetry},
		{"messages", runMessageList},
		{"river", runRiver},
		{"capacity", runCapacity},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names []string
	for _, f := range figures() {
		names = append(names, f.name)
	}
	short := fs.Bool("short", false, "small inputs and one repeat: proves the suite works, in well under a minute")
	repeat := fs.Int("repeat", 0, "repeats of each measurement (default 5, 1 with -short)")
	only := fs.String("only", "", "comma-separated figures to run (default all): "+strings.Join(names, ","))
	cache := fs.String("cache", filepath.Join(os.TempDir(), "messaging-bench"), "directory caching the generated contact databases")
	verbose := fs.Bool("v", false, "log progress to stderr")
	contacts := fs.Int("contacts", 0, "contacts in the search workspace (default 1,000,000; 20,000 with -short)")
	messages := fs.Int("messages", 0, "messages in the message-list workspace (default 1,000,000; 20,000 with -short)")
	memMsgs := fs.Int("memory-messages", 0, "messages the server accepts and dispatches in the memory figure (default 100,000, to stay within 5 minutes; the goal, peak <= 64 MiB, is set at 1,000,000, about 10 minutes on 2 cores; 5,000 with -short)")
	side := fs.String("side", "", `measure only the "product" or the "baseline" side of paired figures (for profiling)`)
	postgres := fs.String("postgres", postgresURLFromEnv(), "PostgreSQL server URL; the figures on PostgreSQL create (and drop) a database of their own on it (default env MESSAGING_TEST_POSTGRES_URL, else the local cluster)")
	capProfile := fs.String("capacity-profile", "", "directory to write a 10 s CPU profile of the server running at its capacity (with -metrics-addr) to, with its top functions (capacity figure)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	blockProfile := fs.String("blockprofile", "", "write a profile of blocking (channels, locks, I/O waits) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *blockProfile != "" {
		runtime.SetBlockProfileRate(int(time.Microsecond))
		defer func() {
			if f, err := os.Create(*blockProfile); err == nil {
				_ = pprof.Lookup("block").WriteTo(f, 0)
				_ = f.Close()
			}
		}()
	}
	c := &config{short: *short, repeat: *repeat, cache: *cache, verbose: *verbose, out: stdout, log: io.Discard,
		contacts: *contacts, messages: *messages, memoryMessages: *memMsgs, only: map[string]bool{}, side: *side, postgres: *postgres, capacityProfile: *capProfile}
	if c.side != "" && c.side != "product" && c.side != "baseline" {
		return fmt.Errorf("-side: %q is neither product nor baseline", c.side)
	}
	if c.verbose {
		c.log = stderr
	}
	if c.repeat <= 0 {
		c.repeat = 5
		if c.short {
			c.repeat = 1
		}
	}
	if c.contacts <= 0 {
		c.contacts = 1_000_000
		if c.short {
			c.contacts = 20_000
		}
	}
	if c.messages <= 0 {
		c.messages = 1_000_000
		if c.short {
			c.messages = 20_000
		}
	}
	if c.memoryMessages <= 0 {
		c.memoryMessages = 100_000
		if c.short {
			c.memoryMessages = 5_000
		}
	}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(names, n) {
			return fmt.Errorf("-only: unknown figure %q (figures: %s)", n, strings.Join(names, ", "))
		}
		c.only[n] = true
	}
	dir, err := os.MkdirTemp("", "messaging-bench-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c.workDir = dir

	start := time.Now()
	fmt.Fprintf(stdout, "messaging benchmarks: %s %s/%s, %d CPUs, %s; repeats %d%s\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), c.repeat, map[bool]string{true: ", -short (numbers are not meaningful)"}[c.short])
	var rows []*row
	var failed []string
	for _, f := range figures() {
		if len(c.only) > 0 && !c.only[f.name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(c.log, "== %s\n", f.name)
		t := time.Now()
		rs, err := f.run(ctx, c)
		if err != nil {
			failed = append(failed, f.name)
			fmt.Fprintf(stderr, "bench: %s: %v\n", f.name, err)
			continue
		}
		fmt.Fprintf(c.log, "== %s done in %s\n", f.name, time.Since(t).Round(time.Millisecond))
		rows = append(rows, rs...)
	}
	printTable(stdout, rows)
	fmt.Fprintf(stdout, "\ntotal time %s\n", time.Since(start).Round(time.Second))
	if len(failed) > 0 {
		return fmt.Errorf("figures failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// cpuModel returns the processor's model name, or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// logf logs progress when -v is set.
func (c *config) logf(format string, args ...any) {
	fmt.Fprintf(c.log, "   "+format+"\n", args...)
}

// sides returns which sides of a paired figure repeat i measures, in order
// (true: the product): both, alternating which goes first so that drift
// favours neither, or the one chosen with -side.
func (c *config) sides(i int) []bool {
	switch c.side {
	case "product":
		return []bool{true}
	case "baseline":
		return []bool{false}
	}
	return []bool{i%2 == 0, i%2 != 0}
}

// pick returns full, or short with -short.
func pick[T any](c *config, full, short T) T {
	if c.short {
		return short
	}
	return full
}

// measure runs the repeats of a paired figure into r: for each repeat and
// side (see sides) it makes a fresh directory under the run's work
// directory, calls side with it, keeps the value on the product or the
// baseline side, and removes the directory.
func (c *config) measure(r *row, label string, side func(dir string, product bool) (float64, error)) error {
	for i := range c.repeat {
		for _, product := range c.sides(i) {
			dir, err := os.MkdirTemp(c.workDir, label+"-")
			if err != nil {
				return err
			}
			v, err := side(dir, product)
			_ = os.RemoveAll(dir)
			if err != nil {
				return err
			}
			if product {
				r.product = append(r.product, v)
			} else {
				r.baseline = append(r.baseline, v)
			}
			c.logf("%s product=%v: %.0f %s", label, product, v, r.unit)
		}
	}
	return nil
}
