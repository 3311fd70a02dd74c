-- Placeholder for the scheduled sends migration (another branch's 0034):
-- migrations are numbered without gaps. Delete this file when that branch
-- is merged.
SELECT 1;
