// Command server runs the Messaging API over HTTP on an embedded SQLite
// database with the fake channel provider, so the API can be tried with
// curl in one command:
//
//	go run ./examples/server
//
// Flags (each also read from an environment variable):
//
//	-addr       MESSAGING_ADDR       listen address (default 127.0.0.1:8080)
//	-db         MESSAGING_DB         SQLite database file (default messaging.db), or a postgres:// URL
//	                                 to run several instances on one PostgreSQL database
//	-bootstrap  MESSAGING_BOOTSTRAP  JSON file of workspaces, keys and templates: what it says of the records
//	                                 it names holds after start (see README); refused whole if it cannot
//	-rate-limits MESSAGING_RATE_LIMITS  "off", or a JSON file {"POST /v1/messages": 600, ...} of per-minute limits
//	-secret-key-file MESSAGING_SECRET_KEY_FILE  key sealing channel tokens and webhook secrets (default <db>.key,
//	                                 or messaging.key with PostgreSQL; created (mode 600) if missing; refused when
//	                                 its group or others may read it; every instance needs the same key)
//	-admin-token-file MESSAGING_ADMIN_TOKEN_FILE  the operator token opening /admin/v1 (Authorization: Bearer);
//	                                 default <db>.admin-token, or messaging.admin-token with PostgreSQL; created
//	                                 (mode 600) with a random token printed once when missing; refused when its
//	                                 group or others may read it
//	-webhooks-loopback MESSAGING_WEBHOOKS_LOOPBACK  let webhooks reach loopback addresses, for local testing
//	                                 only (default false: any workspace could reach this host's loopback services)
//	-tls-cert, -tls-key MESSAGING_TLS_CERT, MESSAGING_TLS_KEY  serve HTTPS (TLS 1.2 or later) with this PEM
//	                                 certificate and key (both or neither; the key file mode 600)
//	-public-url MESSAGING_PUBLIC_URL  the URL clients reach the server at, e.g. https://messaging.example.com behind
//	                                 a proxy ending TLS (default http://<addr>, https:// with -tls-cert); when it
//	                                 is https the dashboard's cookies are Secure
//	-provider   MESSAGING_PROVIDER   "fake" (default: a simulator) or "meta": sends go through Meta's Graph API with
//	                                 the credentials of each workspace's channel connections (bootstrap file)
//	-meta-base-url MESSAGING_META_BASE_URL  the Graph API's address (default https://graph.facebook.com)
//	-meta-version MESSAGING_META_VERSION    the Graph API version (default v21.0)
//	-meta-app-id MESSAGING_META_APP_ID      the Meta app's id, with which template samples (the media of a template's
//	                                 image, video or document header) are uploaded (default none: such uploads fail)
//	-template-sync-every MESSAGING_TEMPLATE_SYNC_EVERY  templates are synchronised from Meta at start and this often (1h)
//	-fake-delivered-after, -fake-read-after  delays of the fake provider's delivered and read reports (1s, 2s)
//	-fake-inbound MESSAGING_FAKE_INBOUND  for local testing only (default off): POST /fake/v1/inbound with the
//	                                 operator token and {"workspace_id","from","text"[,"channel","id"]} makes the
//	                                 fake provider report a message from a contact (message.received, opt-out keywords)
//	-fake-review-after MESSAGING_FAKE_REVIEW_AFTER  the fake approves a submitted template after this long (2s),
//	                                 except names starting reject_ (rejected, reason INVALID_FORMAT)
//	-lease      MESSAGING_LEASE      how long claimed work belongs to the process (default 60s); after a crash it is picked up again once this has passed
//	-dispatch-rate MESSAGING_DISPATCH_RATE  messages a second handed to the provider per sender (workspace and channel); default 80, "off" for load tests
//	-dispatch-workers MESSAGING_DISPATCH_WORKERS  sends in flight at once (default 8)
//	-confirm-window MESSAGING_CONFIRM_WINDOW  how long a send whose outcome is unknown (a timeout, a lost
//	                                 connection, a process killed after the hand-over) waits for the provider's
//	                                 report before it is resent once (default 5m); a report carrying the message id
//	                                 confirms it with no second request
//	-dashboard-password MESSAGING_DASHBOARD_PASSWORD  a password (12 to 72 characters) signing in to the
//	                                 dashboard at /dashboard/, besides the operator token; kept as a bcrypt hash
//
// Operations (see the README's Operations section):
//
//	-metrics-addr MESSAGING_METRICS_ADDR  internal listener (off by default) serving Prometheus metrics at
//	                                 /metrics and Go's profiler at /debug/pprof/; keep it off the public network
//	-otlp-endpoint OTEL_EXPORTER_OTLP_ENDPOINT  OTLP/HTTP collector base URL (e.g. http://collector:4318):
//	                                 traces are exported to it (/v1/traces); off by default
//	-log-format MESSAGING_LOG_FORMAT  text (default) or json
//	-request-log MESSAGING_REQUEST_LOG  "on" (default): one log line per API request; "off" drops those lines
//	                                 (warnings and errors are still logged)
//	-drain-delay MESSAGING_DRAIN_DELAY  on SIGTERM, /readyz answers 503 this long before the listener closes,
//	                                 so that a load balancer stops sending requests first (default 0s; set
//	                                 it above the balancer's probe interval times its failure threshold)
//	MALLOC_ARENA_MAX                 glibc's malloc arenas: the server caps them at 2 unless this is set
//	                                 (SQLite's memory otherwise ends up in an arena per thread, each keeping
//	                                 what was freed in it; see the README's Memory section)
//
// GET /healthz and GET /readyz answer on the main listener without a key.
//
// With -provider meta, the provider's receiver of Meta's webhooks is
// mounted at /webhooks/meta, with MESSAGING_META_APP_SECRET (required) and
// MESSAGING_META_VERIFY_TOKEN for the handshake. Statuses, inbound messages
// and template reviews arriving there are routed to the workspace whose
// connection has the phone-number id, page id or WABA id they name
// (MESSAGING_META_ACCOUNTS, "account-id=workspace,...", overrides the
// routing of inbound messages).
//
// With no -bootstrap and an empty database it creates a demo workspace and
// prints its API key and a ready curl command.
//
// Every flag, file (and its mode), the bootstrap file and the listen
// address are checked before anything is created: a refused start leaves
// no key file, token file or database behind.
//
// The SMS API (/sms/v1) runs on the same database; its accounts come from
// the bootstrap file's sms_accounts. It hands messages to the fake SMS
// gateway (delivery reports 5 s after the hand-over), or to an
// Advanta-compatible upstream:
//
//	-sms-gateway MESSAGING_SMS_GATEWAY  "fake" (default) or "advanta"
//	-advanta-base-url MESSAGING_ADVANTA_BASE_URL  the upstream, e.g. https://quicksms.advantasms.com
//	MESSAGING_ADVANTA_PARTNER_ID, MESSAGING_ADVANTA_APIKEY  the service's account at the upstream, or
//	-advanta-credentials-file MESSAGING_ADVANTA_CREDENTIALS_FILE  JSON {"partner_id": ..., "apikey": ...},
//	                                 refused when its group or others may read it (chmod 600)
//	-advanta-timezone MESSAGING_ADVANTA_TIMEZONE  time zone of the upstream's delivery times (default UTC)
//	-sms-callback-secret-file MESSAGING_SMS_CALLBACK_SECRET_FILE  file (mode 600) holding the secret of
//	                                 the delivery-report callback, or the secret itself in
//	                                 MESSAGING_SMS_CALLBACK_SECRET (16 characters or more); without one
//	                                 reports are only pulled. Register
//	                                 https://<host>/sms/v1/callbacks/delivery?token=<secret> with the upstream
//	-sms-callback-path MESSAGING_SMS_CALLBACK_PATH  path of that route (default /sms/v1/callbacks/delivery)
//	-upstream-credit-floor MESSAGING_UPSTREAM_CREDIT_FLOOR  warn when the service's own credit at the
//	                                 upstream falls below this amount (read every
//	-upstream-credit-check-every MESSAGING_UPSTREAM_CREDIT_CHECK_EVERY, default 5m, and after a 1004)
//	-pause-below-floor MESSAGING_PAUSE_BELOW_FLOOR  and hold messages queued until it is back
//
// With advanta the server refuses to start without the base URL, the
// partner id or the apikey, naming what is missing. Credentials and the
// callback secret are never logged.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"go.opentelemetry.io/otel/propagation"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/sms"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// config is the server's flags, each defaulting to its environment
// variable.
type config struct {
	addr, dbPath, bootstrap, limits    string
	keyFile, adminTokenFile            string
	loopback                           bool
	tlsCertFile, tlsKeyFile, publicURL string
	// The fake provider's delays.
	deliveredAfter, readAfter, reviewAfter time.Duration
	// The dispatcher's and the SMS API's lease, pacing and window.
	lease                       time.Duration
	dispatchRate, confirmWindow string
	dispatchWorkers             int
	// The provider: "fake" or "meta", and Meta's Graph API.
	providerKind, metaBaseURL, metaVersion, metaAppID string
	syncEvery                                         time.Duration
	dashPassword, trustedProxies                      string
	fakeInbound                                       bool
	gwc                                               *smsGatewayConfig
	tc                                                *telemetryConfig
	logFormat                                         string
	requestLog                                        string
	drainDelay                                        time.Duration
}

