-- Placeholder (drop at merge).
SELECT 1;
