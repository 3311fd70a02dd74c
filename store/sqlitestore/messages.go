package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/sqlrows"
	"github.com/ujumbe/messaging/store/internal/statushistory"
	"github.com/ujumbe/messaging/store/internal/storedjson"
)

// messageCols are the columns of a message, in scanMessage's order.
const messageCols = sqlrows.MessageColumns

func scanMessage(sc scanner) (*messaging.Message, error) {
	var m messaging.Message
	var comps, content *string
	var due, history string
	if err := sc.Scan(&m.ID, &m.WorkspaceID, &m.ConversationID, &m.Channel, &m.To, &m.Direction, &m.Status, &m.FailureReason,
		&m.Type, &m.Text, &m.MediaURL, &m.Caption, &m.Filename, &m.TemplateName, &m.Language, &comps,
		&m.IdempotencyKey, &m.RequestHash, &m.ProviderMessageID, storedTime{&m.CreatedAt}, storedTime{&m.UpdatedAt},
		&due, &m.LeaseOwner, &m.Attempts, &m.LastError, &m.TraceParent, &content, storedTimePtr{&m.SendAt}, &history, storedTimePtr{&m.UnconfirmedSince}, storedTimePtr{&m.ReadAt}); err != nil {
		return nil, err
	}
	var err error
	if m.History, err = statushistory.Decode(history); err != nil {
		return nil, err
	}
	if due != "" { // an empty due_at is the zero time
		if m.DueAt, err = parseTime(due); err != nil {
			return nil, err
		}
	}
	if m.Components, err = storedjson.DecodeSendComponents(comps); err != nil {
		return nil, err
	}
	if m.Content, m.Outbound, err = storedjson.DecodeContent(content); err != nil {
		return nil, err
	}
	return &m, nil
}

// MessageCreate implements driver.Store. The insert, the idempotency
// check and the recipient's opt-out check are one statement (qMessageSend:
// INSERT ... SELECT ... WHERE NOT EXISTS an opt-out ... ON CONFLICT DO
// NOTHING on the unique index of (workspace_id, idempotency_key)); when it
// inserts nothing, the existing message (or else the opt-out) is read in
// the same transaction, and when it inserts, the stored message is m.
// ErrNotFound if the workspace does not exist; ErrConflict if the id is
// taken.
func (s *Store) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	args, err := sqlrows.MessageInsertArgs(m, fmtTime)
	if err != nil {
		return nil, false, interpretError(err)
	}
	var stored *messaging.Message
	var created bool
	// One statement changes the database: no savepoint is needed; a
	// message with a fallback takes two (see insertFallback).
	write := s.writeOne
	if m.Fallback != nil {
		write = s.writeTx
	}
	err = write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := affected(s.execTx(ctx, tx, qMessageSend, args...))
		if err != nil {
			return err
		}
		if n == 1 && m.Fallback != nil {
			if err := s.insertFallback(ctx, tx, m); err != nil {
				return err
			}
		}
		if n == 1 {
			// The row is m: no need to read it back.
			created = true
			stored = m.Clone()
			stored.History, stored.ReadAt = nil, nil // neither is inserted
			stored.CreatedAt, stored.UpdatedAt, stored.DueAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), m.DueAt.UTC()
			stored.SendAt = utcPtr(m.SendAt)
			return nil
		}
		stored, err = scanMessage(s.rowTx(ctx, tx, qMessageByIdem, m.WorkspaceID, m.IdempotencyKey))
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		// No message of the key: the recipient opted out.
		var at string
		if err := s.rowTx(ctx, tx, qOptedOutAt, m.WorkspaceID, m.To, m.Channel).Scan(&at); err != nil {
			return err
		}
		t, err := parseTime(at)
		if err != nil {
			return err
		}
		return &driver.OptedOutError{At: t}
	})
	if err != nil {
		return nil, false, err
	}
	return stored, created, nil
}

