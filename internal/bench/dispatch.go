package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// Figure 3: dispatch. The product is the dispatcher started by
// Service.Start (8 workers, the default) moving queued messages to sent
// with a provider that answers at once; every message is marked sent in the
// store (with its status event) before it counts. The baseline is a raw
// loop on the same database file: claim 16 due messages through the
// partial index messages_due with one UPDATE ... RETURNING, then mark each
// sent in a transaction of its own, with prepared statements on one
// connection. Per-sender pacing (DispatchOptions.PerSenderRate) is turned
// off: it is a deliberate limit, not a cost.
//
// Then with a provider that takes 50 ms per send, 2,000 messages must be
// sent within 1.5 x (2,000 x 50 ms / workers).

const (
	slowSend    = 50 * time.Millisecond
	slowWorkers = 32
)

func runDispatch(ctx context.Context, c *config) ([]*row, error) {
	n := pick(c, 10_000, 1_000)
	tmpl, err := queuedDB(ctx, c, "dispatch", n)
	if err != nil {
		return nil, err
	}
	r := &row{figure: "3a", name: "dispatch, queued -> sent, no-op provider, 8 workers", unit: "msg/s", higherBetter: true, goal: 1.5,
		baselineName: fmt.Sprintf("database/sql on one connection, same file of %d queued messages: claim 16 by the messages_due index (UPDATE ... RETURNING), then one UPDATE to sent per message, each in its own transaction, prepared statements", n)}
	err = c.measure(r, "dispatch", func(dir string, product bool) (float64, error) {
		path := filepath.Join(dir, "dispatch-run.sqlite")
		if err := copyDB(tmpl, path); err != nil {
			return 0, err
		}
		if !product {
			return claimAckRaw(ctx, path, n)
		}
		d, err := dispatchProduct(ctx, path, n, noopProvider{}, 8)
		return float64(n) / d.Seconds(), err
	})
	if err != nil {
		return nil, err
	}

	const slowN = 2000
	slowTmpl, err := queuedDB(ctx, c, "dispatch-slow", slowN)
	if err != nil {
		return nil, err
	}
	ideal := time.Duration(slowN) * slowSend / slowWorkers
	s := &row{figure: "3b", name: fmt.Sprintf("dispatch of %d with a 50 ms provider, %d workers", slowN, slowWorkers), unit: "s",
		goal: 1 / 1.5, baselineName: "the ideal time, 2,000 x 50 ms / workers (computed; goal: at most 1.5 x it)"}
	for range min(c.repeat, 3) {
		path := filepath.Join(c.workDir, "dispatch-slow-run.sqlite")
		if err := copyDB(slowTmpl, path); err != nil {
			return nil, err
		}
		d, err := dispatchProduct(ctx, path, slowN, sleepProvider{d: slowSend}, slowWorkers)
		if err != nil {
			return nil, err
		}
		c.logf("dispatch 50 ms: %s (ideal %s)", d, ideal)
		s.product = append(s.product, d.Seconds())
		s.baseline = append(s.baseline, ideal.Seconds())
		removeDB(path)
	}
	return []*row{r, s}, nil
}

// sleepProvider accepts every message after a delay, on Meta's channels.
type sleepProvider struct {
	metaChannels
	d time.Duration
}

func (p sleepProvider) Send(ctx context.Context, _ *messaging.ChannelSender, _ *messaging.Message) (*messaging.SendReceipt, error) {
	t := time.NewTimer(p.d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	return &messaging.SendReceipt{ProviderMessageID: record.NewID("slow")}, nil
}

// queuedDB returns a database file holding n queued messages of the bench
// workspace, accepted through Messages.Send.
func queuedDB(ctx context.Context, c *config, name string, n int) (string, error) {
	dir := filepath.Join(c.workDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	st, svc, err := newStoreService(ctx, dir, noopProvider{}, nil)
	if err != nil {
		return "", err
	}
	ms := svc.Workspace(benchWorkspace).Messages
	err = each(ctx, acceptCallers, n, func(ctx context.Context, k int) error {
		_, err := ms.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: phone(k), Type: "text", Text: "Your order A-1042 has shipped."})
		return err
	})
	if err != nil {
		_ = st.Close()
		return "", err
	}
	return filepath.Join(dir, "db.sqlite"), st.Close()
}

// copyDB copies a closed SQLite database file (no WAL) to dst.
func copyDB(src, dst string) error {
	removeDB(dst)
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// removeDB removes a database file and its WAL and shared-memory files.
func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
}

// dispatchProduct starts a service on path and returns the time until n
// messages are recorded sent.
func dispatchProduct(ctx context.Context, path string, n int, p messaging.Provider, workers int) (time.Duration, error) {
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	svc, err := messaging.New(st, p, dispatchOptions(workers))
	if err != nil {
		return 0, err
	}
	return dispatchService(ctx, svc, n)
}

// dispatchOptions are the options of a service dispatching with workers
// workers and no per-sender pacing.
func dispatchOptions(workers int) *messaging.Options {
	return &messaging.Options{Dispatch: messaging.DispatchOptions{Workers: workers, PerSenderRate: -1}}
}

// dispatchService starts svc, whose store holds n queued messages, and
// returns the time until the n messages are recorded sent; it closes svc.
func dispatchService(ctx context.Context, svc *messaging.Service, n int) (time.Duration, error) {
	var sent atomic.Int64
	done := make(chan struct{})
	svc.Subscribe(func(_ context.Context, e *messaging.Event) {
		if e.Data.(messaging.StatusEventData).Status == messaging.StatusSent && sent.Add(1) == int64(n) {
			close(done)
		}
	})
	start := time.Now()
	if err := svc.Start(ctx); err != nil {
		return 0, err
	}
	defer svc.Close(context.Background())
	select {
	case <-done:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(5 * time.Minute):
		return 0, fmt.Errorf("dispatch: %d of %d sent after 5 minutes", sent.Load(), n)
	}
	return time.Since(start), nil
}

// claimAckRaw is the baseline of dispatch: a hand-written claim-and-ack
// loop. It returns messages per second.
func claimAckRaw(ctx context.Context, path string, n int) (float64, error) {
	db, err := openRaw(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	claim, err := db.PrepareContext(ctx, `UPDATE messages SET lease_owner = 'raw', due_at = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM messages WHERE status = 'queued' AND due_at <= ? ORDER BY due_at, id LIMIT 16) RETURNING id`)
	if err != nil {
		return 0, err
	}
	defer claim.Close()
	ack, err := db.PrepareContext(ctx, `UPDATE messages SET status = 'sent', provider_message_id = ?, lease_owner = '', updated_at = ?
		WHERE id = ? AND status = 'queued'`)
	if err != nil {
		return 0, err
	}
	defer ack.Close()
	const layout = "2006-01-02T15:04:05.000000000Z"
	start := time.Now()
	done := 0
	ids := make([]string, 0, 16)
	for done < n {
		now := time.Now().UTC()
		rows, err := claim.QueryContext(ctx, now.Add(time.Minute).Format(layout), now.Format(layout))
		if err != nil {
			return 0, err
		}
		ids = ids[:0]
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return 0, err
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
		if len(ids) == 0 {
			return 0, fmt.Errorf("raw claim: nothing left after %d of %d", done, n)
		}
		for _, id := range ids {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return 0, err
			}
			if _, err := tx.Stmt(ack).ExecContext(ctx, record.NewID("raw"), time.Now().UTC().Format(layout), id); err != nil {
				_ = tx.Rollback()
				return 0, err
			}
			if err := tx.Commit(); err != nil {
				return 0, err
			}
		}
		done += len(ids)
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
