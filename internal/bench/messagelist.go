package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// Figure 8: GET /v1/messages at depth, on a workspace of 1,000,000
// messages (httpapi on sqlitestore), one request at a time on a
// keep-alive connection: the p50 and p99 of a page of 25 far down the
// list (a cursor among the last tenth of the messages, collected by
// walking the whole list once) against the same percentiles of the first
// page, measured interleaved in the same run. Cursor paging reads the
// index on (workspace, created_at, id), so a deep page should cost what
// the first one does: the goal is a ratio (first / deep) of at least 0.5,
// and for the p99 also an absolute one, at most 10 ms.
// The same run measures the p99 of the first page filtered by recipient
// (to=), half of them for a recipient with no message; it is read through
// the index on conversations, since a recipient's messages on a channel
// are one conversation. Its goal is absolute: p99 <= 10 ms (its ratio to
// the first page is shown, with no goal).

// messagesDatasetVersion changes when the message generator changes.
const messagesDatasetVersion = 1

func runMessageList(ctx context.Context, c *config) ([]*row, error) {
	n := c.messages
	cached, err := messagesDB(ctx, c, n)
	if err != nil {
		return nil, err
	}
	sc, err := serveCopy(ctx, c, cached, "messages.sqlite")
	if err != nil {
		return nil, err
	}
	defer sc.close()
	base := sc.base + "/v1/messages?"
	client := newClient(1)
	defer client.CloseIdleConnections()

	// Walk the whole list once, 100 a page, keeping every cursor: it
	// proves that paging reaches every message once, and gives the deep
	// cursors.
	t := time.Now()
	var cursors []string
	seen, cursor := 0, ""
	for {
		q := "limit=100"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		got, next, err := listMessages(ctx, client, base+q)
		if err != nil {
			return nil, err
		}
		seen += got
		if next == "" {
			break
		}
		cursors = append(cursors, next)
		cursor = next
	}
	if seen != n {
		return nil, fmt.Errorf("walking GET /v1/messages listed %d messages, want %d", seen, n)
	}
	c.logf("messages: walked %d messages in %d pages in %s", seen, len(cursors)+1, time.Since(t).Round(time.Millisecond))
	deep := cursors[len(cursors)*9/10:]

	perRepeat := pick(c, 400, 60)
	name := "GET /v1/messages, " + commas(int64(n)) + " messages: page of 25 in the last tenth vs the first page"
	p50 := &row{figure: "8", name: name + ", p50", unit: "ms", goal: 0.5,
		baselineName: "the first page of the same list (no cursor), measured interleaved"}
	p99 := &row{figure: "8", name: name + ", p99", unit: "ms", goal: 0.5,
		absolute: func(v float64) (bool, string) { return v <= 10, "p99 <= 10 ms" }}
	toP99 := &row{figure: "8", name: "GET /v1/messages?to=, " + commas(int64(n)) + " messages: first page of 25 of one recipient (1 of 1,000, or one with none), p99", unit: "ms",
		baselineName: "the first page of the same list (no cursor), measured interleaved",
		absolute:     func(v float64) (bool, string) { return v <= 10, "p99 <= 10 ms" }}
	rng := rand.New(rand.NewPCG(8, 8))
	for range 20 { // warm up
		if _, _, err := listMessages(ctx, client, base+"limit=25"); err != nil {
			return nil, err
		}
	}
	for range c.repeat {
		var first, deepT, toT []time.Duration
		for i := range perRepeat {
			t := time.Now()
			if _, _, err := listMessages(ctx, client, base+"limit=25"); err != nil {
				return nil, err
			}
			first = append(first, time.Since(t))
			q := "limit=25&cursor=" + url.QueryEscape(deep[rng.IntN(len(deep))])
			t = time.Now()
			if _, _, err := listMessages(ctx, client, base+q); err != nil {
				return nil, err
			}
			deepT = append(deepT, time.Since(t))
			// Every other recipient has no message: the whole list
			// would be read to find none without an index.
			to := phone(rng.IntN(1000))
			if i%2 == 1 {
				to = phone(1000 + rng.IntN(1000))
			}
			t = time.Now()
			if _, _, err := listMessages(ctx, client, base+"limit=25&to="+url.QueryEscape(to)); err != nil {
				return nil, err
			}
			toT = append(toT, time.Since(t))
		}
		toP99.product = append(toP99.product, ms(percentile(toT, 99)))
		toP99.baseline = append(toP99.baseline, ms(percentile(first, 99)))
		p50.product = append(p50.product, ms(percentile(deepT, 50)))
		p50.baseline = append(p50.baseline, ms(percentile(first, 50)))
		p99.product = append(p99.product, ms(percentile(deepT, 99)))
		p99.baseline = append(p99.baseline, ms(percentile(first, 99)))
	}
	c.logf("messages: deep p50 %.2f ms, p99 %.2f ms; first p50 %.2f ms, p99 %.2f ms",
		median(p50.product), median(p99.product), median(p50.baseline), median(p99.baseline))
	return []*row{p50, p99, toP99}, nil
}