// MessageGet implements driver.Store.
func (s *Store) MessageGet(ctx context.Context, workspaceID, id string) (*messaging.Message, error) {
	m, err := scanMessage(s.queryRow(ctx, qMessageByWSID, id, workspaceID))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// Hot statements of MessageCreate, MessageUpdateStatuses and MessageClaim.
var (
	qMessageInsert = `INSERT INTO messages (` + sqlrows.MessageInsertColumns + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key <> '' DO NOTHING`
	// qMessageSend is qMessageInsert of an outbound message, unless its
	// recipient (?5) opted out of its channel (?4) in its workspace (?2).
	qMessageSend = `INSERT INTO messages (` + sqlrows.MessageInsertColumns + `)
			SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28
			WHERE NOT EXISTS (SELECT 1 FROM suppressions WHERE workspace_id = ?2 AND recipient = ?5 AND channel = ?4 AND opted_out)
			ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key <> '' DO NOTHING`
	// qOptedOutAt is when a recipient opted out of a channel.
	qOptedOutAt          = `SELECT updated_at FROM suppressions WHERE workspace_id = ? AND recipient = ? AND channel = ? AND opted_out`
	qMessageByID         = `SELECT ` + messageCols + ` FROM messages WHERE id = ?`
	qMessageByWSID       = `SELECT ` + messageCols + ` FROM messages WHERE id = ? AND workspace_id = ?`
	qMessageByIdem       = `SELECT ` + messageCols + ` FROM messages WHERE workspace_id = ? AND idempotency_key = ? AND idempotency_key <> ''`
	qMessageByProviderID = `SELECT ` + messageCols + ` FROM messages
			WHERE provider_message_id = ? AND provider_message_id <> '' LIMIT 1`
	qMessageClaim = `UPDATE messages SET lease_owner = ?1, due_at = ?2, attempts = attempts + 1,
				unconfirmed_since = COALESCE(unconfirmed_since, ?3)
			WHERE id IN (SELECT id FROM messages WHERE status = 'queued' AND due_at <= ?3 ORDER BY due_at, id LIMIT ?4)
			RETURNING ` + messageCols
	qMessageSetStatus = `UPDATE messages SET status = ?,
			failure_reason = CASE WHEN ? <> '' THEN ? ELSE failure_reason END,
			provider_message_id = CASE WHEN ? <> '' THEN ? ELSE provider_message_id END,
			updated_at = ?, lease_owner = '', unconfirmed_since = NULL, history = history || ?
			WHERE id = ? AND workspace_id = ? AND status = ?
				AND (? = 0 OR (lease_owner = '' AND unconfirmed_since IS NULL))
			RETURNING ` + messageCols
	// qQueueEvent queues an event for the enabled endpoints of its
	// workspace that subscribe to its type (events '' or holding it).
	qQueueEvent = `INSERT INTO webhook_deliveries
		(endpoint_id, workspace_id, message_id, event_id, event_type, payload, state, due_at, created_at, trace_parent)
		SELECT id, workspace_id, ?, ?, ?, ?, 'pending', ?, ?, ? FROM webhook_endpoints
		WHERE workspace_id = ? AND disabled_at IS NULL
			AND (events = '' OR ` + subscribes + `)
		ORDER BY created_at, id`
	// qEventSubscribed tells whether qQueueEvent would queue anything for
	// an event of the workspace and type (arguments: workspace, type).
	qEventSubscribed = `SELECT EXISTS (SELECT 1 FROM webhook_endpoints
		WHERE workspace_id = ? AND disabled_at IS NULL
			AND (events = '' OR ` + subscribes + `))`
)

// subscribes is the condition of an endpoint subscribing to the event type
// given as the statement's last argument: its space-separated events hold
// it.
const subscribes = `instr(' ' || events || ' ', ' ' || ? || ' ') > 0`

// hotWrites are prepared once on the writer connection (see stmt).
var hotWrites = slices.Concat([]string{qMessageSetStatus, qEventSubscribed, qMessageInsert, qMessageSend, qOptedOutAt, qMessageByID, qMessageByWSID, qMessageByIdem, qMessageClaim, qQueueEvent,
	qSMSDebit, qSMSLedger, qPendingSweep, qPendingInsert, qPendingTake,
	qWebhookClaim, qClaimedEndpoint, qRecordedDelivery, qRecordDelivery, qPruneFinished}, qSMSInsertRows, qSMSChargeRows)

// MessageUpdateStatuses implements driver.Store: one write request for
// every change, with no savepoint of its own per change (a failure fails
// them all). Each change is an UPDATE ... WHERE status = (the status it
// moves from) ... RETURNING; FailureReason and ProviderMessageID are only
// written when non-empty, and UpdatedAt becomes p.At. A change from one
// status is tried as the UPDATE alone: the
// message is read only when it does not apply (to tell a missing message
// from a status that moved). Whether the workspace's endpoints subscribe
// to an event type is asked once per batch.
func (s *Store) MessageUpdateStatuses(ctx context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	out := make([]driver.MessageStatusResult, len(ps))
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		subscribed := map[[2]string]bool{}
		for i, p := range ps {
			after, changed, err := s.setStatus(ctx, tx, p)
			if out[i], err = sqlrows.StatusResult(after, changed, err, sql.ErrNoRows); err != nil {
				return err
			}
			if !out[i].Changed || p.Event == nil {
				continue
			}
			k := [2]string{p.Event.WorkspaceID, p.Event.Type}
			sub, ok := subscribed[k]
			if !ok {
				if err := s.rowTx(ctx, tx, qEventSubscribed, k[0], k[1]).Scan(&sub); err != nil {
					return err
				}
				subscribed[k] = sub
			}
			if sub {
				if err := s.insertEvent(ctx, tx, p.Event); err != nil {
					return err
				}
				out[i].Queued = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setStatus makes the change p in tx, without its event, and returns the
// message after it (as it is when its status is not in p.From).
// sql.ErrNoRows: the message does not exist.
func (s *Store) setStatus(ctx context.Context, tx *sql.Tx, p *driver.MessageStatusParams) (*messaging.Message, bool, error) {
	if len(p.From) == 1 {
		after, err := s.setStatusFrom(ctx, tx, p, p.From[0])
		if err == nil {
			return after, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, false, err
		}
	}
	// When that UPDATE did not apply, the status readSetStatus reads is
	// not p.From[0] (the writer is serialized): it does not update again.
	return s.readSetStatus(ctx, tx, p)
}

// readSetStatus reads the message and, when its status is in p.From, makes
// the change p from that status in tx, without its event. It returns the
// message after the change (as it is when its status is not in p.From).
// sql.ErrNoRows: the message does not exist.
func (s *Store) readSetStatus(ctx context.Context, tx *sql.Tx, p *driver.MessageStatusParams) (*messaging.Message, bool, error) {
	before, err := scanMessage(s.rowTx(ctx, tx, qMessageByWSID, p.ID, p.WorkspaceID))
	if err != nil {
		return nil, false, err
	}
	// The writer is serialized, so the status read above is the one the
	// update sees: check p.From here and update by that status.
	if !slices.Contains(p.From, before.Status) || (p.Unclaimed && (before.LeaseOwner != "" || before.UnconfirmedSince != nil)) {
		return before, false, nil
	}
	after, err := s.setStatusFrom(ctx, tx, p, before.Status)
	if err != nil {
		return nil, false, err
	}
	return after, true, nil
}

// setStatusFrom applies the change p to the message if its status is
// still from, and returns the message after it; sql.ErrNoRows when it did
// not apply.
func (s *Store) setStatusFrom(ctx context.Context, tx *sql.Tx, p *driver.MessageStatusParams, from string) (*messaging.Message, error) {
	return scanMessage(s.rowTx(ctx, tx, qMessageSetStatus, p.To, p.FailureReason, p.FailureReason, p.ProviderMessageID, p.ProviderMessageID, fmtTime(p.At),
		statushistory.Entry(p.To, p.At), p.ID, p.WorkspaceID, from, p.Unclaimed))
}

// MessageReceive implements driver.Store: MessageCreate's insert and,
// when it inserts, the event's deliveries, in one write transaction.
func (s *Store) MessageReceive(ctx context.Context, p *driver.MessageReceiveParams) (*messaging.Message, bool, error) {
	m := p.Message
	args, err := sqlrows.MessageInsertArgs(m, fmtTime)
	if err != nil {
		return nil, false, interpretError(err)
	}
	var stored *messaging.Message
	var created bool
	err = s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := affected(s.execTx(ctx, tx, qMessageInsert, args...))
		if err != nil {
			return err
		}
		if n == 0 {
			stored, err = scanMessage(s.rowTx(ctx, tx, qMessageByIdem, m.WorkspaceID, m.IdempotencyKey))
			return err
		}
		created = true
		stored = m.Clone()
		stored.History, stored.ReadAt = nil, nil // neither is inserted
		stored.CreatedAt, stored.UpdatedAt, stored.DueAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), m.DueAt.UTC()
		stored.SendAt = utcPtr(m.SendAt)
		if p.Event != nil {
			return s.queueEvent(ctx, tx, p.Event)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return stored, created, nil
}

// utcPtr returns *t in UTC (nil for nil), as a stored time reads back.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