// parseFlags parses the server's flags in args.
func parseFlags(args []string) (*config, error) {
	c := &config{tc: &telemetryConfig{}}
	fs := flagSet(c)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return c, nil
}

// flagSet returns the server's flags, which fill c. Each flag's usage ends
// with "(env NAME)", its environment variable; the README's flags table
// lists every flag with it (TestFlagsTable).
func flagSet(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", env("MESSAGING_ADDR", "127.0.0.1:8080"), "listen address (env MESSAGING_ADDR)")
	fs.StringVar(&c.dbPath, "db", env("MESSAGING_DB", "messaging.db"), "SQLite database file, or a postgres:// URL (env MESSAGING_DB)")
	fs.StringVar(&c.bootstrap, "bootstrap", env("MESSAGING_BOOTSTRAP", ""), "bootstrap JSON file (env MESSAGING_BOOTSTRAP)")
	fs.StringVar(&c.limits, "rate-limits", env("MESSAGING_RATE_LIMITS", ""), `"off" or a JSON file of per-minute limits by route (env MESSAGING_RATE_LIMITS)`)
	fs.StringVar(&c.keyFile, "secret-key-file", env("MESSAGING_SECRET_KEY_FILE", ""), "file holding the 32-byte hex key that encrypts webhook secrets; created if missing (default: the -db path + \".key\") (env MESSAGING_SECRET_KEY_FILE)")
	fs.StringVar(&c.adminTokenFile, "admin-token-file", env("MESSAGING_ADMIN_TOKEN_FILE", ""), "file (mode 600) holding the operator token of the /admin/v1 routes; created with a random token, printed once, if missing (default: the -db path + \".admin-token\", or messaging.admin-token with PostgreSQL) (env MESSAGING_ADMIN_TOKEN_FILE)")
	fs.BoolVar(&c.loopback, "webhooks-loopback", envBool("MESSAGING_WEBHOOKS_LOOPBACK", false), "let webhooks (and their test deliveries) reach loopback addresses, for local testing only: any workspace could then reach this host's loopback services (env MESSAGING_WEBHOOKS_LOOPBACK)")
	fs.StringVar(&c.tlsCertFile, "tls-cert", env("MESSAGING_TLS_CERT", ""), "PEM certificate (chain) the server serves HTTPS with, together with -tls-key (env MESSAGING_TLS_CERT)")
	fs.StringVar(&c.tlsKeyFile, "tls-key", env("MESSAGING_TLS_KEY", ""), "PEM private key of -tls-cert, mode 600 (env MESSAGING_TLS_KEY)")
	fs.StringVar(&c.publicURL, "public-url", env("MESSAGING_PUBLIC_URL", ""), "the URL clients reach the server at, e.g. https://messaging.example.com behind a proxy ending TLS; https makes the dashboard's cookies Secure (default: http://, or https:// with -tls-cert, and the -addr) (env MESSAGING_PUBLIC_URL)")
	fs.DurationVar(&c.deliveredAfter, "fake-delivered-after", envDuration("MESSAGING_FAKE_DELIVERED_AFTER", time.Second), "the fake provider reports a sent message delivered after this long (env MESSAGING_FAKE_DELIVERED_AFTER)")
	fs.DurationVar(&c.readAfter, "fake-read-after", envDuration("MESSAGING_FAKE_READ_AFTER", 2*time.Second), "then read after this long (env MESSAGING_FAKE_READ_AFTER)")
	fs.DurationVar(&c.lease, "lease", envDuration("MESSAGING_LEASE", 0), "how long work claimed by the dispatcher, the webhook sender and the SMS scheduler belongs to this process; what a killed process held is picked up again after it (default 60s; calls to the provider time out at half of it) (env MESSAGING_LEASE)")
	fs.StringVar(&c.dispatchRate, "dispatch-rate", env("MESSAGING_DISPATCH_RATE", ""), `messages a second the dispatcher hands to the provider per sender (a workspace's channel): a number, or "off" for no pacing in load tests (default 80, WhatsApp's default throughput) (env MESSAGING_DISPATCH_RATE)`)
	fs.IntVar(&c.dispatchWorkers, "dispatch-workers", envInt("MESSAGING_DISPATCH_WORKERS", 0), "sends to the provider in flight at once (default 8) (env MESSAGING_DISPATCH_WORKERS)")
	fs.StringVar(&c.confirmWindow, "confirm-window", env("MESSAGING_CONFIRM_WINDOW", ""), "how long a send or SMS hand-over whose outcome is unknown (a timeout, a lost connection, a process killed after the hand-over) waits for the provider's or upstream's report, which confirms it, before it is resent once: a Go duration such as 5m (default 5m) (env MESSAGING_CONFIRM_WINDOW)")
	fs.StringVar(&c.providerKind, "provider", env("MESSAGING_PROVIDER", "fake"), `the channel provider: "fake" (a simulator) or "meta" (Meta's Graph API, with the credentials of each workspace's channel connections) (env MESSAGING_PROVIDER)`)
	fs.StringVar(&c.metaBaseURL, "meta-base-url", env("MESSAGING_META_BASE_URL", metaprovider.DefaultBaseURL), "the Graph API's address, with -provider meta (env MESSAGING_META_BASE_URL)")
	fs.StringVar(&c.metaVersion, "meta-version", env("MESSAGING_META_VERSION", metaprovider.DefaultVersion), "the Graph API version, with -provider meta (env MESSAGING_META_VERSION)")
	fs.StringVar(&c.metaAppID, "meta-app-id", env("MESSAGING_META_APP_ID", ""), "the Meta app's id (digits), with -provider meta: template samples (the media of an image, video or document header) are uploaded with it through the Resumable Upload API; without it such uploads fail (env MESSAGING_META_APP_ID)")
	fs.DurationVar(&c.reviewAfter, "fake-review-after", envDuration("MESSAGING_FAKE_REVIEW_AFTER", 2*time.Second), "the fake provider approves a submitted template after this long (names starting reject_ are rejected) (env MESSAGING_FAKE_REVIEW_AFTER)")
	fs.StringVar(&c.dashPassword, "dashboard-password", env("MESSAGING_DASHBOARD_PASSWORD", ""), "a password (12 to 72 characters) that signs in to the dashboard besides the operator token; kept only as a bcrypt hash (env MESSAGING_DASHBOARD_PASSWORD)")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", env("MESSAGING_TRUSTED_PROXIES", ""), "comma-separated CIDR prefixes or addresses of the reverse proxies in front of the server: from a peer among them, the dashboard's sign-in limits and the API's limits of unauthenticated requests take the client address from X-Forwarded-For (the right-most entry not a trusted proxy); default none, the header is ignored (env MESSAGING_TRUSTED_PROXIES)")
	fs.BoolVar(&c.fakeInbound, "fake-inbound", envBool("MESSAGING_FAKE_INBOUND", false), "for local testing only: serve POST "+fakeInboundPath+" (operator token), which makes the fake provider report a message from a contact (env MESSAGING_FAKE_INBOUND)")
	fs.DurationVar(&c.syncEvery, "template-sync-every", envDuration("MESSAGING_TEMPLATE_SYNC_EVERY", defaults.DefaultTemplateSyncEvery), "how often templates are synchronised from the provider (-provider meta), besides at start; negative: only at start (env MESSAGING_TEMPLATE_SYNC_EVERY)")
	c.gwc = smsGatewayFlags(fs)
	fs.StringVar(&c.tc.metricsAddr, "metrics-addr", env("MESSAGING_METRICS_ADDR", ""), "internal listen address of Prometheus /metrics and /debug/pprof/, e.g. 127.0.0.1:9090 (default: off) (env MESSAGING_METRICS_ADDR)")
	fs.StringVar(&c.tc.otlpEndpoint, "otlp-endpoint", env("OTEL_EXPORTER_OTLP_ENDPOINT", ""), "OTLP/HTTP collector base URL receiving traces, e.g. http://127.0.0.1:4318 (default: no traces) (env OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&c.logFormat, "log-format", env("MESSAGING_LOG_FORMAT", "text"), "log format: text or json (env MESSAGING_LOG_FORMAT)")
	fs.StringVar(&c.requestLog, "request-log", env("MESSAGING_REQUEST_LOG", "on"), `"on": one log line per API request (method, path, status, duration, correlation id); "off": none, warnings and errors are still logged (env MESSAGING_REQUEST_LOG)`)
	fs.DurationVar(&c.drainDelay, "drain-delay", envDuration("MESSAGING_DRAIN_DELAY", 0), "on shutdown, how long /readyz answers 503 before the listener closes (env MESSAGING_DRAIN_DELAY)")
	return fs
}

// smsGatewayFlags defines on fs the flags of the SMS upstream, and
// returns the config they fill (the credentials and the callback secret
// also from the environment).
func smsGatewayFlags(fs *flag.FlagSet) *smsGatewayConfig {
	gwc := &smsGatewayConfig{partnerID: os.Getenv("MESSAGING_ADVANTA_PARTNER_ID"), apikey: os.Getenv("MESSAGING_ADVANTA_APIKEY"),
		callbackSecret: os.Getenv("MESSAGING_SMS_CALLBACK_SECRET")}
	fs.StringVar(&gwc.kind, "sms-gateway", env("MESSAGING_SMS_GATEWAY", "fake"), `the SMS upstream: "fake" (a simulator) or "advanta" (an Advanta-compatible upstream) (env MESSAGING_SMS_GATEWAY)`)
	fs.StringVar(&gwc.baseURL, "advanta-base-url", env("MESSAGING_ADVANTA_BASE_URL", ""), "the Advanta-compatible upstream's base URL, e.g. https://quicksms.advantasms.com (env MESSAGING_ADVANTA_BASE_URL)")
	fs.StringVar(&gwc.credentialsFile, "advanta-credentials-file", env("MESSAGING_ADVANTA_CREDENTIALS_FILE", ""), `JSON file {"partner_id": ..., "apikey": ...} of the upstream account, mode 600; default: env MESSAGING_ADVANTA_PARTNER_ID and MESSAGING_ADVANTA_APIKEY (env MESSAGING_ADVANTA_CREDENTIALS_FILE)`)
	fs.StringVar(&gwc.timeZone, "advanta-timezone", env("MESSAGING_ADVANTA_TIMEZONE", "UTC"), "the time zone of the upstream's delivery times, e.g. Africa/Nairobi (env MESSAGING_ADVANTA_TIMEZONE)")
	fs.StringVar(&gwc.callbackSecretFile, "sms-callback-secret-file", env("MESSAGING_SMS_CALLBACK_SECRET_FILE", ""), "file (mode 600) holding the secret of the delivery-report callback; default: env MESSAGING_SMS_CALLBACK_SECRET; none: no callback route (env MESSAGING_SMS_CALLBACK_SECRET_FILE)")
	fs.StringVar(&gwc.callbackPath, "sms-callback-path", env("MESSAGING_SMS_CALLBACK_PATH", httpapi.DefaultSMSCallbackPath), "path of the delivery-report callback route (env MESSAGING_SMS_CALLBACK_PATH)")
	fs.StringVar(&gwc.creditFloor, "upstream-credit-floor", env("MESSAGING_UPSTREAM_CREDIT_FLOOR", ""), "warn when the service's own credit at the SMS upstream is below this amount, e.g. 500 (default: no check) (env MESSAGING_UPSTREAM_CREDIT_FLOOR)")
	fs.DurationVar(&gwc.checkEvery, "upstream-credit-check-every", envDuration("MESSAGING_UPSTREAM_CREDIT_CHECK_EVERY", 0), "how often the upstream credit is read (default 5m) (env MESSAGING_UPSTREAM_CREDIT_CHECK_EVERY)")
	fs.BoolVar(&gwc.pause, "pause-below-floor", envBool("MESSAGING_PAUSE_BELOW_FLOOR", false), "hold SMS queued while the upstream credit is below the floor, instead of letting the upstream refuse them (env MESSAGING_PAUSE_BELOW_FLOOR)")
	return gwc
}

func run(ctx context.Context, args []string) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	// Every check comes first: flags, files and their modes, the bootstrap
	// file, the listen address. Nothing is created (the secret key file, the
	// operator token file, the database) until all have passed, and what
	// this start created is removed again if it is refused later, before
	// it serves.
	s, err := check(ctx, cfg)
	if err != nil {
		return err
	}
	var lock *dbLock
	if !isPostgresURL(cfg.dbPath) {
		if lock, err = lockDB(cfg.dbPath); err != nil {
			return err
		}
		defer func() { lock.release() }()
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	tel, err := startTelemetry(ctx, cfg.tc, s.log)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			s.log.Warn("flushing metrics and traces failed", "err", err)
		}
	}()
	s.useTelemetry(tel)

	// Every check has passed: create what is missing. Until the server
	// serves, a refusal removes what this start created.
	defer func() {
		if !s.serving {
			s.created.remove(s.log)
		}
	}()
	if err := s.createSecrets(); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	store, err := openStore(ctx, cfg.dbPath, s.apiOpts)
	if err != nil {
		return err
	}
	defer store.Close()
	if lock == nil && !isPostgresURL(cfg.dbPath) {
		// The file is new: lock it now; a server that created it at the
		// same moment holds it already.
		if lock, err = lockDB(cfg.dbPath); err != nil {
			// Another server created the file at the same moment and
			// holds it: what this start "created" may be its files.
			s.created = nil
			return err
		}
	}
	if !s.created.has(cfg.dbPath) {
		// A database that outlives this start (PostgreSQL, or a file that
		// was there) may soon hold secrets sealed with the key: the key and
		// token files are kept from now on, whatever happens.
		s.created = nil
	}
	return s.serve(ctx, ln, tel, store)
}

