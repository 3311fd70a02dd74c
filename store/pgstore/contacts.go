package pgstore

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/internal/sqlrows"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

func scanContact(row pgx.Row) (*messaging.Contact, error) {
	var c messaging.Contact
	var created, updated int64
	if err := row.Scan(sqlrows.ContactDest(&c, &c.Tags, &created, &updated)...); err != nil {
		return nil, err
	}
	c.Tags = nonNil(c.Tags)
	c.CreatedAt, c.UpdatedAt = fromTS(created), fromTS(updated)
	return &c, nil
}

// ContactCreate implements driver.Store. ErrNotFound if the workspace does
// not exist; ErrConflict if the id, or the phone or email key within the
// workspace, is taken (the unique indexes decide, so concurrent creates of
// one phone leave exactly one contact).
func (s *Store) ContactCreate(ctx context.Context, c *messaging.Contact) error {
	ctx = writeCtx(ctx)
	_, err := s.pool.Exec(ctx, `INSERT INTO contacts (`+sqlrows.ContactColumns+`,
		first_fold, last_fold, full_fold, phone_digits)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
		c.ID, c.WorkspaceID, c.FirstName, c.LastName, c.FullName, c.Phone, c.Email, c.EmailKey,
		c.Company, c.JobTitle, c.Website, c.Notes, c.Source, nonNil(c.Tags), c.Lifecycle, c.Version,
		ts(c.CreatedAt), ts(c.UpdatedAt),
		driver.SearchFold(c.FirstName), driver.SearchFold(c.LastName), driver.SearchFold(c.FullName),
		driver.PhoneDigits(c.Phone))
	return interpretError(err)
}

// ContactGet implements driver.Store.
func (s *Store) ContactGet(ctx context.Context, workspaceID, id string) (*messaging.Contact, error) {
	c, err := scanContact(s.pool.QueryRow(ctx, `SELECT `+sqlrows.ContactColumns+` FROM contacts WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	return c, interpretError(err)
}

// ContactUpdate implements driver.Store. Every field is replaced except
// the id, the workspace, CreatedAt and Source, which a contact keeps for
// life. The version check and the update are one statement.
func (s *Store) ContactUpdate(ctx context.Context, p *driver.ContactReplaceParams) error {
	ctx = writeCtx(ctx)
	c := p.Contact
	var updated bool
	err := s.pool.QueryRow(ctx, `WITH u AS (
			UPDATE contacts SET
				first_name = $3, last_name = $4, full_name = $5, phone = $6, email = $7, email_key = $8,
				company = $9, job_title = $10, website = $11, notes = $12, tags = $13, lifecycle = $14,
				version = $15, updated_at = $16,
				first_fold = $17, last_fold = $18, full_fold = $19, phone_digits = $20
			WHERE id = $1 AND workspace_id = $2 AND version = $21
			RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM u) FROM contacts WHERE id = $1 AND workspace_id = $2`,
		c.ID, c.WorkspaceID,
		c.FirstName, c.LastName, c.FullName, c.Phone, c.Email, c.EmailKey,
		c.Company, c.JobTitle, c.Website, c.Notes, nonNil(c.Tags), c.Lifecycle,
		c.Version, ts(c.UpdatedAt),
		driver.SearchFold(c.FirstName), driver.SearchFold(c.LastName), driver.SearchFold(c.FullName),
		driver.PhoneDigits(c.Phone), p.PrevVersion).Scan(&updated)
	if err != nil {
		return interpretError(err) // no row: not found; 23505: conflict
	}
	if !updated {
		return driver.ErrStale
	}
	return nil
}

// contactFilter returns the WHERE clause and arguments selecting the
// contacts of p. A search is a disjunction of prefix ranges, each repeating
// the workspace id so that PostgreSQL runs it as a BitmapOr of range scans
// on the (workspace_id, column) indexes. Ranges compare bytes (COLLATE
// "C"), so '%' and '_' in the search are literal.
func contactFilter(p *driver.ContactListParams) (string, []any) {
	args := []any{p.WorkspaceID}
	if p.Search == "" {
		return `workspace_id = $1`, args
	}
	// bounds adds the arguments of the range of strings starting with
	// prefix and returns their placeholders (hi is empty when unbounded).
	bounds := func(prefix string) (lo, hi string) {
		args = append(args, prefix)
		lo = "$" + strconv.Itoa(len(args))
		if succ, ok := prefixSuccessor(prefix); ok {
			args = append(args, succ)
			hi = "$" + strconv.Itoa(len(args))
		}
		return lo, hi
	}
	// prefixRange selects the rows whose col is in [lo, hi); the partial
	// indexes of email_key and phone_digits need their predicate repeated.
	prefixRange := func(col, lo, hi string, partial bool) string {
		cond := `(workspace_id = $1 AND `
		if partial {
			cond += col + ` <> '' AND `
		}
		cond += col + ` >= ` + lo
		if hi != "" {
			cond += ` AND ` + col + ` < ` + hi
		}
		return cond + `)`
	}
	lo, hi := bounds(p.Search)
	or := []string{
		prefixRange("first_fold", lo, hi, false),
		prefixRange("last_fold", lo, hi, false),
		prefixRange("full_fold", lo, hi, false),
		prefixRange("email_key", lo, hi, true),
	}
	if p.PhoneDigits != "" {
		plo, phi := bounds(p.PhoneDigits)
		or = append(or, prefixRange("phone_digits", plo, phi, true))
	}
	return "(" + strings.Join(or, "\n\t\tOR ") + ")", args
}

// ContactList implements driver.Store. The page and the total are read
// from one snapshot (a REPEATABLE READ read-only transaction).
func (s *Store) ContactList(ctx context.Context, p *driver.ContactListParams) ([]*messaging.Contact, int, error) {
	out := []*messaging.Contact{}
	if !utf8.ValidString(p.Search) || !utf8.ValidString(p.PhoneDigits) {
		return out, 0, nil // no stored text is invalid UTF-8
	}
	where, args := contactFilter(p)
	var total int
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		out = out[:0]
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM contacts WHERE `+where, args...).Scan(&total); err != nil {
			return err
		}
		if p.Limit <= 0 || p.Offset >= total {
			return nil
		}
		n := len(args)
		page, err := queryAll(ctx, tx, scanContact, `SELECT `+sqlrows.ContactColumns+` FROM contacts WHERE `+where+`
			ORDER BY created_at DESC, id DESC LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2),
			append(args, p.Limit, max(p.Offset, 0))...)
		out = append(out, page...)
		return err
	})
	if err != nil {
		return nil, 0, interpretError(err)
	}
	return out, total, nil
}
