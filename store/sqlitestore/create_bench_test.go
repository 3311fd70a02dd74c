package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// BenchmarkMessageCreate measures the store's share of an accepted
// message: MessageCreate of outbound text messages, each to a new
// recipient with a new idempotency key (the worst case: every message
// also starts a conversation), from 1, 8 and 32 goroutines. Besides the
// wall time it reports cpu-ns/op (the process's user and system CPU,
// the group-commit writer's included) and msgs/commit, the mean batch.
// The writer is one goroutine, so 1e9/cpu-ns/op of its own work bounds
// the messages a second one SQLite file accepts, whatever the cores.
func BenchmarkMessageCreate(b *testing.B) {
	for _, par := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("callers=%d", par), func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, filepath.Join(b.TempDir(), "bench.sqlite"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "ws_bench", Name: "Bench", CreatedAt: time.Now()}); err != nil {
				b.Fatal(err)
			}
			var seq atomic.Int64
			commits0 := s.commits.Load()
			cpu0 := processCPU(b)
			b.ResetTimer()
			b.SetParallelism(max(1, par/2))
			run := func() {
				i := seq.Add(1)
				to := fmt.Sprintf("+2547%08d", i)
				now := time.Now().UTC()
				m := &messaging.Message{ID: record.NewID("msg"), WorkspaceID: "ws_bench", Channel: messaging.ChannelWhatsApp,
					To: to, Type: "text", Text: "Your order A-1042 has shipped.", IdempotencyKey: fmt.Sprintf("order-%d", i),
					ConversationID: record.ConversationID("ws_bench", messaging.ChannelWhatsApp, to),
					Direction:      record.DirectionOutbound, Status: messaging.StatusQueued, CreatedAt: now, UpdatedAt: now, DueAt: now}
				if _, _, err := s.MessageCreate(ctx, m); err != nil {
					b.Error(err)
				}
			}
			if par == 1 {
				for range b.N {
					run()
				}
			} else {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						run()
					}
				})
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(b.N)/float64(max(1, s.commits.Load()-commits0)), "msgs/commit")
		})
	}
}

// processCPU returns the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
