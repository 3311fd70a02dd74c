package sqlitestore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
)

// MessageClaim implements driver.Store. The claim walks the partial
// index messages_due, which holds only queued messages.
func (s *Store) MessageClaim(ctx context.Context, p *driver.MessageClaimParams) ([]*messaging.Message, error) {
	var out []*messaging.Message
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := s.queryTx(ctx, tx, qMessageClaim, p.Owner, fmtTime(p.Now.Add(p.Lease)), fmtTime(p.Now), p.Limit)
		out, err = collect(rows, err, scanMessage)
		return err
	})
	if err != nil {
		return nil, err // rows of a claim that did not commit are nobody's
	}
	return out, nil
}

// MessageRelease implements driver.Store.
func (s *Store) MessageRelease(ctx context.Context, p *driver.MessageReleaseParams) (bool, error) {
	var released bool
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, `UPDATE messages SET due_at = ?, last_error = ?, lease_owner = '', unconfirmed_since = ?,
				attempts = CASE WHEN ? AND attempts > 0 THEN attempts - 1 ELSE attempts END
			WHERE id = ? AND workspace_id = ? AND status = 'queued' AND lease_owner = ?`,
			fmtTime(p.DueAt), p.LastError, fmtTimePtr(p.Unconfirmed), p.Untried, p.ID, p.WorkspaceID, p.Owner))
		if err != nil {
			return err
		}
		if released = n == 1; released {
			return nil
		}
		return exists(ctx, tx, "messages", p.WorkspaceID, p.ID)
	})
	return released, err
}

// MessageGetByProviderID implements driver.Store.
func (s *Store) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	m, err := scanMessage(s.queryRow(ctx, qMessageByProviderID, id))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// queueEvent writes one delivery of ev per enabled endpoint of its
// workspace that subscribes to its type, inside the caller's transaction.
// It first asks whether any endpoint subscribes: most workspaces have
// none, and the read costs a fraction of an INSERT that inserts nothing
// (which still touches the AUTOINCREMENT counter and sorts). Both run in
// the caller's write transaction, so no endpoint can appear in between.
func (s *Store) queueEvent(ctx context.Context, tx *sql.Tx, ev *driver.EventRecord) error {
	var subscribed bool
	if err := s.rowTx(ctx, tx, qEventSubscribed, ev.WorkspaceID, ev.Type).Scan(&subscribed); err != nil {
		return err
	}
	if !subscribed {
		return nil
	}
	return s.insertEvent(ctx, tx, ev)
}

// insertEvent is queueEvent without the question whether any endpoint
// subscribes.
func (s *Store) insertEvent(ctx context.Context, tx *sql.Tx, ev *driver.EventRecord) error {
	_, err := s.execTx(ctx, tx, qQueueEvent, ev.MessageID, ev.ID, ev.Type, ev.Payload, fmtTime(ev.CreatedAt), fmtTime(ev.CreatedAt), ev.TraceParent,
		ev.WorkspaceID, ev.Type)
	return err
}

// WebhookQueueEvent implements driver.Store.
func (s *Store) WebhookQueueEvent(ctx context.Context, p *driver.WebhookQueueParams) (bool, error) {
	var queued bool
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		queued, err = queueEndpointEvent(ctx, tx, p)
		return err
	})
	return queued, interpretError(err)
}

