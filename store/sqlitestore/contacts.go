package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/ujumbe/messaging"
)

const contactCols = `id, workspace_id, first_name, last_name, full_name, phone, email, email_key,
	company, job_title, website, notes, source, tags, lifecycle, version, created_at, updated_at`

func scanContact(sc scanner) (*messaging.Contact, error) {
	var c messaging.Contact
	var tags, created, updated string
	if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.FirstName, &c.LastName, &c.FullName, &c.Phone, &c.Email, &c.EmailKey,
		&c.Company, &c.JobTitle, &c.Website, &c.Notes, &c.Source, &tags, &c.Lifecycle, &c.Version, &created, &updated); err != nil {
		return nil, err
	}
	c.Tags = []string{}
	if err := json.Unmarshal([]byte(tags), &c.Tags); err != nil {
		return nil, err
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	var err error
	if c.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if c.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, err
	}
	return &c, nil
}

// encodeTags returns the JSON array of tags; nil is stored as [].
func encodeTags(tags []string) (string, error) {
	if tags == nil {
		tags = []string{}
	}
	b, err := json.Marshal(tags)
	return string(b), err
}

// ContactCreate implements messaging.Store. ErrNotFound if the workspace does
// not exist; ErrConflict if the id, or the phone or email key within the
// workspace, is taken.
func (s *Store) ContactCreate(ctx context.Context, c *messaging.Contact) error {
	tags, err := encodeTags(c.Tags)
	if err != nil {
		return interpretError(err)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO contacts (`+contactCols+`,
		first_fold, last_fold, full_fold, phone_digits)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.WorkspaceID, c.FirstName, c.LastName, c.FullName, c.Phone, c.Email, c.EmailKey,
		c.Company, c.JobTitle, c.Website, c.Notes, c.Source, tags, c.Lifecycle, c.Version,
		fmtTime(c.CreatedAt), fmtTime(c.UpdatedAt),
		messaging.SearchFold(c.FirstName), messaging.SearchFold(c.LastName), messaging.SearchFold(c.FullName),
		messaging.PhoneDigits(c.Phone))
	return interpretError(err)
}

// ContactGet implements messaging.Store.
func (s *Store) ContactGet(ctx context.Context, workspaceID, id string) (*messaging.Contact, error) {
	c, err := scanContact(s.r.QueryRowContext(ctx, `SELECT `+contactCols+` FROM contacts WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if err != nil {
		return nil, interpretError(err)
	}
	return c, nil
}

// ContactUpdate implements messaging.Store. Every field is replaced except
// the id, the workspace, CreatedAt and Source, which a contact keeps for
// life.
func (s *Store) ContactUpdate(ctx context.Context, c *messaging.Contact, prevVersion int64) error {
	tags, err := encodeTags(c.Tags)
	if err != nil {
		return interpretError(err)
	}
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE contacts SET
			first_name = ?, last_name = ?, full_name = ?, phone = ?, email = ?, email_key = ?,
			company = ?, job_title = ?, website = ?, notes = ?, tags = ?, lifecycle = ?,
			version = ?, updated_at = ?,
			first_fold = ?, last_fold = ?, full_fold = ?, phone_digits = ?
			WHERE id = ? AND workspace_id = ? AND version = ?`,
			c.FirstName, c.LastName, c.FullName, c.Phone, c.Email, c.EmailKey,
			c.Company, c.JobTitle, c.Website, c.Notes, tags, c.Lifecycle,
			c.Version, fmtTime(c.UpdatedAt),
			messaging.SearchFold(c.FirstName), messaging.SearchFold(c.LastName), messaging.SearchFold(c.FullName),
			messaging.PhoneDigits(c.Phone),
			c.ID, c.WorkspaceID, prevVersion)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM contacts WHERE id = ? AND workspace_id = ?`, c.ID, c.WorkspaceID).Scan(&one); err != nil {
			return err // sql.ErrNoRows: not found
		}
		return messaging.ErrStale
	})
}

// contactFilter returns the WHERE clause and arguments selecting the
// contacts of p. A search is a disjunction of prefix ranges, each repeating
// the workspace id so that SQLite runs it as a multi-index OR: one range
// scan per (workspace_id, column) index. Ranges compare bytes, so '%' and
// '_' in the search are literal.
func contactFilter(p *messaging.ContactListParams) (string, []any) {
	ws := sql.Named("ws", p.WorkspaceID)
	if p.Search == "" {
		return `workspace_id = @ws`, []any{ws}
	}
	where := `(workspace_id = @ws AND first_fold >= @lo AND first_fold < @hi)
		OR (workspace_id = @ws AND last_fold >= @lo AND last_fold < @hi)
		OR (workspace_id = @ws AND full_fold >= @lo AND full_fold < @hi)
		OR (workspace_id = @ws AND email_key <> '' AND email_key >= @lo AND email_key < @hi)`
	args := []any{ws, sql.Named("lo", p.Search), sql.Named("hi", prefixUpper(p.Search))}
	if p.PhoneDigits != "" {
		where += `
		OR (workspace_id = @ws AND phone_digits <> '' AND phone_digits >= @plo AND phone_digits < @phi)`
		args = append(args, sql.Named("plo", p.PhoneDigits), sql.Named("phi", prefixUpper(p.PhoneDigits)))
	}
	return where, args
}

// ContactList implements messaging.Store. The page and the total are read
// from one snapshot.
func (s *Store) ContactList(ctx context.Context, p *messaging.ContactListParams) ([]*messaging.Contact, int, error) {
	where, args := contactFilter(p)
	out := []*messaging.Contact{}
	var total int
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM contacts WHERE `+where, args...).Scan(&total); err != nil {
			return err
		}
		if p.Limit <= 0 || p.Offset >= total {
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+contactCols+` FROM contacts WHERE `+where+`
			ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`,
			append(args, sql.Named("limit", p.Limit), sql.Named("offset", max(p.Offset, 0)))...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanContact(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}
