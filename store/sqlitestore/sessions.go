package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/store/internal/storedjson"
)

const sessionCols = `hash, id, subject, operator, workspaces, sms_accounts, binding, created_at, expires_at`

// qSessionGet finds a session by the hash of its token: a hot read (see
// hotReads), made on every dashboard request.
const qSessionGet = `SELECT ` + sessionCols + ` FROM sessions WHERE hash = ?`

// qSessionSweep deletes up to ? sessions that expired before ?, earliest
// first, walking sessions_expires.
const qSessionSweep = `DELETE FROM sessions WHERE hash IN (
	SELECT hash FROM sessions WHERE expires_at < ? ORDER BY expires_at LIMIT ?)`

// SessionCreate implements driver.Store.
func (s *Store) SessionCreate(ctx context.Context, st *driver.StoredSession) error {
	workspaces, err := storedjson.EncodeStrings(append([]string{}, st.Workspaces...))
	if err != nil {
		return interpretError(err)
	}
	smsAccounts, err := storedjson.EncodeStrings(append([]string{}, st.SMSAccounts...))
	if err != nil {
		return interpretError(err)
	}
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			st.Hash, st.ID, st.Subject, st.Operator, workspaces, smsAccounts, st.Binding, fmtTime(st.CreatedAt), fmtTime(st.ExpiresAt))
		return err
	})
}

// SessionGet implements driver.Store.
func (s *Store) SessionGet(ctx context.Context, hash string) (*driver.StoredSession, error) {
	var st driver.StoredSession
	var workspaces, smsAccounts *string
	err := s.queryRow(ctx, qSessionGet, hash).Scan(&st.Hash, &st.ID, &st.Subject, &st.Operator, &workspaces, &smsAccounts,
		&st.Binding, storedTime{&st.CreatedAt}, storedTime{&st.ExpiresAt})
	if err != nil {
		return nil, interpretError(err)
	}
	if st.Workspaces, err = storedjson.DecodeStrings(workspaces); err != nil {
		return nil, interpretError(err)
	}
	if st.SMSAccounts, err = storedjson.DecodeStrings(smsAccounts); err != nil {
		return nil, interpretError(err)
	}
	if st.Workspaces == nil {
		st.Workspaces = []string{}
	}
	if st.SMSAccounts == nil {
		st.SMSAccounts = []string{}
	}
	return &st, nil
}

// SessionDelete implements driver.Store.
func (s *Store) SessionDelete(ctx context.Context, hash string) error {
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
		return err
	})
}

// SessionSweep implements driver.Store (see qSessionSweep).
func (s *Store) SessionSweep(ctx context.Context, p *driver.SessionSweepParams) (int, error) {
	var n int64
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, qSessionSweep, fmtTime(p.Before), max(p.Limit, 0))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// SessionDeleteAll implements driver.Store.
func (s *Store) SessionDeleteAll(ctx context.Context) (int, error) {
	var n int64
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