// queueEndpointEvent queues p.Event for the one endpoint p.EndpointID, in
// tx, unless the endpoint does not exist or is disabled (queued false).
func queueEndpointEvent(ctx context.Context, tx *sql.Tx, p *driver.WebhookQueueParams) (queued bool, err error) {
	ev := p.Event
	n, err := affected(tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
		(endpoint_id, workspace_id, message_id, event_id, event_type, payload, state, due_at, created_at, trace_parent)
		SELECT id, workspace_id, ?, ?, ?, ?, 'pending', ?, ?, ? FROM webhook_endpoints
		WHERE id = ? AND workspace_id = ? AND disabled_at IS NULL`,
		ev.MessageID, ev.ID, ev.Type, ev.Payload, fmtTime(ev.CreatedAt), fmtTime(ev.CreatedAt), ev.TraceParent, p.EndpointID, ev.WorkspaceID))
	return n == 1, err
}

const endpointCols = `id, workspace_id, url, events, description, secret_sealed, previous_secret_sealed, previous_secret_expires_at,
	disabled_at, disabled_reason, created_at`

func scanEndpoint(sc scanner) (*messaging.WebhookEndpoint, error) {
	var e messaging.WebhookEndpoint
	var events string
	if err := sc.Scan(&e.ID, &e.WorkspaceID, &e.URL, &events, &e.Description, &e.SecretSealed, &e.PreviousSecretSealed,
		storedTimePtr{&e.PreviousSecretExpiresAt}, storedTimePtr{&e.DisabledAt}, &e.DisabledReason, storedTime{&e.CreatedAt}); err != nil {
		return nil, err
	}
	if events != "" {
		e.Events = strings.Fields(events)
	}
	return &e, nil
}

// WebhookEndpointCreate implements driver.Store.
func (s *Store) WebhookEndpointCreate(ctx context.Context, e *messaging.WebhookEndpoint) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.WorkspaceID, e.URL, strings.Join(e.Events, " "), e.Description, e.SecretSealed, e.PreviousSecretSealed,
			fmtTimePtr(e.PreviousSecretExpiresAt), fmtTimePtr(e.DisabledAt), e.DisabledReason, fmtTime(e.CreatedAt))
		return err
	})
}

// WebhookEndpointGet implements driver.Store.
func (s *Store) WebhookEndpointGet(ctx context.Context, workspaceID, id string) (*messaging.WebhookEndpoint, error) {
	var e *messaging.WebhookEndpoint
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		e, err = scanEndpoint(tx.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = ? AND workspace_id = ?`, id, workspaceID))
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// WebhookEndpointList implements driver.Store.
func (s *Store) WebhookEndpointList(ctx context.Context, workspaceID string) ([]*messaging.WebhookEndpoint, error) {
	var out []*messaging.WebhookEndpoint
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
		out, err = collect(rows, err, scanEndpoint)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// qFailPending fails the pending deliveries of an endpoint being disabled
// (arguments: last attempt time, endpoint id).
const qFailPending = `UPDATE webhook_deliveries SET state = 'failed', last_error = 'endpoint disabled', lease_owner = '', last_attempt_at = ?
	WHERE endpoint_id = ? AND state = 'pending'`

// WebhookEndpointUpdate implements driver.Store: one UPDATE of the
// fields set, and the failure of the pending deliveries of an endpoint it
// disables, in one transaction.
func (s *Store) WebhookEndpointUpdate(ctx context.Context, p *driver.WebhookEndpointUpdateParams) (*messaging.WebhookEndpoint, error) {
	sets, args := []string{"id = id"}, []any{}
	if p.SecretSealed != nil {
		// The right-hand sides read the row before the update.
		sets = append(sets, "previous_secret_sealed = CASE WHEN ? THEN secret_sealed END", "previous_secret_expires_at = ?", "secret_sealed = ?")
		args = append(args, p.PreviousUntil != nil, fmtTimePtr(p.PreviousUntil), p.SecretSealed)
	}
	if p.URL != nil {
		sets, args = append(sets, "url = ?"), append(args, *p.URL)
	}
	if p.Events != nil {
		sets, args = append(sets, "events = ?"), append(args, strings.Join(*p.Events, " "))
	}
	if p.Description != nil {
		sets, args = append(sets, "description = ?"), append(args, *p.Description)
	}
	disabling := p.Enabled != nil && !*p.Enabled
	if p.Enabled != nil {
		if *p.Enabled {
			sets = append(sets, "disabled_at = NULL", "disabled_reason = ''")
		} else {
			sets = append(sets, "disabled_at = coalesce(disabled_at, ?)", "disabled_reason = CASE WHEN disabled_at IS NULL THEN ? ELSE disabled_reason END")
			args = append(args, fmtTime(p.At), record.DisabledByOperator)
		}
	}
	var e *messaging.WebhookEndpoint
	write := s.writeTx
	if disabling {
		write = s.writeLarge // may fail every pending delivery of the endpoint
	}
	err := write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var wasEnabled bool
		if err := tx.QueryRowContext(ctx, `SELECT disabled_at IS NULL FROM webhook_endpoints WHERE id = ? AND workspace_id = ?`, p.ID, p.WorkspaceID).Scan(&wasEnabled); err != nil {
			return err // no row: not found
		}
		var err error
		e, err = scanEndpoint(tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET `+strings.Join(sets, ", ")+` WHERE id = ? AND workspace_id = ?
			RETURNING `+endpointCols, append(args, p.ID, p.WorkspaceID)...))
		if err != nil {
			return err
		}
		if wasEnabled && disabling {
			_, err = tx.ExecContext(ctx, qFailPending, fmtTime(p.At), p.ID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// WebhookEndpointDelete implements driver.Store. Its deliveries go with
// it (ON DELETE CASCADE), however many: a large write (writeLarge).
func (s *Store) WebhookEndpointDelete(ctx context.Context, workspaceID, id string) error {
	return s.writeLarge(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return oneRow(tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	})
}

// deliveryCols are the columns scanDelivery reads, with the payload; a
// listing reads NULL in its place.
const deliveryCols = `seq, endpoint_id, workspace_id, message_id, event_id, event_type, payload, state, attempts, due_at, lease_owner,
	last_status, last_error, last_attempt_at, delivered_at, created_at, test, trace_parent`

var listDeliveryCols = strings.Replace(deliveryCols, "payload", "NULL", 1)

// scanDelivery scans a webhook delivery without its endpoint's URL and
// secrets.
func scanDelivery(sc scanner) (*messaging.WebhookDelivery, error) {
	var d messaging.WebhookDelivery
	if err := sc.Scan(&d.Seq, &d.EndpointID, &d.WorkspaceID, &d.MessageID, &d.EventID, &d.EventType, &d.Payload, &d.State,
		&d.Attempts, storedTime{&d.DueAt}, &d.LeaseOwner, &d.LastStatus, &d.LastError, storedTimePtr{&d.LastAttemptAt},
		storedTimePtr{&d.DeliveredAt}, storedTime{&d.CreatedAt}, &d.Test, &d.TraceParent); err != nil {
		return nil, err
	}
	d.ID = d.Seq
	return &d, nil
}

// qWebhookClaim leases the first pending delivery of each endpoint and
// message that is due, of an enabled endpoint (arguments: owner, lease
// end, now, limit). It walks the partial index webhook_deliveries_due, and
// checks for an earlier pending delivery through webhook_deliveries_order.
const qWebhookClaim = `UPDATE webhook_deliveries SET lease_owner = ?, due_at = ?, attempts = attempts + 1
	WHERE seq IN (
		SELECT d.seq FROM webhook_deliveries d
		WHERE d.state = 'pending' AND d.due_at <= ?
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
			WHERE e.state = 'pending' AND e.endpoint_id = d.endpoint_id AND e.message_id = d.message_id AND e.seq < d.seq)
		AND EXISTS (SELECT 1 FROM webhook_endpoints ep WHERE ep.id = d.endpoint_id AND ep.disabled_at IS NULL)
		ORDER BY d.due_at, d.seq LIMIT ?)
	RETURNING ` + deliveryCols

// qWebhookDue tells whether a pending delivery is due (argument: now),
// through the partial index webhook_deliveries_due.
const qWebhookDue = `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND due_at <= ?)`

// WebhookClaim implements driver.Store. It first asks a reader
// connection whether any pending delivery is due, and claims through the
// writer only when one is: the webhook sender is woken by every status
// change, and most queue no delivery. Answering "none" from that read is
// the claim's answer as of the read: a delivery committed after it is
// announced by a wake of its own, or found by the next poll.
func (s *Store) WebhookClaim(ctx context.Context, p *driver.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	var due bool
	if err := s.queryRow(ctx, qWebhookDue, fmtTime(p.Now)).Scan(&due); err != nil {
		return nil, interpretError(err)
	}
	if !due {
		return nil, nil
	}
	var out []*messaging.WebhookDelivery
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := s.queryTx(ctx, tx, qWebhookClaim,
			p.Owner, fmtTime(p.Now.Add(p.Lease)), fmtTime(p.Now), p.Limit)
		if out, err = collect(rows, err, scanDelivery); err != nil {
			return err
		}
		for _, d := range out {
			if err := s.rowTx(ctx, tx, qClaimedEndpoint, d.EndpointID).Scan(&d.URL, &d.Secret, &d.PreviousSecret, storedTimePtr{&d.PreviousSecretExpiresAt}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err // deliveries of a claim that did not commit are nobody's
	}
	return out, nil
}

// qPruneFinished deletes the finished deliveries of an endpoint (the first
// two arguments) beyond the newest few (the third).
const qPruneFinished = `DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND state <> 'pending' AND seq <= (
	SELECT seq FROM webhook_deliveries WHERE endpoint_id = ? AND state <> 'pending' ORDER BY seq DESC LIMIT 1 OFFSET ?)`

// WebhookRecord implements driver.Store. Finished deliveries are kept,
// the newest p.Keep of the endpoint; the older are deleted here, through
// the partial index webhook_deliveries_finished.
func (s *Store) WebhookRecord(ctx context.Context, p *driver.WebhookRecordParams) error {
	write := s.writeTx
	if p.DisableEndpoint {
		write = s.writeLarge // fails every pending delivery of the endpoint
	}
	return write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var endpoint string
		err := s.rowTx(ctx, tx, qRecordedDelivery, p.ID, p.Owner).Scan(&endpoint)
		if err == sql.ErrNoRows {
			return nil // not ours any more
		}
		if err != nil {
			return err
		}
		due, delivered := sqlrows.RecordTimes(p)
		if _, err = s.execTx(ctx, tx, qRecordDelivery,
			p.State, fmtTime(due), p.LastStatus, p.LastError, fmtTime(p.At), fmtTimePtr(delivered), p.ID); err != nil {
			return err
		}
		if p.DisableEndpoint {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL`,
				fmtTime(p.At), record.DisabledGone, endpoint); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, qFailPending, fmtTime(p.At), endpoint); err != nil {
				return err
			}
		}
		if p.State == record.DeliveryPending {
			return nil
		}
		_, err = s.execTx(ctx, tx, qPruneFinished, endpoint, endpoint, max(p.Keep, 1))
		return err
	})
}