// startup is one start of the server: its flags, what the checks made of
// them, and then what the start created.
type startup struct {
	cfg     *config
	log     *slog.Logger
	tlsCert *tls.Certificate // nil: plain HTTP
	// base is the URL clients reach the server at.
	base    string
	smsOpts *sms.Options
	smsGW   *smsGateway
	apiOpts *httpapi.Options
	svcOpts *messaging.Options
	// prov is the Meta provider; nil: the fake, made on the store.
	prov           messaging.Provider
	keyPF, tokenPF *secretFile
	signIn         *operatorSignIn
	proxies        []netip.Prefix
	boot           *bootstrapFile // nil: no -bootstrap

	// created are the files this start created, removed again unless
	// serving.
	created      createdFiles
	serving      bool
	secretKey    []byte
	adminTok     string
	adminCreated bool // this start created the operator token file
}

// check makes the startup of cfg, checking every flag, file (and its
// mode) and the bootstrap file. It creates nothing.
func check(ctx context.Context, cfg *config) (*startup, error) {
	s := &startup{cfg: cfg}
	var err error
	if s.log, err = newLogger(cfg.logFormat); err != nil {
		return nil, err
	}
	if cfg.drainDelay < 0 {
		return nil, fmt.Errorf("-drain-delay: must not be negative (got %s)", cfg.drainDelay)
	}
	if s.tlsCert, err = loadTLS(cfg.tlsCertFile, cfg.tlsKeyFile); err != nil {
		return nil, err
	}
	if s.base, err = publicBase(cfg.publicURL, cfg.addr, s.tlsCert != nil); err != nil {
		return nil, err
	}
	metaSecret := os.Getenv("MESSAGING_META_APP_SECRET")
	if err := checkProvider(cfg.providerKind, cfg.fakeInbound, metaSecret); err != nil {
		return nil, err
	}
	s.smsOpts = &sms.Options{Logger: s.log}
	if s.smsGW, err = openSMSGateway(cfg.gwc, s.smsOpts, s.log); err != nil {
		return nil, err
	}
	if s.apiOpts, err = apiOptions(cfg.limits, cfg.requestLog, s.log); err != nil {
		return nil, err
	}
	if s.svcOpts, err = serviceOptions(cfg, s.log, s.smsOpts); err != nil {
		return nil, err
	}
	if cfg.providerKind == "meta" {
		if s.prov, err = newMetaProvider(cfg, metaSecret); err != nil {
			return nil, err
		}
	}
	if err := s.openSecrets(); err != nil {
		return nil, err
	}
	if s.proxies, err = parseTrustedProxies(cfg.trustedProxies); err != nil {
		return nil, err
	}
	s.apiOpts.TrustedProxies = s.proxies
	if cfg.bootstrap != "" {
		if s.boot, err = loadBootstrap(cfg.bootstrap); err != nil {
			return nil, fmt.Errorf("bootstrap refused: %w", err)
		}
		if err := validateBootstrap(ctx, s.boot, cfg.loopback, false); err != nil {
			return nil, fmt.Errorf("bootstrap refused, nothing applied: %w", err)
		}
	}
	return s, nil
}

