-- A workspace's contacts_version changes in the transaction of every
-- change to what its contact searches count: a contact inserted, or its
-- folded names, email key or phone digits updated. The store keeps the
-- exact totals of recent searches with the version they were counted at,
-- and counts again only when the version read in the search's own snapshot
-- differs, so a repeated search (the next page of the same query) does not
-- count its matches again, and a total is never stale.
ALTER TABLE workspaces ADD COLUMN contacts_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER contacts_version_insert AFTER INSERT ON contacts BEGIN
    UPDATE workspaces SET contacts_version = contacts_version + 1 WHERE id = NEW.workspace_id;
END;

CREATE TRIGGER contacts_version_update AFTER UPDATE OF workspace_id, full_fold, last_fold, email_key, phone_digits ON contacts BEGIN
    UPDATE workspaces SET contacts_version = contacts_version + 1 WHERE id IN (OLD.workspace_id, NEW.workspace_id);
END;