// Statements of WebhookClaim and WebhookRecord, hot writes (see
// hotWrites): a delivery's claim and its record.
const (
	qClaimedEndpoint  = `SELECT url, secret_sealed, previous_secret_sealed, previous_secret_expires_at FROM webhook_endpoints WHERE id = ?`
	qRecordedDelivery = `SELECT endpoint_id FROM webhook_deliveries WHERE seq = ? AND state = 'pending' AND lease_owner = ?`
	qRecordDelivery   = `UPDATE webhook_deliveries SET state = ?, due_at = ?, lease_owner = '', last_status = ?, last_error = ?,
			last_attempt_at = ?, delivered_at = ? WHERE seq = ?`
)

// WebhookDeliveryList implements driver.Store, through the index
// webhook_deliveries_endpoint.
func (s *Store) WebhookDeliveryList(ctx context.Context, p *driver.WebhookDeliveryListParams) ([]*messaging.WebhookDelivery, error) {
	before := sqlrows.Before(p.Before)
	var out []*messaging.WebhookDelivery
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		if err := exists(ctx, tx, "webhook_endpoints", p.WorkspaceID, p.EndpointID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+listDeliveryCols+` FROM webhook_deliveries WHERE endpoint_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
			p.EndpointID, before, p.Limit)
		out, err = collect(rows, err, scanDelivery)
		return err
	})
	return sqlrows.Value(out, err)
}

// WebhookRedeliver implements driver.Store.
func (s *Store) WebhookRedeliver(ctx context.Context, p *driver.WebhookRedeliverParams) (*messaging.WebhookDelivery, error) {
	var d *messaging.WebhookDelivery
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var leased bool
		err := tx.QueryRowContext(ctx, `SELECT state = 'pending' AND lease_owner <> '' AND due_at > ? FROM webhook_deliveries
			WHERE seq = ? AND endpoint_id = ? AND workspace_id = ?`, fmtTime(p.Now), p.ID, p.EndpointID, p.WorkspaceID).Scan(&leased)
		if err != nil {
			return err // no row: not found
		}
		if leased {
			return messaging.ErrConflict
		}
		d, err = scanDelivery(tx.QueryRowContext(ctx, `UPDATE webhook_deliveries SET state = 'pending', due_at = ?, lease_owner = '', delivered_at = NULL
			WHERE seq = ? RETURNING `+listDeliveryCols, fmtTime(p.Now), p.ID))
		return err
	})
	return sqlrows.Value(d, err)
}

// WebhookRecordTest implements driver.Store: one INSERT of the
// finished delivery and the prune of WebhookRecord, in one transaction.
func (s *Store) WebhookRecordTest(ctx context.Context, p *driver.WebhookRecordTestParams) (*messaging.WebhookDelivery, error) {
	var d *messaging.WebhookDelivery
	ev := p.Event
	var delivered *time.Time
	if p.State == record.DeliveryDelivered {
		delivered = &p.At
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		d, err = scanDelivery(tx.QueryRowContext(ctx, `INSERT INTO webhook_deliveries
			(endpoint_id, workspace_id, message_id, event_id, event_type, payload, state, attempts, due_at, last_status, last_error,
			last_attempt_at, delivered_at, created_at, test, trace_parent)
			SELECT id, workspace_id, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, 1, ? FROM webhook_endpoints WHERE id = ? AND workspace_id = ?
			RETURNING `+listDeliveryCols,
			ev.MessageID, ev.ID, ev.Type, ev.Payload, p.State, fmtTime(p.At), p.LastStatus, p.LastError,
			fmtTime(p.At), fmtTimePtr(delivered), fmtTime(ev.CreatedAt), ev.TraceParent, p.EndpointID, ev.WorkspaceID))
		if err != nil {
			return err // no row: no such endpoint
		}
		_, err = tx.ExecContext(ctx, qPruneFinished, p.EndpointID, p.EndpointID, max(p.Keep, 1))
		return err
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return d, nil
}

// MessageGetByIdempotencyKey implements driver.Store.
func (s *Store) MessageGetByIdempotencyKey(ctx context.Context, workspaceID, key string) (*messaging.Message, error) {
	m, err := scanMessage(s.queryRow(ctx, qMessageByIdem, workspaceID, key))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}
