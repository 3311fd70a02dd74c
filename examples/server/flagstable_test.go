package main

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFlagsTable: the README's "Server flags" table lists every flag of
// the server with its environment variable, and no flag the server does
// not have, so the table cannot drift from the flag set.
func TestFlagsTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "### Server flags\n")
	if !ok {
		t.Fatal("the README has no Server flags section")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	flagRe, envRe := regexp.MustCompile("`-([a-z0-9-]+)`"), regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	documented := map[string][]string{} // flag -> the env vars of its row
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| ") {
			continue
		}
		for _, m := range flagRe.FindAllStringSubmatch(cells[1], -1) {
			documented[m[1]] = nil
			for _, e := range envRe.FindAllStringSubmatch(cells[2], -1) {
				documented[m[1]] = append(documented[m[1]], e[1])
			}
		}
	}
	envOf := regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]+)\)$`)
	fs := flagSet(&config{tc: &telemetryConfig{}})
	fs.VisitAll(func(f *flag.Flag) {
		envs, ok := documented[f.Name]
		if !ok {
			t.Errorf("flag -%s is not in the README's flags table", f.Name)
			return
		}
		delete(documented, f.Name)
		m := envOf.FindStringSubmatch(f.Usage)
		if m == nil {
			t.Errorf("flag -%s: its usage does not end with (env NAME): %q", f.Name, f.Usage)
			return
		}
		if !slices.Contains(envs, m[1]) {
			t.Errorf("flag -%s: the README gives env %v, the flag reads %s", f.Name, envs, m[1])
		}
	})
	for name := range documented {
		t.Errorf("the README's flags table lists -%s, which the server does not have", name)
	}
}
