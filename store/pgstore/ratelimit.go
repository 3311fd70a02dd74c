package pgstore

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// RateLimiter is a token-bucket rate limiter (an httpapi.Limiter) whose
// buckets are rows of the table rate_limit_buckets, so that every server
// instance on the database takes from the same buckets and a limit of N
// requests a minute holds for the whole deployment, not per instance.
//
// A bucket holds at most perMinute tokens and refills continuously at
// perMinute tokens a minute, like the in-process default of httpapi. One
// request is one statement: an UPSERT that computes the tokens of the bucket
// from the time elapsed since its last use, takes one if there is one, and
// returns the outcome; concurrent requests on one bucket queue on its row
// lock, so none is counted twice or lost. Times come from the callers
// (httpapi's clock); a caller whose clock is behind the bucket's last use
// refills nothing but never moves the bucket back in time.
//
// The table is UNLOGGED and buckets idle for two minutes (full again) are
// deleted now and then, so it holds only the active buckets.
type RateLimiter struct {
	pool  *pgxpool.Pool
	calls atomic.Int64
}

// RateLimiter returns the store's rate limiter (the same one on every
// call). Use it as httpapi.Options.Limiter.
func (s *Store) RateLimiter() *RateLimiter {
	s.limiterOnce.Do(func() { s.limiter = &RateLimiter{pool: s.pool} })
	return s.limiter
}

// Idle buckets are deleted every sweepEvery calls of one RateLimiter when
// unused for bucketIdleTTL: a bucket refills completely within a minute,
// so deleting it later changes nothing.
const (
	sweepEvery    = 4096
	bucketIdleTTL = 2 * time.Minute
)

// qTakeToken takes one token from bucket $1 of capacity $2 at time $3 (ns),
// refilling $4 tokens a nanosecond since the bucket's last use. A new
// bucket starts full.
const qTakeToken = `INSERT INTO rate_limit_buckets AS b (key, tokens, allowed, updated_at)
	VALUES ($1, $2::float8 - 1, true, $3)
	ON CONFLICT (key) DO UPDATE SET
		tokens = CASE
			WHEN least($2::float8, b.tokens + greatest(0, $3 - b.updated_at)::float8 * $4::float8) >= 1
			THEN least($2::float8, b.tokens + greatest(0, $3 - b.updated_at)::float8 * $4::float8) - 1
			ELSE least($2::float8, b.tokens + greatest(0, $3 - b.updated_at)::float8 * $4::float8) END,
		allowed = least($2::float8, b.tokens + greatest(0, $3 - b.updated_at)::float8 * $4::float8) >= 1,
		updated_at = greatest(b.updated_at, $3)
	RETURNING tokens, allowed`

// Take implements httpapi.Limiter: it takes one token from the bucket of
// key, which allows perMinute requests a minute with a burst of perMinute,
// at time now. It returns whether the request is allowed, the whole tokens
// left and, when refused, the wait until a token is available. A
// perMinute of 0 or less allows everything.
func (l *RateLimiter) Take(ctx context.Context, key string, perMinute int, now time.Time) (allowed bool, remaining int, retryAfter time.Duration, err error) {
	if perMinute <= 0 {
		return true, 0, 0, nil
	}
	perNS := float64(perMinute) / float64(time.Minute)
	var tokens float64
	if err := l.pool.QueryRow(ctx, qTakeToken, key, float64(perMinute), ts(now), perNS).Scan(&tokens, &allowed); err != nil {
		return false, 0, 0, interpretError(err)
	}
	if l.calls.Add(1)%sweepEvery == 0 {
		// Housekeeping only: a failed sweep is retried by a later one and
		// does not change this request's outcome.
		_, _ = l.pool.Exec(ctx, `DELETE FROM rate_limit_buckets WHERE updated_at < $1`, ts(now.Add(-bucketIdleTTL)))
	}
	remaining = int(math.Max(0, math.Floor(tokens)))
	if !allowed {
		retryAfter = time.Duration(math.Ceil((1 - tokens) / perNS))
	}
	return allowed, remaining, retryAfter, nil
}
