package pgstore

import (
	"context"

	"github.com/ujumbe/messaging/store/driver"
)

const sessionCols = `hash, id, subject, operator, workspaces, sms_accounts, binding, created_at, expires_at`

// qSessionSweep deletes up to $2 sessions that expired before $1, earliest
// first, walking sessions_expires. Rows another instance's sweep holds are
// skipped, so concurrent sweeps neither wait for each other nor delete the
// same session twice.
const qSessionSweep = `DELETE FROM sessions WHERE hash IN (
	SELECT hash FROM sessions WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`

// SessionCreate implements driver.Store.
func (s *Store) SessionCreate(ctx context.Context, st *driver.StoredSession) error {
	ctx = writeCtx(ctx)
	_, err := s.pool.Exec(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		st.Hash, st.ID, st.Subject, st.Operator, nonNil(st.Workspaces), nonNil(st.SMSAccounts), st.Binding, ts(st.CreatedAt), ts(st.ExpiresAt))
	return interpretError(err)
}

// SessionGet implements driver.Store.
func (s *Store) SessionGet(ctx context.Context, hash string) (*driver.StoredSession, error) {
	var st driver.StoredSession
	var created, expires int64
	err := s.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE hash = $1`, hash).Scan(
		&st.Hash, &st.ID, &st.Subject, &st.Operator, &st.Workspaces, &st.SMSAccounts, &st.Binding, &created, &expires)
	if err != nil {
		return nil, interpretError(err)
	}
	st.CreatedAt, st.ExpiresAt = fromTS(created), fromTS(expires)
	st.Workspaces, st.SMSAccounts = nonNil(st.Workspaces), nonNil(st.SMSAccounts)
	return &st, nil
}

// SessionDelete implements driver.Store.
func (s *Store) SessionDelete(ctx context.Context, hash string) error {
	_, err := s.pool.Exec(writeCtx(ctx), `DELETE FROM sessions WHERE hash = $1`, hash)
	return interpretError(err)
}

// SessionSweep implements driver.Store (see qSessionSweep).
func (s *Store) SessionSweep(ctx context.Context, p *driver.SessionSweepParams) (int, error) {
	tag, err := s.pool.Exec(writeCtx(ctx), qSessionSweep, ts(p.Before), max(p.Limit, 0))
	if err != nil {
		return 0, interpretError(err)
	}
	return int(tag.RowsAffected()), nil
}

// SessionDeleteAll implements driver.Store.
func (s *Store) SessionDeleteAll(ctx context.Context) (int, error) {
	tag, err := s.pool.Exec(writeCtx(ctx), `DELETE FROM sessions`)
	if err != nil {
		return 0, interpretError(err)
	}
	return int(tag.RowsAffected()), nil
}
