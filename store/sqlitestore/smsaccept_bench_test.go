package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/sms"
)

// BenchmarkSMSAccept measures the store's share of SMS sends: SMSAccept of
// bulks of 20 messages and of single messages, from 8 goroutines (as the
// bench's figure 6 sends them through HTTP). An op is one message. Besides
// the wall time it reports cpu-ns/op (the process's CPU, the writer's
// included) and msgs/commit.
func BenchmarkSMSAccept(b *testing.B) {
	for _, size := range []int{1, 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, filepath.Join(b.TempDir(), "bench.sqlite"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			now := time.Now().UTC()
			if err := s.SMSAccountCreate(ctx, &sms.Account{PartnerID: "1234", KeyHash: []byte("h"), Senders: []string{"ACME"},
				Credit: sms.Credits(1_000_000_000), TimeZone: "UTC", CostPerSegment: sms.Credits(1), CreatedAt: now, UpdatedAt: now}); err != nil {
				b.Fatal(err)
			}
			var seq atomic.Int64
			commits0 := s.commits.Load()
			cpu0 := processCPU(b)
			b.ResetTimer()
			b.SetParallelism(4) // 8 callers on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				msgs := make([]*sms.Message, 0, size)
				for pb.Next() {
					now := time.Now().UTC()
					i := seq.Add(1)
					msgs = append(msgs, &sms.Message{ID: record.NewID("sms"), PartnerID: "1234", Mobile: fmt.Sprintf("2547%08d", i),
						Text: "Your order A-1042 has shipped.", Sender: "ACME", ClientSMSID: fmt.Sprint(len(msgs)), Encoding: "GSM-7",
						Segments: 1, Cost: sms.Credits(1), Status: sms.StatusQueued, DueAt: now, NetworkID: "254", CreatedAt: now, UpdatedAt: now})
					if len(msgs) < size {
						continue
					}
					res, err := s.SMSAccept(ctx, msgs)
					if err != nil {
						b.Error(err)
						return
					}
					for _, r := range res {
						if r.Err != nil {
							b.Error(r.Err)
							return
						}
					}
					msgs = msgs[:0]
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(b.N)/float64(max(1, s.commits.Load()-commits0)), "msgs/commit")
		})
	}
}
