package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
	"github.com/ujumbe/messaging/store/internal/statushistory"
	"github.com/ujumbe/messaging/store/internal/storedjson"
)

// messageCols are the columns of a message, in scanMessage's order.
const messageCols = sqlrows.MessageColumns

// Statements of the hot path (send, claim, status change). pgx prepares
// and caches them per connection.
var (
	qMessageInsert = `INSERT INTO messages (` + sqlrows.MessageInsertColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
			$17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)
		ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key <> '' DO NOTHING
		RETURNING ` + messageCols
	// qMessageSend is qMessageInsert of an outbound message, unless its
	// recipient ($5) opted out of its channel ($4) in its workspace ($2):
	// the checks and the insert are one statement.
	qMessageSend = `INSERT INTO messages (` + sqlrows.MessageInsertColumns + `)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
			$17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28
		WHERE NOT EXISTS (SELECT 1 FROM suppressions WHERE workspace_id = $2 AND recipient = $5 AND channel = $4 AND opted_out)
		ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key <> '' DO NOTHING
		RETURNING ` + messageCols
	// qOptedOutAt is when a recipient opted out of a channel.
	qOptedOutAt    = `SELECT updated_at FROM suppressions WHERE workspace_id = $1 AND recipient = $2 AND channel = $3 AND opted_out`
	qMessageByWSID = `SELECT ` + messageCols + ` FROM messages WHERE id = $1 AND workspace_id = $2`
	qMessageByIdem = `SELECT ` + messageCols + ` FROM messages WHERE workspace_id = $1 AND idempotency_key = $2 AND idempotency_key <> ''`
	// qMessageClaim picks the oldest due queued messages through the
	// partial index messages_due, skipping rows another claimer has
	// locked, and leases them in the same statement. A row claimed and
	// committed by another claimer after this statement's snapshot is
	// re-checked under its lock and skipped: its due_at moved to the end
	// of that lease.
	qMessageClaim = `WITH c AS (
			SELECT id AS claim_id FROM messages
			WHERE status = 'queued' AND due_at <= $1
			ORDER BY due_at, id
			LIMIT $2
			FOR UPDATE SKIP LOCKED)
		UPDATE messages SET lease_owner = $3, due_at = $4, attempts = attempts + 1,
			unconfirmed_since = COALESCE(unconfirmed_since, $1)
		FROM c WHERE id = c.claim_id
		RETURNING ` + messageCols
	// qMessageSetStatus changes the status of a message whose status is in
	// $7 (as read with the row locked FOR UPDATE, so it is the version the
	// update replaces), queues the change's event ($9 to $15, none when
	// $10 is NULL) for the enabled endpoints of the workspace that
	// subscribe to its type, and returns the row after the change and
	// whether deliveries were queued: one
	// statement, so that a batch of changes is one round trip. When $16
	// (MessageStatusParams.Unclaimed) is true, a leased message or one
	// with an unconfirmed hand-over is not changed either.
	qMessageSetStatus = `WITH u AS (
			UPDATE messages m SET status = $3,
				failure_reason = CASE WHEN $4 <> '' THEN $4 ELSE m.failure_reason END,
				provider_message_id = CASE WHEN $5 <> '' THEN $5 ELSE m.provider_message_id END,
				updated_at = $6, lease_owner = '', unconfirmed_since = NULL, history = m.history || $8
			FROM (SELECT id, status, lease_owner, unconfirmed_since FROM messages WHERE id = $1 AND workspace_id = $2 FOR UPDATE) old
			WHERE m.id = old.id AND old.status = ANY($7::text[])
				AND (NOT $16::boolean OR (old.lease_owner = '' AND old.unconfirmed_since IS NULL))
			RETURNING ` + qualify("m", messageCols) + `),
		q AS (
			INSERT INTO webhook_deliveries
				(endpoint_id, workspace_id, message_id, event_id, payload, state, due_at, created_at, event_type, trace_parent)
			SELECT e.id, e.workspace_id, $9, $10, $11, 'pending', $12, $12, $13, $14 FROM webhook_endpoints e
			WHERE $10::text IS NOT NULL AND EXISTS (SELECT 1 FROM u) AND e.workspace_id = $15 AND e.disabled_at IS NULL
				AND (cardinality(e.events) = 0 OR $13 = ANY(e.events))
			ORDER BY e.created_at, e.id
			RETURNING 1)
		SELECT u.*, EXISTS (SELECT 1 FROM q) FROM u`
	// qQueueEvent queues an event for the enabled endpoints of its
	// workspace that subscribe to its type ($6).
	qQueueEvent = `INSERT INTO webhook_deliveries
			(endpoint_id, workspace_id, message_id, event_id, payload, state, due_at, created_at, event_type, trace_parent)
		SELECT id, workspace_id, $1, $2, $3, 'pending', $4, $4, $6, $7 FROM webhook_endpoints
		WHERE workspace_id = $5 AND disabled_at IS NULL AND (cardinality(events) = 0 OR $6 = ANY(events))
		ORDER BY created_at, id`
)

// WebhookQueueEvent implements driver.Store.
func (s *Store) WebhookQueueEvent(ctx context.Context, p *driver.WebhookQueueParams) (bool, error) {
	queued, err := queueEndpointEvent(writeCtx(ctx), s.pool, p)
	return queued, interpretError(err)
}

// queueEndpointEvent queues p.Event for the one endpoint p.EndpointID
// through q, unless the endpoint does not exist or is disabled (queued
// false). The error is not interpreted.
func queueEndpointEvent(ctx context.Context, q querier, p *driver.WebhookQueueParams) (queued bool, err error) {
	ev := p.Event
	tag, err := q.Exec(ctx, `INSERT INTO webhook_deliveries
			(endpoint_id, workspace_id, message_id, event_id, payload, state, due_at, created_at, event_type, trace_parent)
		SELECT id, workspace_id, $1, $2, $3, 'pending', $4, $4, $5, $8 FROM webhook_endpoints
		WHERE id = $6 AND workspace_id = $7 AND disabled_at IS NULL`,
		ev.MessageID, ev.ID, ev.Payload, ts(ev.CreatedAt), ev.Type, p.EndpointID, ev.WorkspaceID, ev.TraceParent)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// messageDest returns the scan destinations of a message's columns and a
// function completing m after the scan.
func messageDest(m *messaging.Message) ([]any, func() error) {
	var comps, content *string
	var created, updated, due int64
	var unconfirmed, read, sendAt *int64
	var history string
	dest := []any{&m.ID, &m.WorkspaceID, &m.ConversationID, &m.Channel, &m.To, &m.Direction, &m.Status, &m.FailureReason,
		&m.Type, &m.Text, &m.MediaURL, &m.Caption, &m.Filename, &m.TemplateName, &m.Language, &comps,
		&m.IdempotencyKey, &m.RequestHash, &m.ProviderMessageID, &created, &updated,
		&due, &m.LeaseOwner, &m.Attempts, &m.LastError, &m.TraceParent, &content, &sendAt, &history, &unconfirmed, &read}
	return dest, func() error {
		var err, herr, cerr error
		m.Components, err = storedjson.DecodeSendComponents(comps)
		m.Content, m.Outbound, cerr = storedjson.DecodeContent(content)
		m.History, herr = statushistory.Decode(history)
		m.CreatedAt, m.UpdatedAt, m.DueAt, m.UnconfirmedSince = fromTS(created), fromTS(updated), fromTS(due), fromTSPtr(unconfirmed)
		m.ReadAt, m.SendAt = fromTSPtr(read), fromTSPtr(sendAt)
		return errors.Join(err, cerr, herr)
	}
}

func scanMessage(row pgx.Row) (*messaging.Message, error) {
	var m messaging.Message
	dest, finish := messageDest(&m)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return &m, finish()
}

// MessageCreate implements driver.Store. The insert, the idempotency
// check and the recipient's opt-out check are one statement (qMessageSend:
// INSERT ... SELECT ... WHERE NOT EXISTS an opt-out ... ON CONFLICT DO
// NOTHING on the unique index of (workspace_id, idempotency_key)), which
// waits for a concurrent insert of the same key to commit; when it
// inserts nothing, the existing message is read, or else the opt-out.
// When neither is there any more (an opt-in or a deletion came between),
// the insert is tried again. ErrNotFound if the workspace does not
// exist; ErrConflict if the id is taken.
func (s *Store) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	ctx = writeCtx(ctx)
	args, err := sqlrows.MessageInsertArgs(m, ts)
	if err != nil {
		return nil, false, interpretError(err)
	}
	for range maxTxAttempts {
		var stored *messaging.Message
		if m.Fallback != nil {
			stored, err = s.createWithFallback(ctx, m, args)
		} else {
			stored, err = scanMessage(s.pool.QueryRow(ctx, qMessageSend, args...))
		}
		if err == nil {
			return stored, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, false, interpretError(err)
		}
		if m.IdempotencyKey != "" {
			stored, err = scanMessage(s.pool.QueryRow(ctx, qMessageByIdem, m.WorkspaceID, m.IdempotencyKey))
			if err == nil {
				return stored, false, nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return nil, false, interpretError(err)
			}
		}
		var at int64
		err = s.pool.QueryRow(ctx, qOptedOutAt, m.WorkspaceID, m.To, m.Channel).Scan(&at)
		if err == nil {
			return nil, false, &driver.OptedOutError{At: fromTS(at)}
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, false, interpretError(err)
		}
	}
	return nil, false, fmt.Errorf("pgstore: message %s: neither inserted, nor held by its idempotency key, nor refused by an opt-out in %d attempts", m.ID, maxTxAttempts)
}

// MessageGet implements driver.Store.
func (s *Store) MessageGet(ctx context.Context, workspaceID, id string) (*messaging.Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, qMessageByWSID, id, workspaceID))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// MessageGetByIdempotencyKey implements driver.Store.
func (s *Store) MessageGetByIdempotencyKey(ctx context.Context, workspaceID, key string) (*messaging.Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, qMessageByIdem, workspaceID, key))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// queueEvent queues ev's deliveries in tx (qQueueEvent); a nil ev queues
// nothing.
func queueEvent(ctx context.Context, tx pgx.Tx, ev *driver.EventRecord) error {
	if ev == nil {
		return nil
	}
	_, err := tx.Exec(ctx, qQueueEvent, ev.MessageID, ev.ID, ev.Payload, ts(ev.CreatedAt), ev.WorkspaceID, ev.Type, ev.TraceParent)
	return err
}

// MessageUpdateStatuses implements driver.Store: each change is one
// statement (qMessageSetStatus: the check of p.From, the update, which
// locks the row, and the deliveries of p.Event), and the statements of
// all the changes are sent at once, as one batch, which PostgreSQL runs
// as one (implicit) transaction: one round trip for the whole batch. A
// batch PostgreSQL aborted to resolve a deadlock runs again, as a
// transaction does (see tx). FailureReason and ProviderMessageID are only
// written when non-empty, and UpdatedAt becomes p.At. The changes that
// changed nothing are read afterwards (the message as it is now).
func (s *Store) MessageUpdateStatuses(ctx context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	ctx = writeCtx(ctx)
	var out []driver.MessageStatusResult
	err := runAgainOnDeadlock(ctx, func() (err error) {
		out, err = s.updateStatuses(ctx, ps)
		return err
	})
	if err != nil {
		return nil, interpretError(err)
	}
	for i, p := range ps {
		if out[i].Changed {
			continue
		}
		cur, err := scanMessage(s.pool.QueryRow(ctx, qMessageByWSID, p.ID, p.WorkspaceID))
		if out[i], err = sqlrows.StatusResult(cur, false, err, pgx.ErrNoRows); err != nil {
			return nil, interpretError(err)
		}
	}
	return out, nil
}

// updateStatuses sends the changes ps as one batch and returns, for each,
// the message after it, or Changed false when it changed nothing. The
// error is not interpreted.
func (s *Store) updateStatuses(ctx context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	b := &pgx.Batch{}
	for _, p := range ps {
		args := []any{p.ID, p.WorkspaceID, p.To, p.FailureReason, p.ProviderMessageID, ts(p.At),
			nonNil(p.From), statushistory.Entry(p.To, p.At), nil, nil, nil, nil, nil, nil, nil, p.Unclaimed}
		if ev := p.Event; ev != nil {
			args[8], args[9], args[10], args[11], args[12], args[13], args[14] = ev.MessageID, ev.ID, ev.Payload, ts(ev.CreatedAt), ev.Type, ev.TraceParent, ev.WorkspaceID
		}
		b.Queue(qMessageSetStatus, args...)
	}
	br := s.pool.SendBatch(ctx, b)
	out := make([]driver.MessageStatusResult, len(ps))
	for i := range ps {
		var a messaging.Message
		var queued bool
		dest, finish := messageDest(&a)
		err := br.QueryRow().Scan(append(dest, &queued)...)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err == nil {
			err = finish()
		}
		if err != nil {
			_ = br.Close()
			return nil, err
		}
		out[i] = driver.MessageStatusResult{Message: &a, Changed: true, Queued: queued}
	}
	return out, br.Close()
}

// MessageClaim implements driver.Store with SELECT ... FOR UPDATE SKIP
// LOCKED through the partial index messages_due (see qMessageClaim), so any
// number of dispatchers in any number of processes share the queue without
// two of them holding the same message.
func (s *Store) MessageClaim(ctx context.Context, p *driver.MessageClaimParams) ([]*messaging.Message, error) {
	ctx = writeCtx(ctx)
	out, err := queryAll(ctx, s.pool, scanMessage, qMessageClaim, ts(p.Now), p.Limit, p.Owner, ts(p.Now.Add(p.Lease)))
	return out, interpretError(err)
}

// MessageRelease implements driver.Store.
func (s *Store) MessageRelease(ctx context.Context, p *driver.MessageReleaseParams) (bool, error) {
	ctx = writeCtx(ctx)
	var released bool
	err := s.pool.QueryRow(ctx, `WITH u AS (
			UPDATE messages SET due_at = $3, last_error = $4, lease_owner = '', unconfirmed_since = $6,
				attempts = CASE WHEN $7 AND attempts > 0 THEN attempts - 1 ELSE attempts END
			WHERE id = $1 AND workspace_id = $2 AND status = 'queued' AND lease_owner = $5
			RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM u) FROM messages WHERE id = $1 AND workspace_id = $2`,
		p.ID, p.WorkspaceID, ts(p.DueAt), p.LastError, p.Owner, tsPtr(p.Unconfirmed), p.Untried).Scan(&released)
	if err != nil {
		return false, interpretError(err)
	}
	return released, nil
}

// MessageGetByProviderID implements driver.Store.
func (s *Store) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, `SELECT `+messageCols+` FROM messages
		WHERE provider_message_id = $1 AND provider_message_id <> '' LIMIT 1`, id))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

const endpointCols = `id, workspace_id, url, events, description, secret_sealed, previous_secret_sealed, previous_secret_expires_at,
	disabled_at, disabled_reason, created_at`

func scanEndpoint(row pgx.Row) (*messaging.WebhookEndpoint, error) {
	var e messaging.WebhookEndpoint
	var disabled, prevExpires *int64
	var created int64
	if err := row.Scan(&e.ID, &e.WorkspaceID, &e.URL, &e.Events, &e.Description, &e.SecretSealed, &e.PreviousSecretSealed, &prevExpires,
		&disabled, &e.DisabledReason, &created); err != nil {
		return nil, err
	}
	if len(e.Events) == 0 {
		e.Events = nil
	}
	e.DisabledAt, e.CreatedAt, e.PreviousSecretExpiresAt = fromTSPtr(disabled), fromTS(created), fromTSPtr(prevExpires)
	return &e, nil
}

// WebhookEndpointCreate implements driver.Store.
func (s *Store) WebhookEndpointCreate(ctx context.Context, e *messaging.WebhookEndpoint) error {
	ctx = writeCtx(ctx)
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.ID, e.WorkspaceID, e.URL, nonNil(e.Events), e.Description, nonNil(e.SecretSealed), e.PreviousSecretSealed, tsPtr(e.PreviousSecretExpiresAt),
		tsPtr(e.DisabledAt), e.DisabledReason, ts(e.CreatedAt))
	return interpretError(err)
}

// WebhookEndpointGet implements driver.Store.
func (s *Store) WebhookEndpointGet(ctx context.Context, workspaceID, id string) (*messaging.WebhookEndpoint, error) {
	e, err := scanEndpoint(s.pool.QueryRow(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	return e, interpretError(err)
}

// WebhookEndpointList implements driver.Store.
func (s *Store) WebhookEndpointList(ctx context.Context, workspaceID string) ([]*messaging.WebhookEndpoint, error) {
	out, err := queryAll(ctx, s.pool, scanEndpoint, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at, id`, workspaceID)
	return out, interpretError(err)
}

