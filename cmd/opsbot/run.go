package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store/webarchive"
)

func newRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run the bot (without --config: the embedded default on http://127.0.0.1:8080)",
		Long: `Run the bot until SIGINT or SIGTERM. Without --config it starts the embedded
default: the web listener on 127.0.0.1:8080, SQLite at ./opsbot.db and the built-in
host 'local'. The listener serves /healthz (the process is up), /readyz (the
database answers) and /metrics (Prometheus).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			log, err := cfg.logger(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runBot(ctx, cfg, log, nil)
		},
	}
}

// logger builds the process logger from config and the --log-level flag.
func (c *Config) logger(cmd *cobra.Command) (*slog.Logger, error) {
	name := c.Log.Level
	if f, _ := cmd.Flags().GetString("log-level"); f != "" {
		name = f
	}
	level, err := parseLevel(name)
	if err != nil {
		return nil, usageError(fmt.Errorf("--log-level: %w", err))
	}
	log := newLogger(os.Stderr, level, c.Log.Format, c.redactor())
	// What logs through the standard library (net/http's errors) and
	// slog.Default passes the redactor too.
	slog.SetDefault(log)
	return log, nil
}

// runBot serves until ctx ends, then shuts down. ready, when not nil,
// receives the listener's address once it accepts connections.
func runBot(ctx context.Context, cfg *Config, log *slog.Logger, ready chan<- string) error {
	return serveBot(ctx, cfg, log, runHooks{ready: ready})
}

// runHooks let a test reach into a running bot.
type runHooks struct {
	// ready receives the listener's address once it accepts connections.
	ready chan<- string
	// checks, when set, receives the health-check scheduler and the
	// publisher of its reports before the scheduler starts.
	checks func(*checks.Scheduler, *checks.Publisher)
}

// serveBot is runBot with hooks for tests.
func serveBot(ctx context.Context, cfg *Config, log *slog.Logger, hooks runHooks) error {
	rt, err := build(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer rt.Close()
	webConn, err := web.New(ctx, cfg.Web, webarchive.Archive{Store: rt.store})
	if err != nil {
		return err
	}
	webConn.Models = func() []string {
		if rt.provider == nil {
			return nil
		}
		return []string{rt.modelName}
	}
	gateCfg, anyone := webGateConfig(cfg)
	if anyone {
		log.Info("approvals: anyone on the web chat may approve another person's request, as only this machine can reach it " +
			"(loopback listener, no web.api_key) and approvals.approvers names no web user; name them there to choose who may")
	}
	for _, w := range cfg.approvalWarnings() {
		log.Warn(w.Error())
	}
	gate := approvals.NewGate(rt.store, gateCfg, approvals.GateOptions{HostGroups: rt.hostGroups})
	guard := rt.guard(bot.GateApprover{Gate: gate, Store: rt.store, Platform: webConn.Name(), Groups: rt.hostGroups})
	b := &bot.Bot{Store: rt.store, Agent: rt.newAgent(guard), Guard: guard, Jobs: rt.jobs, Gate: gate, Hosts: rt.hostInfo(),
		Config: cfg.botConfig(), Log: log, NoAgentHelp: noAgentHelp, CancelOnNewMessage: webConn.Config().OnBusy == web.OnBusyCancel, Redactor: rt.red}
	b.JobEndTurns = rt.jobEndTurns()
	b.AddConnector(webConn)
	// Every command is on record while it runs, so that after a crash the
	// next start ends what this process left running (Recover).
	rt.fleet.Track(bot.NewProcessLedger(rt.store, log))
	b.Sweeper = rt.fleet
	reg := newRegistry()
	checkMetrics, err := checks.NewMetrics(reg)
	if err != nil {
		return err
	}
	sched, publisher, err := rt.newScheduler(b.ReportPoster, checkMetrics)
	if err != nil {
		return err
	}
	b.Health = sched
	if hooks.checks != nil {
		hooks.checks(sched, publisher)
	}
	// What a previous process left half-done is settled before anything new
	// can start: a turn begun now must not be taken for an interrupted one.
	b.Recover(ctx)

	ln, err := net.Listen("tcp", cfg.Web.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another opsbot running? set web.listen to another port)", cfg.Web.Listen, err)
	}
	mux := newMux(rt.store, reg, rt.sandbox.status)
	mux.Handle("/", webConn.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	botCtx, stopBot := context.WithCancel(ctx)
	connDone := make(chan error, 1)
	go func() { connDone <- webConn.Start(botCtx, b.Handle) }()
	// "started" means a message posted now reaches the bot, not a 503.
	select {
	case <-webConn.Running():
	case err := <-connDone:
		connDone <- err
	}
	b.Start(botCtx)
	if err := sched.Start(botCtx); err != nil {
		stopBot()
		srv.Close()
		b.Close()
		<-connDone
		return err
	}
	defer sched.Stop()
	agentState := "off (set ANTHROPIC_API_KEY or OPENAI_API_KEY/OPENAI_BASE_URL)"
	if rt.provider != nil {
		agentState = rt.model
	}
	log.Info("opsbot started", "version", version, "listen", "http://"+ln.Addr().String(), "db", rt.store.Path(), "agent", agentState)
	if hooks.ready != nil {
		hooks.ready <- ln.Addr().String()
	}
	select {
	case err = <-served:
		err = fmt.Errorf("web listener: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	stopBot()
	sched.Stop() // a run under way is cut short and not recorded
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 1500*time.Millisecond)
	defer cancel()
	if srv.Shutdown(shutdownCtx) != nil {
		srv.Close() // streams still open after the grace period are cut
	}
	b.Close()
	<-connDone
	if err != nil {
		return err
	}
	if e := <-served; !errors.Is(e, http.ErrServerClosed) {
		return e
	}
	return nil
}

// pinger is what /readyz needs of the store.
type pinger interface {
	Ping(ctx context.Context) error
}

// newRegistry is the process's Prometheus registry, with the Go and
// process collectors and opsbot_build_info.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opsbot_build_info", Help: "Version and commit of the running opsbot; always 1."},
		[]string{"version", "commit"})
	build.WithLabelValues(version, commit).Set(1)
	reg.MustRegister(build)
	return reg
}

// newMux serves the operational endpoints; /metrics serves reg. /readyz
// adds the line of each detail (e.g. the sandbox's), which does not decide
// readiness.
func newMux(db pinger, reg *prometheus.Registry, details ...func() (ok bool, detail string)) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			http.Error(w, "database not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
		for _, d := range details {
			_, line := d()
			fmt.Fprintln(w, line)
		}
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}
