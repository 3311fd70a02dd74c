package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/ujumbe/messaging"
)

// MessageClaim implements messaging.Store. The claim walks the partial
// index messages_due, which holds only queued messages.
func (s *Store) MessageClaim(ctx context.Context, p *messaging.MessageClaimParams) ([]*messaging.Message, error) {
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

// MessageRelease implements messaging.Store.
func (s *Store) MessageRelease(ctx context.Context, p *messaging.MessageReleaseParams) (bool, error) {
	var released bool
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, `UPDATE messages SET due_at = ?, last_error = ?, lease_owner = ''
			WHERE id = ? AND workspace_id = ? AND status = 'queued' AND lease_owner = ?`,
			fmtTime(p.DueAt), p.LastError, p.ID, p.WorkspaceID, p.Owner))
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

// MessageGetByProviderID implements messaging.Store.
func (s *Store) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	m, err := scanMessage(s.queryRow(ctx, qMessageByProviderID, id))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// queueEvent writes one delivery of ev per enabled endpoint of its
// workspace, inside the caller's transaction.
func (s *Store) queueEvent(ctx context.Context, tx *sql.Tx, ev *messaging.EventRecord) error {
	_, err := s.execTx(ctx, tx, qQueueEvent, ev.MessageID, ev.ID, ev.Payload, fmtTime(ev.CreatedAt), fmtTime(ev.CreatedAt), ev.WorkspaceID)
	return err
}

const endpointCols = `id, workspace_id, url, secret_sealed, disabled_at, created_at`

func scanEndpoint(sc scanner) (*messaging.WebhookEndpoint, error) {
	var e messaging.WebhookEndpoint
	if err := sc.Scan(&e.ID, &e.WorkspaceID, &e.URL, &e.SecretSealed, storedTimePtr{&e.DisabledAt}, storedTime{&e.CreatedAt}); err != nil {
		return nil, err
	}
	return &e, nil
}

// WebhookEndpointCreate implements messaging.Store.
func (s *Store) WebhookEndpointCreate(ctx context.Context, e *messaging.WebhookEndpoint) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
			e.ID, e.WorkspaceID, e.URL, e.SecretSealed, fmtTimePtr(e.DisabledAt), fmtTime(e.CreatedAt))
		return err
	})
}

// WebhookEndpointList implements messaging.Store.
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

// WebhookEndpointUpdate implements messaging.Store.
func (s *Store) WebhookEndpointUpdate(ctx context.Context, p *messaging.WebhookEndpointUpdateParams) error {
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return oneRow(tx.ExecContext(ctx, `UPDATE webhook_endpoints SET secret_sealed = ?, disabled_at = NULL WHERE id = ? AND workspace_id = ?`,
			p.SecretSealed, p.ID, p.WorkspaceID))
	})
}

// WebhookEndpointDelete implements messaging.Store. Its deliveries go with
// it (ON DELETE CASCADE).
func (s *Store) WebhookEndpointDelete(ctx context.Context, workspaceID, id string) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return oneRow(tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	})
}

// scanDelivery scans a webhook delivery without its endpoint's URL and
// secret.
func scanDelivery(sc scanner) (*messaging.WebhookDelivery, error) {
	var d messaging.WebhookDelivery
	if err := sc.Scan(&d.Seq, &d.EndpointID, &d.WorkspaceID, &d.MessageID, &d.EventID, &d.Payload, &d.State,
		&d.Attempts, storedTime{&d.DueAt}, &d.LeaseOwner, &d.LastStatus, &d.LastError, storedTime{&d.CreatedAt}); err != nil {
		return nil, err
	}
	d.ID = d.Seq
	return &d, nil
}

// qWebhookClaim leases the first pending delivery of each endpoint and
// message that is due (arguments: owner, lease end, now, limit). It walks
// the partial index webhook_deliveries_due, and checks for an earlier
// pending delivery through webhook_deliveries_order.
const qWebhookClaim = `UPDATE webhook_deliveries SET lease_owner = ?, due_at = ?, attempts = attempts + 1
	WHERE seq IN (
		SELECT d.seq FROM webhook_deliveries d
		WHERE d.state = 'pending' AND d.due_at <= ?
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
			WHERE e.state = 'pending' AND e.endpoint_id = d.endpoint_id AND e.message_id = d.message_id AND e.seq < d.seq)
		ORDER BY d.due_at, d.seq LIMIT ?)
	RETURNING seq, endpoint_id, workspace_id, message_id, event_id, payload, state, attempts, due_at, lease_owner, last_status, last_error, created_at`

// WebhookClaim implements messaging.Store.
func (s *Store) WebhookClaim(ctx context.Context, p *messaging.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	var out []*messaging.WebhookDelivery
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qWebhookClaim,
			p.Owner, fmtTime(p.Now.Add(p.Lease)), fmtTime(p.Now), p.Limit)
		if out, err = collect(rows, err, scanDelivery); err != nil {
			return err
		}
		for _, d := range out {
			if err := tx.QueryRowContext(ctx, `SELECT url, secret_sealed FROM webhook_endpoints WHERE id = ?`, d.EndpointID).Scan(&d.URL, &d.Secret); err != nil {
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

// WebhookRecord implements messaging.Store. Finished deliveries are deleted,
// so the outbox holds only pending work.
func (s *Store) WebhookRecord(ctx context.Context, p *messaging.WebhookRecordParams) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var endpoint string
		err := tx.QueryRowContext(ctx, `SELECT endpoint_id FROM webhook_deliveries WHERE seq = ? AND state = 'pending' AND lease_owner = ?`,
			p.ID, p.Owner).Scan(&endpoint)
		if err == sql.ErrNoRows {
			return nil // not ours any more
		}
		if err != nil {
			return err
		}
		if p.State == messaging.DeliveryPending {
			_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET due_at = ?, lease_owner = '', last_status = ?, last_error = ? WHERE seq = ?`,
				fmtTime(p.DueAt), p.LastStatus, p.LastError, p.ID)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE seq = ?`, p.ID)
		}
		if err != nil {
			return err
		}
		if p.DisableEndpoint {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL`, fmtTime(p.At), endpoint); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending'`, endpoint); err != nil {
				return err
			}
		}
		return nil
	})
}

// MessageGetByIdempotencyKey implements messaging.Store.
func (s *Store) MessageGetByIdempotencyKey(ctx context.Context, workspaceID, key string) (*messaging.Message, error) {
	m, err := scanMessage(s.queryRow(ctx, qMessageByIdem, workspaceID, key))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}
