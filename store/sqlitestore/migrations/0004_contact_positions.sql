-- Contact lists and searches that stay fast on large workspaces.
--
-- list_pos is a contact's position in its workspace's list order,
-- (created_at, id), from 1 for the oldest: the positions of a workspace are
-- always exactly 1..count. The trigger keeps them so on every insert (an
-- insert older than the newest shifts the newer contacts up by one;
-- created_at and id never change, and contacts are only deleted with their
-- workspace). A page of the newest-first list is then a range of positions
-- read from an index, however deep the page, and the total is the greatest
-- position.
--
-- The search indexes carry the other search columns and list_pos, so that a
-- search counts its matches and finds its page without reading table rows
-- (see contacts.go). A first-name match is always a full-name match (the full
-- name starts with the first name), so the first name needs no index and
-- its column goes.
ALTER TABLE contacts ADD COLUMN list_pos INTEGER NOT NULL DEFAULT 0;
UPDATE contacts SET list_pos = r.n
FROM (SELECT rowid AS rid, row_number() OVER (PARTITION BY workspace_id ORDER BY created_at, id) AS n FROM contacts) AS r
WHERE contacts.rowid = r.rid;

CREATE TRIGGER contacts_list_pos AFTER INSERT ON contacts BEGIN
    UPDATE contacts SET list_pos = 1 + coalesce((
        SELECT p.list_pos FROM contacts AS p
        WHERE p.workspace_id = NEW.workspace_id AND (p.created_at, p.id) < (NEW.created_at, NEW.id)
        ORDER BY p.created_at DESC, p.id DESC LIMIT 1), 0)
    WHERE rowid = NEW.rowid;
    UPDATE contacts SET list_pos = list_pos + 1
    WHERE workspace_id = NEW.workspace_id AND (created_at, id) > (NEW.created_at, NEW.id);
END;

DROP INDEX contacts_first_fold;
DROP INDEX contacts_last_fold;
DROP INDEX contacts_full_fold;
DROP INDEX contacts_phone_digits;
ALTER TABLE contacts DROP COLUMN first_fold;

CREATE INDEX contacts_list ON contacts (workspace_id, list_pos, full_fold, last_fold, email_key, phone_digits);
CREATE INDEX contacts_search_full ON contacts (workspace_id, full_fold, phone_digits, list_pos);
CREATE INDEX contacts_search_last ON contacts (workspace_id, last_fold, full_fold, phone_digits, list_pos);
CREATE INDEX contacts_search_email ON contacts (workspace_id, email_key, full_fold, last_fold, phone_digits, list_pos)
    WHERE email_key <> '';
CREATE INDEX contacts_search_phone ON contacts (workspace_id, phone_digits, list_pos) WHERE phone_digits <> '';
