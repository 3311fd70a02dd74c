package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// naiveService is the baseline of the capacity figure: a durable
// messaging service written the plain way, doing the product's lifecycle
// with nothing clever. POST /v1/messages checks a bearer key (constant
// time), decodes the JSON and INSERTs the message, committed on its own,
// into a SQLite file with the PRAGMAs of sqlitestore's writer (WAL,
// synchronous=FULL: openRaw), before it answers 201. One worker loop
// claims queued rows (UPDATE ... RETURNING, 16 at a time), "sends" each
// (a no-op), marks it sent in a commit of its own and POSTs one signed
// webhook (HMAC-SHA256, as the product signs) for the change; delivered
// and read come the fake provider's delays later, each its own commit and
// its own POST to the same receiver.
type naiveService struct {
	db     *sql.DB
	srv    *http.Server
	url    string
	hook   string
	client *http.Client
	secret []byte
	key    []byte
	// deliveredAfter and readAfter are the delays of the reports.
	deliveredAfter, readAfter time.Duration
	wake                      chan struct{}
	cancel                    context.CancelFunc
	wg                        sync.WaitGroup
}

const naiveSchema = `
CREATE TABLE messages (
	id INTEGER PRIMARY KEY,
	channel TEXT NOT NULL,
	recipient TEXT NOT NULL,
	type TEXT NOT NULL,
	text TEXT NOT NULL,
	status TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX messages_status ON messages (status, id);`

// startNaive opens a new database in dir, serves the naive service on a
// loopback port and starts its worker; it POSTs webhooks to hook.
func startNaive(ctx context.Context, dir, hook string, deliveredAfter, readAfter time.Duration) (*naiveService, error) {
	db, err := openRaw(ctx, filepath.Join(dir, "naive.sqlite"))
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, naiveSchema); err != nil {
		_ = db.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	n := &naiveService{db: db, hook: hook, key: []byte(benchKey), secret: []byte("naive-webhook-secret"),
		deliveredAfter: deliveredAfter, readAfter: readAfter, wake: make(chan struct{}, 1),
		client: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		url:    "http://" + ln.Addr().String() + "/v1/messages"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", n.accept)
	n.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = n.srv.Serve(ln) }()
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.cancel = cancel
	n.wg.Add(1)
	go n.work(wctx)
	return n, nil
}

// naiveRequest is the body of POST /v1/messages.
type naiveRequest struct {
	Channel string `json:"channel"`
	To      string `json:"to"`
	Type    string `json:"type"`
	Text    string `json:"text"`
}

func (n *naiveService) accept(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(key), n.key) != 1 {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	var m naiveRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m); err != nil || m.Channel == "" || m.To == "" || m.Type != "text" || m.Text == "" {
		http.Error(w, `{"error":"validation_error"}`, http.StatusBadRequest)
		return
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	res, err := n.db.ExecContext(r.Context(), `INSERT INTO messages (channel, recipient, type, text, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?)`,
		m.Channel, m.To, m.Type, m.Text, now, now)
	if err != nil {
		http.Error(w, `{"error":"internal_error"}`, http.StatusInternalServerError)
		return
	}
	id, _ := res.LastInsertId()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"id":"msg_%d","status":"queued","created_at":%q}`, id, now)
}

// work claims queued messages until ctx ends: each is sent (a no-op),
// marked sent and reported, and its delivered and read reports are
// scheduled.
func (n *naiveService) work(ctx context.Context) {
	defer n.wg.Done()
	for ctx.Err() == nil {
		ids, err := n.claim(ctx)
		if err != nil || len(ids) == 0 {
			select {
			case <-ctx.Done():
			case <-n.wake:
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for _, id := range ids {
			if err := n.setStatus(ctx, id, "sent"); err != nil {
				continue
			}
			n.wg.Add(1)
			time.AfterFunc(n.deliveredAfter, func() {
				defer n.wg.Done()
				if n.setStatus(ctx, id, "delivered") == nil {
					n.wg.Add(1)
					time.AfterFunc(n.readAfter, func() {
						defer n.wg.Done()
						_ = n.setStatus(ctx, id, "read")
					})
				}
			})
		}
	}
}

// claim marks up to 16 queued messages sending and returns their ids.
func (n *naiveService) claim(ctx context.Context) ([]int64, error) {
	rows, err := n.db.QueryContext(ctx, `UPDATE messages SET status = 'sending' WHERE id IN (SELECT id FROM messages WHERE status = 'queued' ORDER BY id LIMIT 16) RETURNING id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// setStatus records status in a commit of its own and POSTs the change.
func (n *naiveService) setStatus(ctx context.Context, id int64, status string) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if _, err := n.db.ExecContext(ctx, `UPDATE messages SET status = ?, updated_at = ? WHERE id = ?`, status, now, id); err != nil {
		return err
	}
	return n.post(ctx, id, status, now)
}

// post sends the webhook of a status change, signed as Standard Webhooks
// sign (HMAC-SHA256 of id.timestamp.body).
func (n *naiveService) post(ctx context.Context, id int64, status, at string) error {
	evID := fmt.Sprintf("evt_%d_%s", id, status)
	body := fmt.Sprintf(`{"id":%q,"type":"message.status_updated","created_at":%q,"data":{"message_id":"msg_%d","status":%q,"updated_at":%q}}`,
		evID, at, id, status, at)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, n.secret)
	mac.Write([]byte(evID + "." + ts + "." + body))
	req, err := http.NewRequestWithContext(ctx, "POST", n.hook, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", evID)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// close stops serving, waits for the worker and the scheduled reports,
// and closes the database.
func (n *naiveService) close() {
	_ = n.srv.Close()
	n.cancel()
	n.wg.Wait()
	n.client.CloseIdleConnections()
	_ = n.db.Close()
}
