package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestAlertRules checks the alert rules the README gives (Operations ->
// Alerts) with Prometheus's promtool: `promtool check rules` (they parse,
// their expressions and templates are valid), then `promtool test rules`
// with testdata/alerts_test.yml (each alert fires on the series it is
// meant for, with its labels and summary, and not on the ones it is not).
// promtool comes from MESSAGING_PROMTOOL, PATH or .ci/promtool, which
// installs Debian's prometheus package; the test fails rather than skips
// without it.
func TestAlertRules(t *testing.T) {
	promtool, err := findOrInstall("promtool")
	if err != nil {
		t.Fatalf("promtool: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?ms)^```yaml\n(groups:\n.*?)^```$").FindAllSubmatch(readme, -1)
	if len(blocks) != 1 {
		t.Fatalf("the README has %d yaml blocks of alert rules (groups:), want 1", len(blocks))
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), blocks[0][1], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out.String())
		}
	}
}
