package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
)

// Figure 1: in-process accept. The product is Messages.Send of a text
// message with an idempotency key on sqlitestore (WAL, synchronous=FULL, a
// file on disk) from 8 concurrent callers; each call returns after the
// transaction holding its message committed. The baseline is the best a
// plain database/sql program does on the same schema, indexes and PRAGMAs
// with one row per transaction: one connection, a prepared INSERT of the
// identical row, BEGIN IMMEDIATE / INSERT / COMMIT per row, fed by the same
// 8 callers.

const acceptCallers = 8

// noopProvider accepts every message at once, on Meta's channels.
type noopProvider struct{ metaChannels }

// metaChannels makes a bench provider serve Meta's channels.
type metaChannels struct{}

func (metaChannels) Channels() []messaging.ChannelSpec { return metaprovider.ChannelSpecs() }

func (noopProvider) Send(context.Context, *messaging.ChannelSender, *messaging.Message) (*messaging.SendReceipt, error) {
	return &messaging.SendReceipt{ProviderMessageID: record.NewID("noop")}, nil
}

func runAccept(ctx context.Context, c *config) ([]*row, error) {
	d := pick(c, time.Second, 300*time.Millisecond)
	r := &row{figure: "1", name: "in-process accept, Messages.Send, 8 callers", unit: "msg/s", higherBetter: true, goal: 3,
		baselineName: "database/sql on one connection: prepared INSERT of the identical row, one row per BEGIN IMMEDIATE/COMMIT, same schema, indexes and PRAGMAs, same 8 callers"}
	err := c.measure(r, "accept", func(dir string, product bool) (float64, error) {
		if product {
			return acceptProduct(ctx, dir, d)
		}
		return acceptRaw(ctx, dir, d)
	})
	if err != nil {
		return nil, err
	}
	return []*row{r}, nil
}

func acceptProduct(ctx context.Context, dir string, d time.Duration) (float64, error) {
	st, svc, err := newStoreService(ctx, dir, noopProvider{}, nil)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	ms := svc.Workspace(benchWorkspace).Messages
	send := func(ctx context.Context, w, i int) error {
		res, err := ms.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: phone(w*1_000_000 + i), Type: "text",
			Text: "Your order A-1042 has shipped.", IdempotencyKey: fmt.Sprintf("order-%d-%d", w, i)})
		if err != nil {
			return err
		}
		if res.Replayed {
			return fmt.Errorf("send %d/%d replayed", w, i)
		}
		return nil
	}
	// Warm up (statement caches, page cache) before measuring.
	if _, err := loop(ctx, acceptCallers, d/10, func(ctx context.Context, w, i int) error { return send(ctx, w+100, i) }); err != nil {
		return 0, err
	}
	return loop(ctx, acceptCallers, d, send)
}

// messageColumns are the columns of a messages row, as sqlitestore writes
// them.
const messageColumns = `id, workspace_id, conversation_id, channel, recipient, direction, status, failure_reason,
	type, text, media_url, caption, filename, template_name, language, components,
	idempotency_key, request_hash, provider_message_id, created_at, updated_at,
	due_at, lease_owner, attempts, last_error`

func acceptRaw(ctx context.Context, dir string, d time.Duration) (float64, error) {
	// The schema, indexes and workspace row come from the product itself.
	st, _, err := newStoreService(ctx, dir, noopProvider{}, nil)
	if err != nil {
		return 0, err
	}
	if err := st.Close(); err != nil {
		return 0, err
	}
	db, err := openRaw(ctx, filepath.Join(dir, "db.sqlite"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	ins, err := db.PrepareContext(ctx, `INSERT INTO messages (`+messageColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	insert := func(ctx context.Context, w, i int) error {
		to := phone(w*1_000_000 + i)
		key := fmt.Sprintf("order-%d-%d", w, i)
		sum := sha256.Sum256([]byte(key))
		now := time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z")
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		_, err = tx.Stmt(ins).ExecContext(ctx, record.NewID("msg"), benchWorkspace, record.ConversationID(benchWorkspace, "whatsapp", to),
			"whatsapp", to, "outbound", "queued", "", "text", "Your order A-1042 has shipped.", "", "", "", "", "", sql.NullString{},
			key, hex.EncodeToString(sum[:]), "", now, now, now, "", 0, "")
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	if _, err := loop(ctx, acceptCallers, d/10, func(ctx context.Context, w, i int) error { return insert(ctx, w+100, i) }); err != nil {
		return 0, err
	}
	return loop(ctx, acceptCallers, d, insert)
}
