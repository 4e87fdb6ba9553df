package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/hosts"
)

// wireQueues lets the web API refuse a post the bot would turn away (429
// before it is kept) and shows the depth of the bot's queues and the
// commands running per host on /metrics.
func wireQueues(b *bot.Bot, conns []connectors.Connector, fleet *hosts.Fleet, reg prometheus.Registerer) error {
	for _, c := range conns {
		if w, ok := c.(*web.Connector); ok {
			w.Full = func(channel, thread string) string { return b.Full(web.Platform, channel, thread) }
		}
	}
	gauge := func(name, help string, v func(bot.Queues) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(v(b.Queues())) })
	}
	for _, c := range []prometheus.Collector{
		gauge("opsbot_turns_running", "Threads running work now (at most bot.max_turns).", func(q bot.Queues) int { return q.Running }),
		gauge("opsbot_turns_waiting", "Threads waiting for a turn (at most bot.max_waiting).", func(q bot.Queues) int { return q.Waiting }),
		gauge("opsbot_messages_queued", "Messages waiting behind their thread's running work, over all threads.", func(q bot.Queues) int { return q.Queued }),
		gauge("opsbot_thread_queue_deepest", "The longest queue of one thread (at most bot.max_queue).", func(q bot.Queues) int { return q.Deepest }),
		hostCommands{fleet},
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// hostCommands is opsbot_host_commands_running{host}.
type hostCommands struct{ fleet *hosts.Fleet }

var hostCommandsDesc = prometheus.NewDesc("opsbot_host_commands_running",
	"Commands running now on a host (at most exec.max_per_host).", []string{"host"}, nil)

func (h hostCommands) Describe(ch chan<- *prometheus.Desc) { ch <- hostCommandsDesc }

func (h hostCommands) Collect(ch chan<- prometheus.Metric) {
	for host, n := range h.fleet.Running() {
		ch <- prometheus.MustNewConstMetric(hostCommandsDesc, prometheus.GaugeValue, float64(n), host)
	}
}