// WebhookEndpointDelete implements driver.Store. Its deliveries go with
// it (ON DELETE CASCADE).
func (s *Store) WebhookEndpointDelete(ctx context.Context, workspaceID, id string) error {
	ctx = writeCtx(ctx)
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
	if err != nil {
		return interpretError(err)
	}
	if tag.RowsAffected() == 0 {
		return messaging.ErrNotFound
	}
	return nil
}

// qFailPending fails the pending deliveries of an endpoint being disabled
// ($1 endpoint id, $2 last attempt time).
const qFailPending = `UPDATE webhook_deliveries SET state = 'failed', last_error = 'endpoint disabled', lease_owner = '', last_attempt_at = $2
	WHERE endpoint_id = $1 AND state = 'pending'`

// WebhookEndpointUpdate implements driver.Store: the endpoint's row is
// locked, updated in one statement, and the pending deliveries of an
// endpoint it disables are failed, in one transaction.
func (s *Store) WebhookEndpointUpdate(ctx context.Context, p *driver.WebhookEndpointUpdateParams) (*messaging.WebhookEndpoint, error) {
	ctx = writeCtx(ctx)
	args := []any{p.ID, p.WorkspaceID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sets := []string{"id = id"}
	if p.SecretSealed != nil {
		// The right-hand sides read the row before the update.
		sets = append(sets, "previous_secret_sealed = CASE WHEN "+arg(p.PreviousUntil != nil)+"::boolean THEN secret_sealed END",
			"previous_secret_expires_at = "+arg(tsPtr(p.PreviousUntil))+"::bigint", "secret_sealed = "+arg(p.SecretSealed))
	}
	if p.URL != nil {
		sets = append(sets, "url = "+arg(*p.URL))
	}
	if p.Events != nil {
		sets = append(sets, "events = "+arg(nonNil(*p.Events)))
	}
	if p.Description != nil {
		sets = append(sets, "description = "+arg(*p.Description))
	}
	if p.Enabled != nil {
		if *p.Enabled {
			sets = append(sets, "disabled_at = NULL", "disabled_reason = ''")
		} else {
			sets = append(sets, "disabled_at = coalesce(disabled_at, "+arg(ts(p.At))+")",
				"disabled_reason = CASE WHEN disabled_at IS NULL THEN "+arg(record.DisabledByOperator)+" ELSE disabled_reason END")
		}
	}
	var e *messaging.WebhookEndpoint
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var wasEnabled bool
		if err := tx.QueryRow(ctx, `SELECT disabled_at IS NULL FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2 FOR UPDATE`,
			p.ID, p.WorkspaceID).Scan(&wasEnabled); err != nil {
			return err // no row: not found
		}
		var err error
		e, err = scanEndpoint(tx.QueryRow(ctx, `UPDATE webhook_endpoints SET `+strings.Join(sets, ", ")+` WHERE id = $1 AND workspace_id = $2
			RETURNING `+endpointCols, args...))
		if err != nil {
			return err
		}
		if wasEnabled && p.Enabled != nil && !*p.Enabled {
			_, err = tx.Exec(ctx, qFailPending, p.ID, ts(p.At))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// deliveryCols are the columns of a delivery in scanDelivery's order,
// with the payload; a listing reads NULL in its place.
const deliveryCols = `w.seq, w.endpoint_id, w.workspace_id, w.message_id, w.event_id, w.event_type, w.payload, w.state, w.attempts,
	w.due_at, w.lease_owner, w.last_status, w.last_error, w.last_attempt_at, w.delivered_at, w.created_at, w.test, w.trace_parent`

var listDeliveryCols = strings.Replace(deliveryCols, "w.payload", "NULL::bytea", 1)

// qWebhookClaim claims due webhook deliveries of enabled endpoints like
// qMessageClaim, through the partial index webhook_deliveries_due, and
// returns each with its endpoint's URL and sealed secrets.
const qWebhookClaim = `WITH c AS (
			SELECT d.seq AS claim_seq FROM webhook_deliveries d
			WHERE d.state = 'pending' AND d.due_at <= $1
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
					WHERE e.state = 'pending' AND e.endpoint_id = d.endpoint_id AND e.message_id = d.message_id AND e.seq < d.seq)
				AND EXISTS (SELECT 1 FROM webhook_endpoints ep WHERE ep.id = d.endpoint_id AND ep.disabled_at IS NULL)
			ORDER BY d.due_at, d.seq
			LIMIT $2
			FOR UPDATE OF d SKIP LOCKED)
		UPDATE webhook_deliveries w SET lease_owner = $3, due_at = $4, attempts = w.attempts + 1
		FROM c, webhook_endpoints ep
		WHERE w.seq = c.claim_seq AND ep.id = w.endpoint_id
		RETURNING ` + deliveryCols + `, ep.url, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at`

// WebhookClaim implements driver.Store like MessageClaim: FOR UPDATE
// SKIP LOCKED through the partial index webhook_deliveries_due. A delivery
// waits while an earlier one of the same endpoint and message is pending
// (leased or not), so one message's events reach an endpoint in order.
func (s *Store) WebhookClaim(ctx context.Context, p *driver.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	ctx = writeCtx(ctx)
	out, err := queryAll(ctx, s.pool, scanClaimed, qWebhookClaim, ts(p.Now), p.Limit, p.Owner, ts(p.Now.Add(p.Lease)))
	return out, interpretError(err)
}

// deliveryDest returns the scan destinations of deliveryCols and a
// function completing d after the scan.
func deliveryDest(d *messaging.WebhookDelivery) ([]any, func()) {
	var due, created int64
	var lastAttempt, delivered *int64
	return []any{&d.Seq, &d.EndpointID, &d.WorkspaceID, &d.MessageID, &d.EventID, &d.EventType, &d.Payload, &d.State,
			&d.Attempts, &due, &d.LeaseOwner, &d.LastStatus, &d.LastError, &lastAttempt, &delivered, &created, &d.Test, &d.TraceParent}, func() {
			d.ID, d.DueAt, d.CreatedAt = d.Seq, fromTS(due), fromTS(created)
			d.LastAttemptAt, d.DeliveredAt = fromTSPtr(lastAttempt), fromTSPtr(delivered)
		}
}

// scanDelivery scans a row of deliveryCols.
func scanDelivery(row pgx.Row) (*messaging.WebhookDelivery, error) {
	var d messaging.WebhookDelivery
	dest, done := deliveryDest(&d)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	done()
	return &d, nil
}

// scanClaimed scans a row of qWebhookClaim: a webhook delivery with its
// endpoint's URL and sealed secrets.
func scanClaimed(row pgx.Row) (*messaging.WebhookDelivery, error) {
	var d messaging.WebhookDelivery
	var prevExpires *int64
	dest, done := deliveryDest(&d)
	if err := row.Scan(append(dest, &d.URL, &d.Secret, &d.PreviousSecret, &prevExpires)...); err != nil {
		return nil, err
	}
	done()
	d.PreviousSecretExpiresAt = fromTSPtr(prevExpires)
	return &d, nil
}

// qPruneFinished deletes the finished deliveries of the endpoint $1 beyond
// the newest $2, skipping those another transaction is deleting: every
// record of an endpoint's outcome prunes, and concurrent records would
// otherwise wait on each other's deletes of the same oldest rows, one
// commit after another (with two instances, the webhook queue's
// throughput fell to tens of messages a second).
const qPruneFinished = `DELETE FROM webhook_deliveries WHERE seq IN (
	SELECT seq FROM webhook_deliveries WHERE endpoint_id = $1 AND state <> 'pending' AND seq <= (
		SELECT seq FROM webhook_deliveries WHERE endpoint_id = $1 AND state <> 'pending' ORDER BY seq DESC LIMIT 1 OFFSET $2)
	FOR UPDATE SKIP LOCKED)`

// WebhookRecord implements driver.Store. Finished deliveries are kept,
// the newest p.Keep of the endpoint; the older are deleted here, through
// the partial index webhook_deliveries_finished. A record by a worker
// whose lease ended changes nothing.
func (s *Store) WebhookRecord(ctx context.Context, p *driver.WebhookRecordParams) error {
	ctx = writeCtx(ctx)
	return s.tx(ctx, func(tx pgx.Tx) error {
		var endpoint string
		err := tx.QueryRow(ctx, `SELECT endpoint_id FROM webhook_deliveries WHERE seq = $1 AND state = 'pending' AND lease_owner = $2 FOR UPDATE`,
			p.ID, p.Owner).Scan(&endpoint)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // not ours any more
		}
		if err != nil {
			return err
		}
		due, delivered := sqlrows.RecordTimes(p)
		if _, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET state = $2, due_at = $3, lease_owner = '', last_status = $4, last_error = $5,
			last_attempt_at = $6, delivered_at = $7 WHERE seq = $1`,
			p.ID, p.State, ts(due), p.LastStatus, p.LastError, ts(p.At), tsPtr(delivered)); err != nil {
			return err
		}
		if p.DisableEndpoint {
			if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET disabled_at = $2, disabled_reason = $3 WHERE id = $1 AND disabled_at IS NULL`,
				endpoint, ts(p.At), record.DisabledGone); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, qFailPending, endpoint, ts(p.At)); err != nil {
				return err
			}
		}
		if p.State == record.DeliveryPending {
			return nil
		}
		_, err = tx.Exec(ctx, qPruneFinished, endpoint, max(p.Keep, 1))
		return err
	})
}