// newLogger returns the logger of -log-format, text or json, writing to
// stderr.
func newLogger(format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("-log-format: must be text or json (got %q)", format)
}

// checkProvider checks -provider (fake, or meta with the app secret) and
// that -fake-inbound comes with the fake.
func checkProvider(kind string, fakeInbound bool, metaSecret string) error {
	switch kind {
	case "fake":
	case "meta":
		if metaSecret == "" {
			return errors.New("-provider meta needs MESSAGING_META_APP_SECRET, the Meta app's secret that signs its webhooks (statuses, inbound messages and template reviews arrive only through them)")
		}
	default:
		return fmt.Errorf("-provider: must be fake or meta (got %q)", kind)
	}
	if fakeInbound && kind != "fake" {
		return errors.New("-fake-inbound needs -provider fake")
	}
	return nil
}

// apiOptions returns the REST API's options with the rate limits of
// -rate-limits ("off", a JSON file, or "" for the defaults) and the
// request log of -request-log ("on" or "off").
func apiOptions(limits, requestLog string, log *slog.Logger) (*httpapi.Options, error) {
	o := &httpapi.Options{Logger: log}
	switch requestLog {
	case "on":
	case "off":
		o.DisableRequestLog = true
	default:
		return nil, fmt.Errorf("-request-log: must be on or off (got %q)", requestLog)
	}
	switch limits {
	case "":
	case "off":
		o.DisableRateLimits = true
	default:
		b, err := os.ReadFile(limits)
		if err != nil {
			return nil, fmt.Errorf("-rate-limits: %w (give \"off\" or a JSON file of per-minute limits by route)", err)
		}
		if err := json.Unmarshal(b, &o.RateLimits); err != nil {
			return nil, fmt.Errorf("-rate-limits: %s: %w", limits, err)
		}
	}
	return o, nil
}

