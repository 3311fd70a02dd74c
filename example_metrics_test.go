package messaging_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/record"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// Instrumenting the service: give it an OpenTelemetry MeterProvider (here
// the SDK's with a reader collecting on demand; a server would use the
// Prometheus exporter) and read what a send recorded.
func ExampleOptions_meterProvider() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), &messaging.Options{
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Messages.Send(ctx, &messaging.SendParams{
		Channel: messaging.ChannelWhatsApp, To: "+254712345678", Type: record.TypeText, Text: "Hello!",
	}); err != nil {
		log.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if p.Value > 0 {
						ch, _ := p.Attributes.Value(metricname.AttrChannel)
						fmt.Println(m.Name, ch.AsString(), p.Value)
					}
				}
			case metricdata.Gauge[int64]:
				fmt.Println(m.Name, d.DataPoints[0].Value)
			}
		}
	}
	// Unordered output:
	// messaging.messages.accepted whatsapp 1
	// messaging.dispatch.queue.depth 1
	// messaging.dispatch.queue.due 1
}
