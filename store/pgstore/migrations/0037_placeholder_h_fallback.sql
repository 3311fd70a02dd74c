-- Placeholder on branch h-fallback for a migration another branch adds
-- with this number: the lead drops this file when merging.
SELECT 1;