// serviceOptions returns the messaging service's options of cfg, and sets
// in smsOpts the SMS hand-overs' confirm window and lease, which follow
// the same flags.
func serviceOptions(cfg *config, log *slog.Logger, smsOpts *sms.Options) (*messaging.Options, error) {
	o := &messaging.Options{Logger: log,
		Webhooks:     messaging.WebhookOptions{AllowLoopback: cfg.loopback},
		TemplateSync: messaging.TemplateSyncOptions{Every: cfg.syncEvery}}
	o.Dispatch.Workers = cfg.dispatchWorkers
	if cfg.confirmWindow != "" {
		w, err := time.ParseDuration(cfg.confirmWindow)
		if err != nil || w < 0 {
			return nil, fmt.Errorf("-confirm-window: %q is not a duration of 0 or more, such as 5m (0: the default, 5m)", cfg.confirmWindow)
		}
		o.Dispatch.ConfirmWindow = w
		smsOpts.ConfirmWindow = w // the SMS hand-overs' window, the same rule
	}
	switch cfg.dispatchRate {
	case "":
	case "off":
		o.Dispatch.PerSenderRate = -1
	default:
		r, err := strconv.ParseFloat(cfg.dispatchRate, 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("-dispatch-rate: %q is neither a positive number nor off", cfg.dispatchRate)
		}
		o.Dispatch.PerSenderRate = r
	}
	if cfg.lease > 0 {
		o.Dispatch.Lease, o.Dispatch.SendTimeout = cfg.lease, cfg.lease/2
		o.Webhooks.Lease, o.Webhooks.Timeout = cfg.lease, min(cfg.lease/2, 15*time.Second)
		smsOpts.Lease = cfg.lease
	}
	return o, nil
}

