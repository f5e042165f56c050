// Package metrics holds reftrack's Prometheus metrics: requests and latencies per route, and the
// tracking events recorded by type.
package metrics

import (
	"bytes"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// Metrics is one registry with reftrack's collectors (no global state: each server has its own).
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	events   *prometheus.CounterVec
	webhooks *prometheus.CounterVec
	// Outbound webhooks (pkg/webhooks' worker).
	hookLag      prometheus.Histogram
	hookAttempts *prometheus.CounterVec
	hookDisabled *prometheus.CounterVec
	clicks       batches
	leads        batches
	sales        batches
	refunds      batches
}

// batches are the size and duration histograms of one kind of batch write.
type batches struct {
	size *prometheus.HistogramVec
	took prometheus.Histogram
}

func newBatches(kind, sizeHelp, tookHelp string, sizes []float64) batches {
	return batches{
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "reftrack_" + kind + "_batch_size", Help: sizeHelp, Buckets: sizes,
		}, []string{}),
		took: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "reftrack_" + kind + "_batch_seconds", Help: tookHelp,
			Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25},
		}),
	}
}

func (b batches) observe(size int, took time.Duration) {
	b.size.WithLabelValues().Observe(float64(size))
	b.took.Observe(took.Seconds())
}

// New registers the collectors, with the Go runtime's and the process's.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reftrack_http_requests_total",
			Help: "HTTP requests answered, by route, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "reftrack_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reftrack_events_recorded_total",
			Help: "Tracking events recorded, by type (click, lead, provisional_lead, sale, refund) and test mode.",
		}, []string{"type", "test"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reftrack_webhook_events_total",
			Help: "Payment-processor webhook events processed, by provider and outcome (recorded, settled, reversed, duplicate, ignored, unattributed).",
		}, []string{"provider", "outcome"}),
	}
	m.hookLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "reftrack_outbound_webhook_lag_seconds",
		Help:    "Time from an event to its delivery's first attempt (outbound webhooks).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	})
	m.hookAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reftrack_outbound_webhook_attempts_total",
		Help: "Outbound webhook delivery attempts, by outcome (succeeded, failed, error, gone).",
	}, []string{"outcome"})
	m.hookDisabled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reftrack_outbound_webhook_endpoints_disabled_total",
		Help: "Webhook endpoints this process disabled, by reason (gone: a 410; failing: every attempt failed for 5 days).",
	}, []string{"reason"})
	m.clicks = newBatches("click", "Clicks written per statement and commit.",
		"Time to write one batch of clicks, commit included.", []float64{1, 2, 4, 8, 16, 32, 64, 128})
	m.sales = newBatches("sale", "Sales recorded per batch (two statements and one commit).",
		"Time to record one batch of sales (read, write and commit; rounds again included).", []float64{1, 2, 4, 8, 16, 32, 64})
	m.leads = newBatches("lead", "Leads recorded per batch (two statements and one commit).",
		"Time to record one batch of leads (read, write and commit; rounds again included).", []float64{1, 2, 4, 8, 16, 32, 64})
	m.refunds = newBatches("refund", "Refunds recorded per batch (two statements and one commit).",
		"Time to record one batch of refunds (read, write and commit; rounds again included).", []float64{1, 2, 4, 8, 16, 32, 64})
	m.registry.MustRegister(m.requests, m.latency, m.events, m.webhooks, m.hookLag, m.hookAttempts, m.hookDisabled, m.clicks.size, m.clicks.took, m.sales.size, m.sales.took,
		m.leads.size, m.leads.took, m.refunds.size, m.refunds.took,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Request records one answered request.
func (m *Metrics) Request(route, method string, status int, took time.Duration) {
	if route == "" {
		route = "unmatched" // bounded label values: never the raw path
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(took.Seconds())
}

// Event records one tracking event.
func (m *Metrics) Event(kind string, test bool) {
	m.events.WithLabelValues(kind, strconv.FormatBool(test)).Inc()
}

// Webhook records one processed payment-processor event.
func (m *Metrics) Webhook(provider, outcome string) {
	m.webhooks.WithLabelValues(provider, outcome).Inc()
}

// WebhookLag records the time from an event to its delivery's first attempt.
func (m *Metrics) WebhookLag(d time.Duration) { m.hookLag.Observe(d.Seconds()) }

// WebhookAttempt records one outbound delivery attempt.
func (m *Metrics) WebhookAttempt(outcome string) { m.hookAttempts.WithLabelValues(outcome).Inc() }

// WebhookDisabled records one endpoint disabled; reason is gone or failing (pkg/webhooks' labels).
func (m *Metrics) WebhookDisabled(reason string) { m.hookDisabled.WithLabelValues(reason).Inc() }

// ClickBatch records one written batch of clicks.
func (m *Metrics) ClickBatch(size int, took time.Duration) { m.clicks.observe(size, took) }

// LeadBatch records one recorded batch of leads.
func (m *Metrics) LeadBatch(size int, took time.Duration) { m.leads.observe(size, took) }

// RefundBatch records one recorded batch of refunds.
func (m *Metrics) RefundBatch(size int, took time.Duration) { m.refunds.observe(size, took) }

// SaleBatch records one recorded batch of sales.
func (m *Metrics) SaleBatch(size int, took time.Duration) { m.sales.observe(size, took) }

// ContentType is the exposition format Text writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Text renders every metric in the Prometheus text format.
func (m *Metrics) Text() ([]byte, error) {
	families, err := m.registry.Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