// listMessages runs GET /v1/messages and returns the page's size and its
// next cursor ("" at the end).
func listMessages(ctx context.Context, client *http.Client, u string) (int, string, error) {
	status, body, err := do(ctx, client, "GET", u, "")
	if err != nil {
		return 0, "", err
	}
	if status != 200 {
		return 0, "", fmt.Errorf("GET %s: status %d: %s", u, status, body)
	}
	var page struct {
		Data []struct {
			MessageID string `json:"message_id"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return 0, "", err
	}
	next := ""
	if page.NextCursor != nil {
		next = *page.NextCursor
	}
	return len(page.Data), next, nil
}

// messagesDB returns the path of a cached database with n generated
// messages in the bench workspace, generating it if needed.
func messagesDB(ctx context.Context, c *config, n int) (string, error) {
	return cachedDB(ctx, c, "messages", n, messagesDatasetVersion, func(path string) error { return buildMessagesDB(ctx, path, n) })
}

// buildMessagesDB creates the product's schema with the bench workspace,
// then bulk-inserts n messages (a second apart, to 1,000 recipients, both
// directions, delivered) in one transaction; the conversations trigger
// keeps the conversations as it does for the product's inserts.
func buildMessagesDB(ctx context.Context, path string, n int) error {
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	svc, err := messaging.New(st, noopProvider{}, nil)
	if err == nil {
		err = ensureWorkspace(ctx, svc)
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=OFF&_foreign_keys=1&_cache_size=-1000000")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	const batch = 40
	const cols = `id, workspace_id, conversation_id, channel, recipient, direction, status, failure_reason,
		type, text, media_url, caption, filename, template_name, language, components,
		idempotency_key, request_hash, provider_message_id, created_at, updated_at,
		due_at, lease_owner, attempts, last_error, trace_parent`
	ins, err := tx.PrepareContext(ctx, `INSERT INTO messages (`+cols+`) VALUES `+
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, 'whatsapp', ?, ?, 'delivered', '', 'text', ?, '', '', '', '', '', NULL, ?, '', ?, ?, ?, ?, '', 1, '', ''), ", batch), ", "))
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const layout = "2006-01-02T15:04:05.000000000Z"
	args := make([]any, 0, batch*11)
	convs := make([]string, 1000)
	for i := range convs {
		convs[i] = record.ConversationID(benchWorkspace, messaging.ChannelWhatsApp, phone(i))
	}
	for i := range n {
		created := datasetStart.Add(time.Duration(i) * time.Second)
		var u [16]byte
		binary.BigEndian.PutUint64(u[:8], uint64(created.UnixMilli())<<16|0x7000|uint64(rng.IntN(1<<12)))
		binary.BigEndian.PutUint64(u[8:], rng.Uint64()&0x3fffffffffffffff|0x8000000000000000)
		id := "msg_" + hex.EncodeToString(u[:])
		r := rng.IntN(len(convs))
		dir, idem := record.DirectionOutbound, ""
		if rng.IntN(3) == 0 {
			dir = record.DirectionInbound
			idem = "\x1finbound:whatsapp:wamid.bench." + id
		}
		sum := sha256.Sum256(u[:])
		ts := created.Format(layout)
		args = append(args, id, benchWorkspace, convs[r], phone(r), dir, fmt.Sprintf("Message %d", i), idem,
			"wamid.bench."+hex.EncodeToString(sum[:12]), ts, ts, ts)
		if len(args) == cap(args) {
			if _, err := ins.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("messages before %d: %w", i, err)
			}
			args = args[:0]
		}
	}
	if len(args) > 0 {
		rest := len(args) / 11
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (`+cols+`) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, 'whatsapp', ?, ?, 'delivered', '', 'text', ?, '', '', '', '', '', NULL, ?, '', ?, ?, ?, ?, '', 1, '', ''), ", rest), ", "), args...); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}
