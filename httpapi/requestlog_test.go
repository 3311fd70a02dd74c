package httpapi_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/memstore"
)

// sendsFail is a store whose message inserts fail while broken is set,
// with an error the handler logs as an internal error.
type sendsFail struct {
	driver.Store
	broken bool
}

func (s *sendsFail) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	if s.broken {
		return nil, false, errors.New("disk on fire")
	}
	return s.Store.MessageCreate(ctx, m)
}

// TestRequestLog: by default the handler logs one line per request;
// Options.DisableRequestLog drops those lines and keeps the internal
// error of a failing store.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		disable  bool
		requests int // request lines wanted
	}{
		{"default", false, 2},
		{"disabled", true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			log := slog.New(slog.NewTextHandler(logs, nil))
			st := &sendsFail{Store: memstore.New()}
			e := setupOn(t, st, &messaging.Options{Logger: log}, func(o *httpapi.Options) {
				o.Logger, o.DisableRequestLog = log, c.disable
			})
			before := strings.Count(logs.String(), "msg=request ")
			expect(t, e.call(t, "GET", "/v1/contacts", "A", nil), 200, "", "")
			st.broken = true
			// doRaw: the invariant checks refuse every 500.
			r := e.doRaw(request{method: "POST", path: "/v1/messages", key: e.keyOf(t, "A"), body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"x"}`})
			if r.status != 500 {
				t.Fatalf("POST /v1/messages on a failing store: status %d, want 500: %s", r.status, r.body)
			}
			st.broken = false
			got := logs.String()
			if n := strings.Count(got, "msg=request ") - before; n != c.requests {
				t.Errorf("%d request lines, want %d; log:\n%s", n, c.requests, got)
			}
			if !strings.Contains(got, `msg="internal error"`) || !strings.Contains(got, "disk on fire") {
				t.Errorf("the internal error is not in the log:\n%s", got)
			}
		})
	}
}
