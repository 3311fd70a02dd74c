package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/storedjson"
)

const templateCols = `id, workspace_id, name, category, language, status, components, status_reason, created_at, updated_at,
	provider_template_id, quality`

func scanTemplate(sc scanner) (*messaging.Template, error) {
	var t messaging.Template
	var comps *string
	if err := sc.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.Category, &t.Language, &t.Status, &comps,
		&t.StatusReason, storedTime{&t.CreatedAt}, storedTime{&t.UpdatedAt}, &t.ProviderTemplateID, &t.Quality); err != nil {
		return nil, err
	}
	var err error
	if t.Components, err = storedjson.DecodeTemplateComponents(comps); err != nil {
		return nil, err
	}
	return &t, nil
}

// TemplateCreate implements driver.Store. ErrNotFound if the workspace
// does not exist; ErrConflict if the id, or the name and language within the
// workspace, is taken. SendExample is derived and not stored.
func (s *Store) TemplateCreate(ctx context.Context, t *messaging.Template) error {
	comps, err := storedjson.EncodeTemplateComponents(t.Components)
	if err != nil {
		return interpretError(err)
	}
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO templates (`+templateCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.WorkspaceID, t.Name, t.Category, t.Language, t.Status, comps, t.StatusReason,
			fmtTime(t.CreatedAt), fmtTime(t.UpdatedAt), t.ProviderTemplateID, t.Quality)
		return err
	})
}

func (s *Store) templateWhere(ctx context.Context, where string, args ...any) (*messaging.Template, error) {
	t, err := scanTemplate(s.r.QueryRowContext(ctx, `SELECT `+templateCols+` FROM templates WHERE `+where, args...))
	if err != nil {
		return nil, interpretError(err)
	}
	return t, nil
}

// TemplateGet implements driver.Store.
func (s *Store) TemplateGet(ctx context.Context, workspaceID, id string) (*messaging.Template, error) {
	return s.templateWhere(ctx, `id = ? AND workspace_id = ?`, id, workspaceID)
}

// TemplateGetByName implements driver.Store.
func (s *Store) TemplateGetByName(ctx context.Context, p *driver.TemplateGetByNameParams) (*messaging.Template, error) {
	return s.templateWhere(ctx, `workspace_id = ? AND name = ? AND language = ?`, p.WorkspaceID, p.Name, p.Language)
}

// TemplateList implements driver.Store.
func (s *Store) TemplateList(ctx context.Context, p *driver.TemplateListParams) ([]*messaging.Template, error) {
	q := `SELECT ` + templateCols + ` FROM templates WHERE workspace_id = ?`
	args := []any{p.WorkspaceID}
	for _, f := range []struct{ col, v string }{{"status", p.Status}, {"category", p.Category}, {"language", p.Language}} {
		if f.v != "" {
			q += ` AND ` + f.col + ` = ?`
			args = append(args, f.v)
		}
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY name, language, id`, args...)
	out, err := collect(rows, err, scanTemplate)
	return out, interpretError(err)
}

// TemplateSetStatus implements driver.Store. The reason replaces
// StatusReason (an empty reason clears it).
func (s *Store) TemplateSetStatus(ctx context.Context, p *driver.TemplateStatusParams) (*messaging.Template, error) {
	var out *messaging.Template
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		args := []any{p.To, p.Reason, fmtTime(p.At), p.ID, p.WorkspaceID}
		for _, f := range p.From {
			args = append(args, f)
		}
		t, err := scanTemplate(tx.QueryRowContext(ctx, `UPDATE templates SET status = ?, status_reason = ?, updated_at = ?
			WHERE id = ? AND workspace_id = ? AND status IN (`+placeholders(len(p.From))+`)
			RETURNING `+templateCols, args...))
		if err == nil {
			out = t
			return nil
		}
		if err != sql.ErrNoRows {
			return err
		}
		return missingOrStale(ctx, tx, "templates", p.WorkspaceID, p.ID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TemplateUpdate implements driver.Store. SendExample is derived and not
// stored.
func (s *Store) TemplateUpdate(ctx context.Context, p *driver.TemplateUpdateParams) error {
	t := p.Template
	comps, err := storedjson.EncodeTemplateComponents(t.Components)
	if err != nil {
		return interpretError(err)
	}
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		args := []any{t.Name, t.Category, t.Language, t.Status, comps, t.StatusReason, fmtTime(t.UpdatedAt),
			t.ProviderTemplateID, t.Quality, t.ID, t.WorkspaceID}
		for _, f := range p.From {
			args = append(args, f)
		}
		n, err := affected(tx.ExecContext(ctx, `UPDATE templates SET name = ?, category = ?, language = ?, status = ?,
			components = ?, status_reason = ?, updated_at = ?, provider_template_id = ?, quality = ?
			WHERE id = ? AND workspace_id = ? AND status IN (`+placeholders(len(p.From))+`)`, args...))
		if err != nil || n == 1 {
			return err
		}
		return missingOrStale(ctx, tx, "templates", t.WorkspaceID, t.ID)
	})
}

// TemplateDelete implements driver.Store.
func (s *Store) TemplateDelete(ctx context.Context, workspaceID, id string) error {
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return oneRow(tx.ExecContext(ctx, `DELETE FROM templates WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	})
}
