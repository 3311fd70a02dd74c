package messaging_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// earlyProvider accepts every send with the provider id "wamid.<n>" and,
// like Meta, pushes its status reports about the message before its
// answer to the send reaches the dispatcher: Send applies early (in order)
// to the Sink, then returns.
type earlyProvider struct {
	metaChannels
	svc   *messaging.Service
	early []string
	n     atomic.Int64
	mu    sync.Mutex
	// results are the Sink's answers to the early reports.
	results []string
}

func (p *earlyProvider) Send(ctx context.Context, _ *messaging.ChannelSender, _ *messaging.Message) (*messaging.SendReceipt, error) {
	pid := fmt.Sprintf("wamid.%d", p.n.Add(1))
	for _, st := range p.early {
		changed, err := p.svc.ApplyProviderStatus(ctx, &messaging.ProviderStatus{ProviderMessageID: pid, Status: st})
		p.mu.Lock()
		p.results = append(p.results, fmt.Sprintf("%s: %v %v", st, changed, err))
		p.mu.Unlock()
	}
	return &messaging.SendReceipt{ProviderMessageID: pid}, nil
}

// hookStore runs beforeSave, once, before the first PendingReportSave
// reaches the store, and can fail saves.
type hookStore struct {
	driver.Store
	beforeSave func()
	once       sync.Once
	failSave   atomic.Bool
}

func (s *hookStore) PendingReportSave(ctx context.Context, p *driver.PendingReportSaveParams) (bool, error) {
	if s.beforeSave != nil {
		s.once.Do(s.beforeSave)
	}
	if s.failSave.Load() {
		return false, errors.New("disk I/O error")
	}
	return s.Store.PendingReportSave(ctx, p)
}

// pendingFixture is a Service with a dispatcher on one of the stores, a
// fake clock and the workspace "acme".
type pendingFixture struct {
	ctx    context.Context
	svc    *messaging.Service
	clock  *fakeClock
	store  *hookStore
	prov   *earlyProvider
	events *eventLog
	ws     *messaging.Workspace
}

// pendingStores are the stores the tests of kept reports run on.
var pendingStores = []struct {
	name string
	open func(t *testing.T) driver.Store
}{
	{"memstore", func(*testing.T) driver.Store { return memstore.New() }},
	{"sqlitestore", func(t *testing.T) driver.Store {
		st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
}

func setupPending(t *testing.T, st driver.Store, retention time.Duration) *pendingFixture {
	t.Helper()
	f := &pendingFixture{ctx: context.Background(), clock: newFakeClock(t0), store: &hookStore{Store: st}, prov: &earlyProvider{}, events: &eventLog{}}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := messaging.New(f.store, f.prov, &messaging.Options{Clock: f.clock.Now, PendingReportRetention: retention,
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	f.svc, f.prov.svc = svc, svc
	t.Cleanup(svc.Subscribe(f.events.add))
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	f.ws = svc.Workspace("acme")
	return f
}

func (f *pendingFixture) send(t *testing.T) string {
	t.Helper()
	res, err := f.ws.Messages.Send(f.ctx, textMsg(kenya))
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageID
}

func (f *pendingFixture) status(t *testing.T, id string) string {
	t.Helper()
	m, err := f.ws.Messages.Get(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return m.Status
}

func (f *pendingFixture) dispatch(t *testing.T) {
	t.Helper()
	if n, err := f.svc.DispatchDue(f.ctx); err != nil || n != 1 {
		t.Fatalf("DispatchDue = %d, %v; want 1 message handed over", n, err)
	}
}

// apply applies a report and returns its result as "changed err".
func (f *pendingFixture) apply(pid, status string) string {
	changed, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: pid, Status: status})
	return fmt.Sprintf("%v %v", changed, err)
}

// transitions returns the status changes of the events published so far.
func (f *pendingFixture) transitions() []string {
	var out []string
	for _, ev := range f.events.take() {
		out = append(out, ev.Data.(messaging.StatusEventData).PreviousStatus+">"+ev.Data.(messaging.StatusEventData).Status)
	}
	return out
}

// TestReportBeforeSentIsAppliedWhenSentIsRecorded: Meta reports delivered
// and read before the dispatcher records sent and the provider id; the
// reports are kept and applied, in order, when sent is recorded.
func TestReportBeforeSentIsAppliedWhenSentIsRecorded(t *testing.T) {
	t.Parallel()
	for _, st := range pendingStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			f := setupPending(t, st.open(t), 0)
			f.prov.early = []string{"delivered", "read"}
			id := f.send(t)
			f.dispatch(t)
			if d := cmp.Diff([]string{"delivered: false <nil>", "read: false <nil>"}, f.prov.results); d != "" {
				t.Errorf("answers to the early reports (-want +got):\n%s", d)
			}
			if got := f.status(t, id); got != "read" {
				t.Errorf("status = %s, want read", got)
			}
			if d := cmp.Diff([]string{"queued>sent", "sent>delivered", "delivered>read"}, f.transitions()); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			// The reports were taken: recording the id again applies nothing.
			if got, err := f.store.PendingReportTake(f.ctx, &driver.PendingReportTakeParams{ProviderMessageIDs: []string{"wamid.1"}, NotBefore: t0.Add(-time.Hour)}); err != nil || len(got) != 0 {
				t.Errorf("reports left after they were applied: %d, %v", len(got), err)
			}
		})
	}
}

