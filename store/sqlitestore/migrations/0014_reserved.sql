-- Reserved: version 14 is taken by a migration of another branch. This
-- placeholder keeps the versions without gaps until the branches merge,
-- when it is replaced by that migration.
SELECT 1;