// newMetaProvider returns the provider of -provider meta, with the
// Meta app's secret appSecret.
func newMetaProvider(cfg *config, appSecret string) (messaging.Provider, error) {
	accounts, err := parseAccounts(os.Getenv("MESSAGING_META_ACCOUNTS"))
	if err != nil {
		return nil, err
	}
	// The provider's receiver of Meta's webhooks, which httpapi mounts.
	hook := &metaprovider.WebhookOptions{AppSecret: appSecret, VerifyToken: os.Getenv("MESSAGING_META_VERIFY_TOKEN"), Accounts: accounts}
	mp, err := metaprovider.New(&metaprovider.Options{BaseURL: cfg.metaBaseURL, Version: cfg.metaVersion, AppID: cfg.metaAppID, Webhook: hook})
	if err != nil {
		return nil, err
	}
	return mp, nil
}

// openSecrets opens (without creating them) the secret key file and the
// operator token file, by default beside the SQLite database or, with
// PostgreSQL, in the working directory, and makes the dashboard's
// sign-in.
func (s *startup) openSecrets() error {
	cfg := s.cfg
	if cfg.keyFile == "" && isPostgresURL(cfg.dbPath) {
		cfg.keyFile = "messaging.key"
	} else if cfg.keyFile == "" {
		cfg.keyFile = cfg.dbPath + ".key"
	}
	var err error
	if s.keyPF, err = openSecretKey(cfg.keyFile); err != nil {
		return err
	}
	if cfg.adminTokenFile == "" && isPostgresURL(cfg.dbPath) {
		cfg.adminTokenFile = "messaging.admin-token"
	} else if cfg.adminTokenFile == "" {
		cfg.adminTokenFile = cfg.dbPath + ".admin-token"
	}
	if s.tokenPF, err = openAdminToken(cfg.adminTokenFile); err != nil {
		return err
	}
	s.signIn, err = newOperatorSignIn(adminToken(s.tokenPF), cfg.dashPassword)
	return err
}

// useTelemetry hands tel's meter and tracer providers to the options.
func (s *startup) useTelemetry(tel *telemetry) {
	s.smsOpts.MeterProvider, s.smsOpts.TracerProvider = tel.mp, tel.tp
	s.apiOpts.MeterProvider, s.apiOpts.TracerProvider = tel.mp, tel.tp
	s.svcOpts.MeterProvider, s.svcOpts.TracerProvider = tel.mp, tel.tp
	if tel.tp != nil {
		// A caller's traceparent header continues its trace.
		s.apiOpts.Propagator = propagation.TraceContext{}
	}
}

// createSecrets creates the secret key and operator token files that are
// missing, hands the key and token to the options, and notes the SQLite
// database this start is about to create.
func (s *startup) createSecrets() error {
	for _, pf := range []*secretFile{s.keyPF, s.tokenPF} {
		ok, err := pf.create()
		if err != nil {
			return err
		}
		if ok {
			s.created.add(pf.path)
		}
	}
	key, err := secretKey(s.keyPF.body)
	if err != nil {
		return err
	}
	s.secretKey = key
	s.svcOpts.SecretKey = key
	s.adminTok = adminToken(s.tokenPF)
	s.apiOpts.OperatorToken = s.adminTok
	s.adminCreated = s.created.has(s.tokenPF.path)
	if db := s.cfg.dbPath; !isPostgresURL(db) {
		if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
			s.created.add(db, db+"-wal", db+"-shm", db+"-journal")
		}
	}
	return nil
}

// services is what the server runs on its store.
type services struct {
	svc    *messaging.Service
	fake   *fakeprovider.Provider // nil with -provider meta
	sms    *sms.SMS
	health *httpapi.Health
}

// serve makes the services on store, applies the bootstrap file (or
// creates the demo workspace), serves on ln until ctx is done or the
// server fails, then shuts down.
func (s *startup) serve(ctx context.Context, ln net.Listener, tel *telemetry, store serverStore) error {
	sv, err := s.newServices(store)
	if err != nil {
		return err
	}
	if err := s.bootstrapOrDemo(ctx, sv, store); err != nil {
		return err
	}
	s.printOperatorToken()
	srv, err := s.httpServer(sv)
	if err != nil {
		return err
	}
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	if err := sv.svc.Start(runCtx); err != nil {
		return err
	}
	if sv.fake != nil {
		go func() { _ = sv.fake.Run(runCtx) }()
	}
	if err := sv.sms.Start(runCtx); err != nil {
		return err
	}
	errc := make(chan error, 1)
	s.serving = true
	go func() {
		if s.tlsCert != nil {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	s.logStart(tel)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return s.shutdown(srv, sv)
}

// newServices makes the messaging service on store with the provider
// (the fake unless -provider meta), and the SMS API on the same store.
func (s *startup) newServices(store serverStore) (*services, error) {
	sv := &services{}
	prov := s.prov
	if prov == nil {
		sv.fake = newFakeProvider(s.cfg, s.log, store)
		prov = sv.fake
	}
	// Template sends may fall back to SMS through the SMS service made
	// below (see lateFallback).
	fallback := &lateFallback{}
	svcOpts := *s.svcOpts
	svcOpts.SMSFallback = fallback
	svc, err := messaging.New(store, prov, &svcOpts)
	if err != nil {
		return nil, err
	}
	sv.svc = svc
	if sv.fake != nil {
		sv.fake.SetSink(svc)
	}
	// The SMS API runs on the same store, with the gateway the flags name;
	// accounts' callbacks are webhook endpoints of the workspace
	// sms-callbacks, delivered by svc.
	s.smsOpts.Callbacks = &sms.CallbackOptions{Service: svc, WorkspaceID: smsCallbackWorkspace}
	if sv.sms, err = sms.New(store, s.smsGW.gw, s.smsOpts); err != nil {
		return nil, err
	}
	fallback.bind(sv.sms)
	s.apiOpts.SMS, s.apiOpts.SMSCallback = sv.sms, s.smsGW.callback
	sv.health = httpapi.NewHealth(svc, &httpapi.HealthOptions{SMS: sv.sms, Logger: s.log})
	s.apiOpts.Health = sv.health
	return sv, nil
}

// newFakeProvider returns the fake provider of the flags, taking the
// templates it reviews from store.
func newFakeProvider(cfg *config, log *slog.Logger, store serverStore) *fakeprovider.Provider {
	return fakeprovider.NewWithOptions(&fakeprovider.Options{
		DeliveredAfter: cfg.deliveredAfter, ReadAfter: cfg.readAfter, ReviewAfter: cfg.reviewAfter, Logger: log,
		IDPrefix:         fmt.Sprintf("wamid.fake.%d.", time.Now().UnixNano()),
		TemplateIDPrefix: fmt.Sprintf("fake-tpl-%d-", time.Now().UnixNano()),
		// The server never asks what was sent. It applies reports of
		// many messages at once, and when they cannot keep up with the
		// dispatcher, sends wait rather than reports pile up in memory:
		// 10,000 reports waiting are about 5 MiB, and still let the
		// simulator take 1,500 to 2,000 sends a second here (the
		// rate at which this server applies their reports).
		KeepSent: -1, FlushWorkers: 32, MaxPending: 10_000,
		Templates: func(ctx context.Context, ws, name, lang string) (*messaging.Template, error) {
			return store.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: ws, Name: name, Language: lang})
		},
	})
}

