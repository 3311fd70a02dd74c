-- Token buckets of the HTTP rate limits shared by every server instance
-- (see RateLimiter). UNLOGGED: no WAL is written for them, and after a
-- crash of the database server the table is empty, which only means every
-- bucket starts full again.

CREATE UNLOGGED TABLE rate_limit_buckets (
    key        text COLLATE "C" PRIMARY KEY,
    tokens     double precision NOT NULL,
    allowed    boolean NOT NULL,
    updated_at bigint NOT NULL
);
CREATE INDEX rate_limit_buckets_updated ON rate_limit_buckets (updated_at);
