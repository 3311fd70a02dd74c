package pgstore

import (
	"context"
	"strconv"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/storedjson"
)

const templateCols = `id, workspace_id, name, category, language, status, components::text, status_reason, created_at, updated_at,
	provider_template_id, quality`

const templateInsertCols = `id, workspace_id, name, category, language, status, components, status_reason, created_at, updated_at,
	provider_template_id, quality`

func scanTemplate(row pgx.Row) (*messaging.Template, error) {
	var t messaging.Template
	var comps *string
	var created, updated int64
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.Category, &t.Language, &t.Status, &comps,
		&t.StatusReason, &created, &updated, &t.ProviderTemplateID, &t.Quality); err != nil {
		return nil, err
	}
	var err error
	if t.Components, err = storedjson.DecodeTemplateComponents(comps); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt = fromTS(created), fromTS(updated)
	return &t, nil
}

// TemplateCreate implements driver.Store. ErrNotFound if the workspace
// does not exist; ErrConflict if the id, or the name and language within the
// workspace, is taken. SendExample is derived and not stored.
func (s *Store) TemplateCreate(ctx context.Context, t *messaging.Template) error {
	ctx = writeCtx(ctx)
	comps, err := storedjson.EncodeTemplateComponents(t.Components)
	if err != nil {
		return interpretError(err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO templates (`+templateInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		t.ID, t.WorkspaceID, t.Name, t.Category, t.Language, t.Status, comps, t.StatusReason,
		ts(t.CreatedAt), ts(t.UpdatedAt), t.ProviderTemplateID, t.Quality)
	return interpretError(err)
}

func (s *Store) templateWhere(ctx context.Context, where string, args ...any) (*messaging.Template, error) {
	t, err := scanTemplate(s.pool.QueryRow(ctx, `SELECT `+templateCols+` FROM templates WHERE `+where, args...))
	return t, interpretError(err)
}

// TemplateGet implements driver.Store.
func (s *Store) TemplateGet(ctx context.Context, workspaceID, id string) (*messaging.Template, error) {
	return s.templateWhere(ctx, `id = $1 AND workspace_id = $2`, id, workspaceID)
}

// TemplateGetByName implements driver.Store.
func (s *Store) TemplateGetByName(ctx context.Context, p *driver.TemplateGetByNameParams) (*messaging.Template, error) {
	return s.templateWhere(ctx, `workspace_id = $1 AND name = $2 AND language = $3`, p.WorkspaceID, p.Name, p.Language)
}

// TemplateList implements driver.Store.
func (s *Store) TemplateList(ctx context.Context, p *driver.TemplateListParams) ([]*messaging.Template, error) {
	q := `SELECT ` + templateCols + ` FROM templates WHERE workspace_id = $1`
	args := []any{p.WorkspaceID}
	for _, f := range []struct{ col, v string }{{"status", p.Status}, {"category", p.Category}, {"language", p.Language}} {
		if f.v != "" {
			args = append(args, f.v)
			q += ` AND ` + f.col + ` = $` + strconv.Itoa(len(args))
		}
	}
	out, err := queryAll(ctx, s.pool, scanTemplate, q+` ORDER BY name, language, id`, args...)
	return out, interpretError(err)
}

// TemplateSetStatus implements driver.Store. The reason replaces
// StatusReason (an empty reason clears it). The status check and the
// update are one statement.
func (s *Store) TemplateSetStatus(ctx context.Context, p *driver.TemplateStatusParams) (*messaging.Template, error) {
	ctx = writeCtx(ctx)
	t, err := scanTemplate(s.pool.QueryRow(ctx, `UPDATE templates SET status = $1, status_reason = $2, updated_at = $3
		WHERE id = $4 AND workspace_id = $5 AND status = ANY($6::text[])
		RETURNING `+templateCols, p.To, p.Reason, ts(p.At), p.ID, p.WorkspaceID, nonNil(p.From)))
	if err == nil {
		return t, nil
	}
	if err != pgx.ErrNoRows {
		return nil, interpretError(err)
	}
	var one int
	if err := s.pool.QueryRow(ctx, `SELECT 1 FROM templates WHERE id = $1 AND workspace_id = $2`, p.ID, p.WorkspaceID).Scan(&one); err != nil {
		return nil, interpretError(err) // no row: not found
	}
	return nil, driver.ErrStale
}

// TemplateUpdate implements driver.Store. SendExample is derived and not
// stored. The status check and the update are one statement.
func (s *Store) TemplateUpdate(ctx context.Context, p *driver.TemplateUpdateParams) error {
	ctx = writeCtx(ctx)
	t := p.Template
	comps, err := storedjson.EncodeTemplateComponents(t.Components)
	if err != nil {
		return interpretError(err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE templates SET name = $1, category = $2, language = $3, status = $4,
		components = $5, status_reason = $6, updated_at = $7, provider_template_id = $8, quality = $9
		WHERE id = $10 AND workspace_id = $11 AND status = ANY($12::text[])`,
		t.Name, t.Category, t.Language, t.Status, comps, t.StatusReason, ts(t.UpdatedAt), t.ProviderTemplateID, t.Quality,
		t.ID, t.WorkspaceID, nonNil(p.From))
	if err != nil || tag.RowsAffected() == 1 {
		return interpretError(err)
	}
	var one int
	if err := s.pool.QueryRow(ctx, `SELECT 1 FROM templates WHERE id = $1 AND workspace_id = $2`, t.ID, t.WorkspaceID).Scan(&one); err != nil {
		return interpretError(err) // no row: not found
	}
	return driver.ErrStale
}

// TemplateDelete implements driver.Store.
func (s *Store) TemplateDelete(ctx context.Context, workspaceID, id string) error {
	ctx = writeCtx(ctx)
	tag, err := s.pool.Exec(ctx, `DELETE FROM templates WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
	if err == nil && tag.RowsAffected() == 0 {
		return messaging.ErrNotFound
	}
	return interpretError(err)
}