// bootstrapOrDemo applies the bootstrap file, or without one creates the
// demo workspace on first start.
func (s *startup) bootstrapOrDemo(ctx context.Context, sv *services, store serverStore) error {
	if s.boot == nil {
		return demo(ctx, sv.svc, s.base, s.cfg.loopback)
	}
	if err := applyAll(ctx, sv.svc, store, sv.sms, s.boot, s.log); err != nil {
		return fmt.Errorf("bootstrap refused, nothing applied: %w", err)
	}
	s.log.Info("bootstrap applied", "file", s.cfg.bootstrap, "workspaces", len(s.boot.Workspaces), "sms_accounts", len(s.boot.SMSAccounts))
	return nil
}

// printOperatorToken prints the operator token when this start created
// its file.
func (s *startup) printOperatorToken() {
	if !s.adminCreated {
		return
	}
	// Printed once, like the demo key, never logged.
	fmt.Fprintf(os.Stderr, "\nOperator token (written to %s, mode 600; shown once): %s\nTry:\n  curl -s %s/admin/v1/workspaces -H 'Authorization: Bearer %s'\nDashboard: %s%s (sign in with the operator token)\n\n",
		s.cfg.adminTokenFile, s.adminTok, s.base, s.adminTok, s.base, dashboardPrefix)
}

// httpServer returns the HTTP server of the API and the dashboard (and,
// with -fake-inbound, the fake's inbound route).
func (s *startup) httpServer(sv *services) (*http.Server, error) {
	// The token of a file another instance created meanwhile, and the
	// sessions' bindings under the secret key.
	s.signIn.setToken(s.adminTok, s.secretKey)
	// The dashboard's cookies are Secure when clients reach the server
	// over HTTPS: it serves TLS, or the public URL says https.
	secureCookies := strings.HasPrefix(s.base, "https://")
	handler, err := withDashboard(httpapi.New(sv.svc, s.apiOpts), sv.svc, sv.sms, s.signIn, s.proxies, secureCookies, s.log)
	if err != nil {
		return nil, err
	}
	if s.cfg.fakeInbound {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.Handle("POST "+fakeInboundPath, fakeInboundHandler(sv.fake, s.adminTok))
		handler = mux
		s.log.Warn("fake inbound route enabled, for local testing only", "route", "POST "+fakeInboundPath)
	}
	srv := &http.Server{
		Addr:              s.cfg.addr,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	if s.tlsCert != nil {
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*s.tlsCert}}
	}
	return srv, nil
}

// logStart logs what the server serves: its listener, the SMS gateway,
// and the metrics listener and trace exporter when on.
func (s *startup) logStart(tel *telemetry) {
	// The token file's path only: the token is never logged.
	s.log.Info("listening", "addr", s.cfg.addr, "db", dbLabel(s.cfg.dbPath), "provider", s.cfg.providerKind, "operator_token_file", s.cfg.adminTokenFile, "dashboard", dashboardPrefix)
	smsArgs := []any{"gateway", s.smsGW.label}
	if s.smsGW.callback != nil {
		// The path only: the secret is never logged.
		smsArgs = append(smsArgs, "delivery_callback", s.smsGW.callback.Path)
	}
	if s.smsOpts.UpstreamCreditFloor > 0 {
		smsArgs = append(smsArgs, "upstream_credit_floor", s.smsOpts.UpstreamCreditFloor.String(), "pause_below_floor", s.smsOpts.PauseBelowFloor)
	}
	s.log.Info("sms", smsArgs...)
	if tel.ln != nil {
		s.log.Info("metrics", "addr", tel.ln.Addr().String(), "paths", "/metrics /debug/pprof/")
	}
	if s.cfg.tc.otlpEndpoint != "" {
		s.log.Info("traces", "otlp_endpoint", s.cfg.tc.otlpEndpoint)
	}
}

// shutdown stops serving: /readyz answers 503 for -drain-delay (cut short
// by a second signal), then the listener closes and in-flight work
// finishes, or is left to the next start after its lease.
func (s *startup) shutdown(srv *http.Server, sv *services) error {
	// Not ready first, so that a load balancer stops sending requests
	// before the listener closes.
	sv.health.SetDraining(true)
	s.log.Info("shutting down", "drain_delay", s.cfg.drainDelay.String())
	if s.cfg.drainDelay > 0 {
		t := time.NewTimer(s.cfg.drainDelay)
		select {
		case <-t.C:
		case <-stopAgain():
			t.Stop()
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// Let in-flight sends and webhook deliveries finish; what does not
	// finish in time is picked up again after its lease on the next start.
	if err := sv.svc.Close(sctx); err != nil {
		s.log.Warn("background work did not finish before the deadline", "err", err)
	}
	if err := sv.sms.Close(sctx); err != nil {
		s.log.Warn("SMS hand-overs did not finish before the deadline", "err", err)
	}
	return nil
}

// stopAgain returns a channel closed by a second SIGINT or SIGTERM, which
// cuts the drain delay short.
func stopAgain() <-chan struct{} {
	ch := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		signal.Stop(sig)
		close(ch)
	}()
	return ch
}

// parseAccounts reads "account-id=workspace,..." (MESSAGING_META_ACCOUNTS).
func parseAccounts(v string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		acct, ws, ok := strings.Cut(pair, "=")
		if !ok || acct == "" || ws == "" {
			return nil, fmt.Errorf("MESSAGING_META_ACCOUNTS: %q is not account-id=workspace", pair)
		}
		out[acct] = ws
	}
	return out, nil
}

