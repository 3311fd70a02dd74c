package dashboard

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// overviewData is the overview page: the last 24 hours of messages and
// what needs attention.
type overviewData struct {
	Chart *chart
	// Queue is the workspace's share of the dispatch queue.
	Queue *messaging.MessageQueueStats
	// OldestDueAge is how long the oldest due message has waited; zero
	// when none is due.
	OldestDueAge time.Duration
	// Totals counts the last 24 hours' messages by current status.
	Totals []statusTotal
	// Failing are the webhook endpoints that are disabled or whose latest
	// delivery failed or is being retried.
	Failing []failingEndpoint
	// ChannelErrors are the channel connections in error.
	ChannelErrors []*messaging.ChannelConnection
	// SMS is the credit of the viewer's SMS accounts, nil when the SMS
	// pages are not mounted.
	SMS *smsCreditData
}

type smsCreditData struct {
	Total   sms.Credit
	Counted int
	Partial bool
}

type statusTotal struct {
	Status string
	Count  int
}

type failingEndpoint struct {
	Endpoint *messaging.WebhookEndpoint
	Why      string
}

// chartStatuses are the statuses of the chart, in stacking order.
var chartStatuses = []string{messaging.StatusQueued, messaging.StatusSent, messaging.StatusDelivered, messaging.StatusRead, messaging.StatusFailed,
	messaging.StatusCanceled}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, req *request) error {
	now := h.svc.Now().UTC()
	since := now.Truncate(time.Hour).Add(-23 * time.Hour)
	counts, err := req.svc.Messages.HourlyCounts(req.ctx, since)
	if err != nil {
		return err
	}
	d := &overviewData{Chart: buildChart(since, counts)}
	if d.Queue, err = req.svc.Messages.QueueStats(req.ctx); err != nil {
		return err
	}
	if d.Queue.OldestDueAt != nil {
		d.OldestDueAge = max(0, now.Sub(*d.Queue.OldestDueAt)).Round(time.Second)
	}
	totals := map[string]int{}
	for _, c := range counts {
		totals[c.Status] += c.Count
	}
	for _, s := range chartStatuses {
		d.Totals = append(d.Totals, statusTotal{s, totals[s]})
	}
	endpoints, err := req.svc.Webhooks.List(req.ctx)
	if err != nil {
		return err
	}
	for _, e := range endpoints {
		if e.DisabledAt != nil {
			d.Failing = append(d.Failing, failingEndpoint{e, "disabled (" + e.DisabledReason + ")"})
			continue
		}
		last, _, err := req.svc.Webhooks.Deliveries(req.ctx, e.ID, "", 1)
		if err != nil {
			return err
		}
		if len(last) == 1 && last[0].State != record.DeliveryDelivered && last[0].LastError != "" {
			why := "last delivery failed: " + last[0].LastError
			if last[0].LastStatus != 0 {
				why = fmt.Sprintf("last delivery answered %d", last[0].LastStatus)
			}
			d.Failing = append(d.Failing, failingEndpoint{e, why})
		}
	}
	states, err := h.svc.Workspace(req.ws.ID).Channels.List(req.ctx)
	if err != nil {
		return err
	}
	for _, st := range states {
		if c := st.Connection; c != nil && (c.Status == record.ConnectionError || c.Status == record.ConnectionPending) {
			d.ChannelErrors = append(d.ChannelErrors, c)
		}
	}
	if h.sms != nil {
		c := &smsCreditData{}
		if c.Total, c.Counted, c.Partial, err = h.smsCredit(req); err != nil {
			return err
		}
		d.SMS = c
	}
	p := &page{Title: "Overview", Nav: "overview", Data: d}
	p.fill(h, req)
	h.render(w, r, http.StatusOK, "overview", p)
	return nil
}

// chart is a stacked bar chart of messages per hour and status, drawn as
// SVG on the server.
type chart struct {
	Width, Height int
	Bars          []bar
	// Labels are the hour labels under every sixth bar.
	Labels []chartLabel
	// Max is the tallest bar's count (the top of the scale).
	Max int
}

type bar struct {
	X, Y, W, H int
	Status     string
	Title      string
}

type chartLabel struct {
	X    int
	Text string
}

// buildChart lays out 24 hourly bars from since, each a stack of its
// statuses' counts.
func buildChart(since time.Time, counts []*record.MessageCount) *chart {
	const hours, barW, gap, height, top = 24, 22, 6, 160, 10
	byHour := make([]map[string]int, hours)
	for i := range byHour {
		byHour[i] = map[string]int{}
	}
	for _, c := range counts {
		i := int(c.Hour.Sub(since) / time.Hour)
		if i >= 0 && i < hours {
			byHour[i][c.Status] += c.Count
		}
	}
	c := &chart{Width: hours * (barW + gap), Height: height + 20, Max: 1}
	for _, m := range byHour {
		sum := 0
		for _, n := range m {
			sum += n
		}
		c.Max = max(c.Max, sum)
	}
	for i, m := range byHour {
		x := i * (barW + gap)
		y := height
		hour := since.Add(time.Duration(i) * time.Hour)
		for _, s := range chartStatuses {
			n := m[s]
			if n == 0 {
				continue
			}
			bh := max(1, n*(height-top)/c.Max)
			y -= bh
			c.Bars = append(c.Bars, bar{X: x, Y: y, W: barW, H: bh, Status: s,
				Title: fmt.Sprintf("%s–%s UTC: %d %s", hour.Format("15:04"), hour.Add(time.Hour).Format("15:04"), n, s)})
		}
		if i%6 == 0 {
			c.Labels = append(c.Labels, chartLabel{X: x, Text: hour.Format("15:04")})
		}
	}
	return c
}
