package main

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/store"
)

// metrics are the process's Prometheus collectors, on the one registry
// /metrics serves. Each package declares its own (agent.Metrics, tools.Metrics,
// bot.Metrics, checks.Metrics, connectors.APIMetrics, store.Collector);
// this is where they meet. docs/OPERATIONS.md lists every series.
type metrics struct {
	reg    *prometheus.Registry
	agent  *agent.Metrics
	tools  *tools.Metrics
	bot    *bot.Metrics
	checks *checks.Metrics
	// api counts the connectors' platform API calls: a connector's HTTP
	// client takes api.Transport(platform, namer, nil).
	api *connectors.APIMetrics
}

// newMetrics registers every package's collectors, and the database's,
// on a new registry.
func newMetrics(st *store.Store) (*metrics, error) {
	m := &metrics{reg: newRegistry()}
	var err error
	if m.agent, err = agent.NewMetrics(m.reg); err != nil {
		return nil, err
	}
	if m.tools, err = tools.NewMetrics(m.reg); err != nil {
		return nil, err
	}
	if m.bot, err = bot.NewMetrics(m.reg); err != nil {
		return nil, err
	}
	if m.checks, err = checks.NewMetrics(m.reg); err != nil {
		return nil, err
	}
	if m.api, err = connectors.NewAPIMetrics(m.reg); err != nil {
		return nil, err
	}
	if err = m.reg.Register(st.Collector()); err != nil {
		return nil, err
	}
	return m, nil
}

// connectorsUp is opsbot_connector_up{connector}: 1 while a connector
// is up by /readyz's test (its Start still runs, and it says it is
// connected when it can tell), else 0.
type connectorsUp struct{ set *connectorSet }

var descConnectorUp = prometheus.NewDesc("opsbot_connector_up",
	"1 while the connector receives events (as /readyz tests it), else 0.", []string{"connector"}, nil)

var _ prometheus.Collector = connectorsUp{}

// Describe sends the one descriptor.
func (c connectorsUp) Describe(ch chan<- *prometheus.Desc) { ch <- descConnectorUp }

// Collect tests each connector, each within readyTimeout.
func (c connectorsUp) Collect(ch chan<- prometheus.Metric) {
	for _, conn := range c.set.list {
		up := 1.0
		if runCheck(context.Background(), func(ctx context.Context) error { return c.set.ready(ctx, conn) }) != nil {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(descConnectorUp, prometheus.GaugeValue, up, conn.Name())
	}
}
