package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandsAlone: the client (its non-test package and everything it
// imports) holds no package of this module but itself and webhooksig, and
// none of the server's heavy dependencies, so a program using only the
// client links neither the server library nor cgo, OpenTelemetry or
// libphonenumber.
func TestStandsAlone(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/ujumbe/messaging/client").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	allowed := map[string]bool{"github.com/ujumbe/messaging/client": true, "github.com/ujumbe/messaging/webhooksig": true}
	forbidden := []string{"go.opentelemetry.io/", "github.com/nyaruka/phonenumbers", "github.com/mattn/go-sqlite3", "github.com/jackc/pgx", "golang.org/x/time/rate"}
	var found bool
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/ujumbe/messaging/client" {
			found = true
		}
		if (pkg == "github.com/ujumbe/messaging" || strings.HasPrefix(pkg, "github.com/ujumbe/messaging/")) && !allowed[pkg] {
			t.Errorf("the client imports %s of this module", pkg)
		}
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("the client imports %s", pkg)
			}
		}
	}
	if !found {
		t.Fatalf("go list did not list the client: %s", out)
	}
}
