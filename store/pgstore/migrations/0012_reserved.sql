-- Reserved: version 12 is taken by a migration written on another branch at
-- the same time; this placeholder keeps the versions without gaps until the
-- two branches meet, when it is replaced by that migration.
SELECT 1;
