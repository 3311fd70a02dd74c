package migrationfiles

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	good := fstest.MapFS{
		"m/0002_b.sql": {Data: []byte("B")},
		"m/0001_a.sql": {Data: []byte("A")},
		"m/README":     {Data: []byte("not a migration")},
	}
	got, err := Load(good, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{{1, "0001_a.sql", "A"}, {2, "0002_b.sql", "B"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Load (-want +got):\n%s", d)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":        {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"repeat":     {"m/0001_a.sql": {}, "m/0001_b.sql": {}},
		"no version": {"m/init.sql": {}},
		"zero":       {"m/0000_a.sql": {}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: Load accepted %v", name, fsys)
		}
	}
}