func envBool(name string, def bool) bool {
	if v, ok := os.LookupEnv(name); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

// demo creates the demo workspace on first start and prints its key and
// a curl command against base, the server's URL; loopback says whether
// webhooks may reach loopback addresses.
func demo(ctx context.Context, svc *messaging.Service, base string, loopback bool) error {
	const id = "demo"
	if _, err := svc.GetWorkspace(ctx, id); err == nil {
		fmt.Fprintf(os.Stderr, "demo workspace %q exists; its API key was printed on first start. For a new key: the dashboard (%s/dashboard/, Developers),\n"+
			"or the operator API: curl -s -X POST %s/admin/v1/workspaces/%s/api-keys -H 'Authorization: Bearer <operator token>' \\\n"+
			"  -H 'Content-Type: application/json' -d '{\"name\":\"cli\",\"scopes\":[\"read:messages\",\"write:messages\"]}'\n", id, base, base, id)
		return nil
	} else if messaging.ErrorCode(err) != messaging.CodeNotFound {
		return err
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: id, Name: "Demo", Channels: svc.Channels()}); messaging.ErrorCode(err) == messaging.CodeConflict {
		// Another instance on the same database created it just now.
		fmt.Fprintf(os.Stderr, "demo workspace %q was created by another instance; its API key was printed there\n", id)
		return nil
	} else if err != nil {
		return err
	}
	_, key, err := svc.Workspace(id).APIKeys.Create(ctx, &messaging.KeyCreateParams{Name: "demo", Scopes: record.AllScopes()})
	if err != nil {
		return err
	}
	_, err = svc.Workspace(id).Templates.Create(ctx, &messaging.TemplateCreateParams{
		Name: "order_shipped", Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "TEXT", Text: "Order update"},
			{Type: "BODY", Text: "Hi {{1}}, your order {{2}} has shipped."},
			{Type: "FOOTER", Text: "Reply STOP to opt out"},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "URL", Text: "Track", URL: "https://example.com/track/{{1}}"}}},
		},
	})
	if err != nil {
		return err
	}
	// Submitted for review: the fake provider approves it about
	// -fake-review-after later.
	_, err = svc.Workspace(id).Templates.Create(ctx, &messaging.TemplateCreateParams{
		Name: "appointment_reminder", Category: record.CategoryUtility, Language: "en",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi {{1}}, see you on {{2}}."}},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, `
Demo workspace %q created with all channels connected, the approved template "order_shipped"
and "appointment_reminder", submitted for review (listed once approved).
API key (shown once): %s

Try:
  curl -s -X POST %s/v1/messages \
    -H 'X-API-Key: %s' -H 'Content-Type: application/json' \
    -d '{"channel":"whatsapp","to":"+14155550123","type":"text","text":"Hello!"}'

`, id, key, base, key)
	if !loopback {
		fmt.Fprint(os.Stderr, `Webhooks to loopback addresses (http://127.0.0.1:...) are refused. To receive them on this
machine for local testing, restart with -webhooks-loopback (or MESSAGING_WEBHOOKS_LOOPBACK=true).

`)
	}
	return nil
}

// loadTLS loads the certificate and key of -tls-cert and -tls-key: both
// or neither (nil: plain HTTP). The key file is refused when its group or
// others may read it, like every secret file of the server.
func loadTLS(certFile, keyFile string) (*tls.Certificate, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case keyFile == "":
		return nil, errors.New("-tls-cert needs -tls-key (both or neither)")
	case certFile == "":
		return nil, errors.New("-tls-key needs -tls-cert (both or neither)")
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert: %w", err)
	}
	keyPEM, err := readPrivateFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The error names the PEM blocks at fault, never the key.
		return nil, fmt.Errorf("-tls-cert, -tls-key: %s and %s are not a PEM certificate and its private key: %w", certFile, keyFile, err)
	}
	return &cert, nil
}

// publicBase returns the URL clients reach the server at, without a
// trailing slash: -public-url when set (an absolute http or https URL
// without query or fragment), else http:// or, serving TLS, https://
// followed by addr.
func publicBase(public, addr string, servesTLS bool) (string, error) {
	if public == "" {
		if servesTLS {
			return "https://" + addr, nil
		}
		return "http://" + addr, nil
	}
	u, err := url.Parse(public)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("-public-url: must be an absolute http:// or https:// URL without credentials, query or fragment, e.g. https://messaging.example.com (got %q)", public)
	}
	if servesTLS && u.Scheme != "https" {
		return "", fmt.Errorf("-public-url: the server serves TLS (-tls-cert), so the URL must be https:// (got %q)", public)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// createdFiles are the files a start created, removed again when the
// start is refused before the server serves.
type createdFiles []string

func (c *createdFiles) add(paths ...string) { *c = append(*c, paths...) }

func (c createdFiles) has(path string) bool {
	for _, p := range c {
		if p == path {
			return true
		}
	}
	return false
}

// remove deletes the files, newest first.
func (c createdFiles) remove(log *slog.Logger) {
	for i := len(c) - 1; i >= 0; i-- {
		if err := os.Remove(c[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("removing a file of the refused start failed", "file", c[i], "err", err)
		}
	}
}
