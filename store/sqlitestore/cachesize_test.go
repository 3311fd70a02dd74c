package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
)

// Every reader connection's page cache is Options.ReaderCacheKiB (1 MiB by
// default); the writer keeps SQLite's default.
func TestReaderCacheSize(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opts *Options
		want int
	}{{nil, -DefaultReaderCacheKiB}, {&Options{ReaderCacheKiB: 256, MaxReaders: 2}, -256}} {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "db.sqlite"), c.opts)
		if err != nil {
			t.Fatal(err)
		}
		// Hold every reader connection at once, so that each is asked.
		n := MinDefaultReaders
		if c.opts != nil {
			n = c.opts.MaxReaders
		}
		for i := range n {
			conn, err := s.r.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var got int
			if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("opts %+v: reader %d: cache_size = %d, want %d", c.opts, i, got, c.want)
			}
		}
		var w int
		if err := s.w.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&w); err != nil {
			t.Fatal(err)
		}
		if w != -2000 {
			t.Errorf("opts %+v: writer cache_size = %d, want SQLite's default -2000", c.opts, w)
		}
		t.Cleanup(func() { _ = s.Close() })
	}
}