// TestReportAfterSentIsAppliedAtOnce: the usual order.
func TestReportAfterSentIsAppliedAtOnce(t *testing.T) {
	t.Parallel()
	for _, st := range pendingStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			f := setupPending(t, st.open(t), 0)
			id := f.send(t)
			f.dispatch(t)
			if got := f.apply("wamid.1", "delivered"); got != "true <nil>" {
				t.Errorf("ApplyProviderStatus = %s, want true <nil>", got)
			}
			if got := f.status(t, id); got != "delivered" {
				t.Errorf("status = %s, want delivered", got)
			}
			if d := cmp.Diff([]string{"queued>sent", "sent>delivered"}, f.transitions()); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// TestKeptReportExpires: a report older than the retention when the id is
// recorded is not applied.
func TestKeptReportExpires(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		retention time.Duration
		wait      time.Duration
		want      string
	}{
		{"default retention, within", 0, 24 * time.Hour, "delivered"},
		{"default retention, expired", 0, 24*time.Hour + time.Nanosecond, "sent"},
		{"one hour, within", time.Hour, time.Hour, "delivered"},
		{"one hour, expired", time.Hour, time.Hour + time.Nanosecond, "sent"},
	} {
		for _, st := range pendingStores {
			t.Run(tc.name+"/"+st.name, func(t *testing.T) {
				t.Parallel()
				f := setupPending(t, st.open(t), tc.retention)
				id := f.send(t)
				if got := f.apply("wamid.1", "delivered"); got != "false <nil>" {
					t.Fatalf("ApplyProviderStatus = %s, want false <nil>", got)
				}
				f.clock.Advance(tc.wait)
				f.dispatch(t)
				if got := f.status(t, id); got != tc.want {
					t.Errorf("status = %s, want %s", got, tc.want)
				}
			})
		}
	}
}

// TestReportKeptJustAfterTheTake closes the race with the dispatcher: the
// dispatcher records the id and takes its (still empty) reports between
// the receiver's lookup that finds nothing and its save. The receiver's
// second lookup finds the message and applies the report itself.
func TestReportKeptJustAfterTheTake(t *testing.T) {
	t.Parallel()
	for _, st := range pendingStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			f := setupPending(t, st.open(t), 0)
			id := f.send(t)
			f.store.beforeSave = func() { f.dispatch(t) }
			if got := f.apply("wamid.1", "delivered"); got != "true <nil>" {
				t.Errorf("ApplyProviderStatus = %s, want true <nil>: applied by the receiver", got)
			}
			if got := f.status(t, id); got != "delivered" {
				t.Errorf("status = %s, want delivered", got)
			}
			if d := cmp.Diff([]string{"queued>sent", "sent>delivered"}, f.transitions()); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// TestKeptReportsAreValidatedAndBounded: a report of an unknown id is
// checked like any other, and at most MaxPendingReports are kept per id.
func TestKeptReportsAreValidatedAndBounded(t *testing.T) {
	t.Parallel()
	f := setupPending(t, memstore.New(), 0)
	for _, c := range []struct {
		status, code string
		field        string
	}{
		{"deleted", "", "status"},
		{"queued", "", "status"},
		{"failed", "", "provider_code"},
	} {
		_, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: "wamid.1", Status: c.status, Code: c.code})
		wantError(t, err, messaging.CodeValidation, c.field)
	}
	id := f.send(t)
	for range defaults.MaxPendingReports {
		if got := f.apply("wamid.1", "delivered"); got != "false <nil>" {
			t.Fatalf("ApplyProviderStatus = %s, want false <nil>", got)
		}
	}
	// One too many: dropped, and still no error (the provider need not
	// send it again).
	if got := f.apply("wamid.1", "read"); got != "false <nil>" {
		t.Fatalf("ApplyProviderStatus over the limit = %s, want false <nil>", got)
	}
	f.dispatch(t)
	if got := f.status(t, id); got != "delivered" {
		t.Errorf("status = %s, want delivered: the invalid reports and the one over the limit were not kept", got)
	}
}

// TestKeepingAReportFails: when the report cannot be kept, the error says
// so (an internal error), so that the provider delivers it again.
func TestKeepingAReportFails(t *testing.T) {
	t.Parallel()
	f := setupPending(t, memstore.New(), 0)
	id := f.send(t)
	f.store.failSave.Store(true)
	_, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: "wamid.1", Status: "delivered"})
	wantError(t, err, messaging.CodeInternal, "")
	f.store.failSave.Store(false)
	f.dispatch(t)
	if got := f.status(t, id); got != "sent" {
		t.Errorf("status = %s, want sent", got)
	}
	if got := f.apply("wamid.1", "delivered"); got != "true <nil>" { // the provider's retry
		t.Errorf("retry: ApplyProviderStatus = %s, want true <nil>", got)
	}
}
