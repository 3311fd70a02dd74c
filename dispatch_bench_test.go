package messaging_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// noopProvider accepts every message at once.
type noopProvider struct {
	metaChannels
	n atomic.Int64
}

func (p *noopProvider) Send(context.Context, *messaging.ChannelSender, *messaging.Message) (*messaging.SendReceipt, error) {
	return &messaging.SendReceipt{ProviderMessageID: fmt.Sprintf("noop.%d", p.n.Add(1))}, nil
}

// queueMessages stores n queued messages through the service.
func queueMessages(b *testing.B, svc *messaging.Service, n int) {
	b.Helper()
	ws := svc.Workspace("acme")
	for i := range n {
		if _, err := ws.Messages.Send(context.Background(), &messaging.SendParams{Channel: "whatsapp", To: fmt.Sprintf("+2547123%05d", i%100000), Type: "text", Text: "hello"}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchService(b *testing.B, path string) (*messaging.Service, *sqlitestore.Store) {
	b.Helper()
	st, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := messaging.New(st, &noopProvider{}, &messaging.Options{Dispatch: messaging.DispatchOptions{PerSenderRate: -1, Workers: 8}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		b.Fatal(err)
	}
	return svc, st
}

// BenchmarkDispatch measures queued -> sent through the dispatcher with a
// no-op provider on SQLite (WAL, synchronous=FULL), in messages per second.
func BenchmarkDispatch(b *testing.B) {
	svc, st := benchService(b, filepath.Join(b.TempDir(), "db.sqlite"))
	defer st.Close()
	queueMessages(b, svc, b.N)
	b.ResetTimer()
	start := time.Now()
	n, err := svc.DispatchDue(context.Background())
	if err != nil || n != b.N {
		b.Fatalf("dispatched %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkRawClaimAck is the baseline of BenchmarkDispatch: the same
// database and schema, driven by hand-written SQL: claim a batch through the
// queued index, then mark each message sent in its own transaction.
func BenchmarkRawClaimAck(b *testing.B) {
	path := filepath.Join(b.TempDir(), "db.sqlite")
	svc, st := benchService(b, path)
	queueMessages(b, svc, b.N)
	st.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=5000&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	done := 0
	for done < b.N {
		rows, err := db.QueryContext(ctx, `UPDATE messages SET lease_owner = 'raw', due_at = ?, attempts = attempts + 1
			WHERE id IN (SELECT id FROM messages WHERE status = 'queued' AND due_at <= ? ORDER BY due_at, id LIMIT 16) RETURNING id`,
			time.Now().Add(time.Minute).UTC().Format("2006-01-02T15:04:05.000000000Z"), time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z"))
		if err != nil {
			b.Fatal(err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				b.Fatal(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) == 0 {
			b.Fatalf("claimed nothing after %d", done)
		}
		for i, id := range ids {
			if _, err := db.ExecContext(ctx, `UPDATE messages SET status = 'sent', provider_message_id = ?, lease_owner = '', updated_at = ? WHERE id = ? AND status = 'queued'`,
				fmt.Sprintf("raw.%d.%d", done, i), time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z"), id); err != nil {
				b.Fatal(err)
			}
		}
		done += len(ids)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// senderProvider is noopProvider that, like metaprovider, needs the
// workspace's connection (its token unsealed by the dispatcher) for every
// send.
type senderProvider struct {
	noopProvider
}

func (p *senderProvider) Send(ctx context.Context, s *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	if s == nil || s.AccessToken == "" {
		return nil, fmt.Errorf("no sender")
	}
	return p.noopProvider.Send(ctx, s, m)
}

// BenchmarkDispatchWithConnection is BenchmarkDispatch with a provider
// that needs its sender, the workspace's stored connection, on every send
// (the dispatcher's store read and AES-GCM open): the cost of stored
// credentials, as a ratio to BenchmarkDispatch.
func BenchmarkDispatchWithConnection(b *testing.B) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "db.sqlite"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	key := make([]byte, 32)
	svc, err := messaging.New(st, &senderProvider{}, &messaging.Options{SecretKey: key, Dispatch: messaging.DispatchOptions{PerSenderRate: -1, Workers: 8}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme"}); err != nil {
		b.Fatal(err)
	}
	if _, err := connect(ctx, svc, &connectParams{WorkspaceID: "acme", Channel: "whatsapp", AccountID: "1234", WABAID: "5678", AccessToken: "EAAGbenchmarkToken"}); err != nil {
		b.Fatal(err)
	}
	queueMessages(b, svc, b.N)
	b.ResetTimer()
	start := time.Now()
	n, err := svc.DispatchDue(ctx)
	if err != nil || n != b.N {
		b.Fatalf("dispatched %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