// WebhookDeliveryList implements driver.Store, through the index
// webhook_deliveries_endpoint.
func (s *Store) WebhookDeliveryList(ctx context.Context, p *driver.WebhookDeliveryListParams) ([]*messaging.WebhookDelivery, error) {
	before := sqlrows.Before(p.Before)
	return txValue(ctx, s, func(tx pgx.Tx) ([]*messaging.WebhookDelivery, error) {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2`, p.EndpointID, p.WorkspaceID).Scan(&one); err != nil {
			return nil, err // no row: not found
		}
		return queryAll(ctx, tx, scanDelivery, `SELECT `+listDeliveryCols+` FROM webhook_deliveries w
			WHERE w.endpoint_id = $1 AND w.seq < $2 ORDER BY w.seq DESC LIMIT $3`, p.EndpointID, before, p.Limit)
	})
}

// WebhookRedeliver implements driver.Store: the delivery's row is
// locked, checked and updated in one transaction.
func (s *Store) WebhookRedeliver(ctx context.Context, p *driver.WebhookRedeliverParams) (*messaging.WebhookDelivery, error) {
	ctx = writeCtx(ctx)
	return txValue(ctx, s, func(tx pgx.Tx) (*messaging.WebhookDelivery, error) {
		var leased bool
		err := tx.QueryRow(ctx, `SELECT state = 'pending' AND lease_owner <> '' AND due_at > $4 FROM webhook_deliveries
			WHERE seq = $1 AND endpoint_id = $2 AND workspace_id = $3 FOR UPDATE`, p.ID, p.EndpointID, p.WorkspaceID, ts(p.Now)).Scan(&leased)
		if err != nil {
			return nil, err // no row: not found
		}
		if leased {
			return nil, messaging.ErrConflict
		}
		return scanDelivery(tx.QueryRow(ctx, `UPDATE webhook_deliveries w SET state = 'pending', due_at = $2, lease_owner = '', delivered_at = NULL
			WHERE w.seq = $1 RETURNING `+listDeliveryCols, p.ID, ts(p.Now)))
	})
}

// WebhookRecordTest implements driver.Store: the finished delivery's
// INSERT and WebhookRecord's prune, in one transaction.
func (s *Store) WebhookRecordTest(ctx context.Context, p *driver.WebhookRecordTestParams) (*messaging.WebhookDelivery, error) {
	ctx = writeCtx(ctx)
	ev := p.Event
	var delivered *time.Time
	if p.State == record.DeliveryDelivered {
		delivered = &p.At
	}
	return txValue(ctx, s, func(tx pgx.Tx) (*messaging.WebhookDelivery, error) {
		d, err := scanDelivery(tx.QueryRow(ctx, `INSERT INTO webhook_deliveries AS w
			(endpoint_id, workspace_id, message_id, event_id, event_type, payload, state, attempts, due_at, last_status, last_error,
			last_attempt_at, delivered_at, created_at, test, trace_parent)
			SELECT id, workspace_id, $3, $4, $5, $6, $7, 1, $8, $9, $10, $8, $11, $12, true, $13 FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2
			RETURNING `+listDeliveryCols,
			p.EndpointID, ev.WorkspaceID, ev.MessageID, ev.ID, ev.Type, ev.Payload, p.State, ts(p.At), p.LastStatus, p.LastError,
			tsPtr(delivered), ts(ev.CreatedAt), ev.TraceParent))
		if err != nil {
			return nil, err // no row: no such endpoint
		}
		_, err = tx.Exec(ctx, qPruneFinished, p.EndpointID, max(p.Keep, 1))
		return d, err
	})
}

// MessageReceive implements driver.Store: MessageCreate's insert and,
// when it inserts, the event's deliveries, in one transaction.
func (s *Store) MessageReceive(ctx context.Context, p *driver.MessageReceiveParams) (*messaging.Message, bool, error) {
	ctx = writeCtx(ctx)
	m := p.Message
	args, err := sqlrows.MessageInsertArgs(m, ts)
	if err != nil {
		return nil, false, interpretError(err)
	}
	var stored *messaging.Message
	var created bool
	err = s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		created = false
		stored, err = scanMessage(tx.QueryRow(ctx, qMessageInsert, args...))
		if errors.Is(err, pgx.ErrNoRows) {
			stored, err = scanMessage(tx.QueryRow(ctx, qMessageByIdem, m.WorkspaceID, m.IdempotencyKey))
			return err
		}
		if err != nil {
			return err
		}
		created = true
		return queueEvent(ctx, tx, p.Event)
	})
	if err != nil {
		return nil, false, interpretError(err)
	}
	return stored, created, nil
}
