package pgstore

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging/internal/workqueue"
)

// cacheChannel is the LISTEN channel of the notices sent by the triggers
// of migrations 0023 to 0025 and 0034 when an API key, a workspace, its
// channels or what a send reads of a channel connection change (a key's
// LastUsedAt alone excepted); the payload is the schema.
const cacheChannel = "messaging_cache"

// listenerName is the application_name of ListenChanges' connection, as
// pg_stat_activity shows it.
const listenerName = "messaging change listener"

// ListenChanges implements messaging.ChangeListener with LISTEN/NOTIFY on
// a connection of its own (outside the pool, with the pool's settings):
// changed is called once each change to an API key, a workspace, its
// channels (connecting or disconnecting one) or what a send reads of a
// channel connection (its account, token, status and generation) of the
// store's schema commits, made by any instance (migrations 0023 to 0025
// and 0034). The record of a key's use (APIKeyTouch, which sets
// LastUsedAt only) and of a template sync (ConnectionUpdate with SyncedAt
// or SyncError only) change nothing a Service caches and call nothing.
// It is also called after every (re)connection, since
// notices sent while no connection listened are lost. A lost connection
// is retried with an exponential backoff (100 ms to 5 s). It returns
// ctx's error once ctx is done.
func (s *Store) ListenChanges(ctx context.Context, changed func()) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval, b.MaxElapsedTime = 100*time.Millisecond, 5*time.Second, 0
	for {
		listened := s.listen(ctx, changed)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if listened {
			b.Reset()
		}
		if err := workqueue.RealSleep(ctx, b.NextBackOff()); err != nil {
			return err
		}
	}
}

// listen listens on one connection until it fails or ctx is done, and
// reports whether it got as far as listening.
func (s *Store) listen(ctx context.Context, changed func()) bool {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenerName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return false
	}
	if _, err := conn.Exec(ctx, "LISTEN "+cacheChannel); err != nil {
		return false
	}
	changed() // what changed while nothing listened
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if n.Payload == schema {
			changed()
		}
	}
}
