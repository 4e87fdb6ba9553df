package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/store"
)

func newRunCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "run",
		Example: "  opsbot run\n  opsbot run --config /etc/opsbot/opsbot.yaml --data-dir /var/lib/opsbot\n  opsbot run --listen 0.0.0.0:8080 --config opsbot.yaml",
		Short:   "Run the bot (without --config: the embedded default on http://127.0.0.1:8080)",
		Long: `Run the bot until SIGINT or SIGTERM. Without --config it starts the embedded
default: the web listener on 127.0.0.1:8080, SQLite at ./opsbot.db and the built-in
host 'local'. The listener serves every connector's routes (the web chat at /),
/healthz (the process is up), /readyz (200, or 503 with a JSON body naming what is
down: the database, a connector) and /metrics (Prometheus).

--listen (else $OPSBOT_LISTEN, else web.listen) moves the listener without a config
file. --data-dir puts the database (DIR/opsbot.db) and the sessions' folders
(DIR/sessions) in DIR, created if missing, in place of store.path and bot.data_dir.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path, _ := cmd.Flags().GetString("memprofile"); path != "" {
				runtime.MemProfileRate = 1 // every allocation, not a sample: start-up's are few and decide the figure
			}
			cfg, err := loadConfigFlag(cmd)
			if err != nil {
				return err
			}
			if err := cfg.applyRunFlags(cmd, os.Getenv); err != nil {
				return err
			}
			log, err := cfg.logger(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			profile, _ := cmd.Flags().GetString("memprofile")
			softMemoryLimit(os.Getenv)
			return serveBot(ctx, cfg, log, runHooks{memProfile: profile})
		},
	}
	c.Flags().String("listen", "", "address of the listener, host:port (default $OPSBOT_LISTEN, else web.listen)")
	c.Flags().String("data-dir", "", "folder for the database and the sessions' folders (default: store.path and bot.data_dir)")
	c.Flags().String("memprofile", "", "when the bot stops, write what its heap holds to FILE (go tool pprof FILE)")
	return c
}

// defaultMemoryLimit is the Go runtime's soft memory limit for `opsbot
// run` when GOMEMLIMIT does not set one. The bot's live heap is small and
// bounded (the web chat's caches are 16 MB, the index ~150 bytes a
// thread), but with the default GOGC the heap grows to twice what is
// live, and a burst (10,000 threads asked at once) leaves RSS at 70–90 MB
// that the runtime hands back only slowly. Near the limit the collector
// runs sooner and returns freed pages at once; it is soft: a heap that
// really needs more gets it, the collector's CPU capped at half.
const defaultMemoryLimit = 40 << 20

// softMemoryLimit sets defaultMemoryLimit unless the environment sets
// GOMEMLIMIT (the runtime read it already, and an operator's word wins).
func softMemoryLimit(getenv func(string) string) {
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

// writeHeapProfile writes the live heap, after a collection, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	return f.Close()
}

// applyRunFlags lets --listen (or OPSBOT_LISTEN) and --data-dir override
// the config, creating the data folder.
func (c *Config) applyRunFlags(cmd *cobra.Command, getenv func(string) string) error {
	if err := c.applyPlaceFlags(cmd, getenv); err != nil {
		return err
	}
	dir, _ := cmd.Flags().GetString("data-dir")
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return usageError(fmt.Errorf("--data-dir: %w: name a folder opsbot may create and write", err))
	}
	return nil
}

// applyPlaceFlags is applyRunFlags without creating anything: what a
// command that only judges (policy check) needs to see the bot as it runs.
// A command without the flags keeps the config's places.
func (c *Config) applyPlaceFlags(cmd *cobra.Command, getenv func(string) string) error {
	listen, _ := cmd.Flags().GetString("listen")
	from := "--listen"
	if listen == "" {
		listen, from = getenv("OPSBOT_LISTEN"), "OPSBOT_LISTEN"
	}
	if listen != "" {
		if problem := web.ListenProblem(listen); problem != "" {
			return usageError(fmt.Errorf("%s %s: %s", from, listen, problem))
		}
		c.Web.Listen = listen
		if err := c.Web.Validate(); err != nil {
			return usageError(listenFlagError(from, listen, err))
		}
	}
	dir, _ := cmd.Flags().GetString("data-dir")
	if dir == "" {
		c.findDefaultStore(getenv)
		return nil
	}
	c.placeData(dir)
	return nil
}

// placeData puts the database (DIR/opsbot.db) and the sessions' folders
// in dir, as --data-dir does.
func (c *Config) placeData(dir string) {
	c.Store.Path = filepath.Join(dir, "opsbot.db")
	c.dataDir = dir
	c.Bot.DataDir = dir // the bot keeps its sessions' folders in DataDir/sessions
}

// makeRunDataDir is the folder `make run` keeps the bot's data in when
// DATA_DIR is not given: the Makefile's DATA_DIR default.
func makeRunDataDir(getenv func(string) string) string {
	home := getenv("HOME")
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "opsbot")
}

// findDefaultStore chooses the database when neither --config nor
// --data-dir does: the embedded default's ./opsbot.db if it exists, else
// the one `make run` keeps if that exists, so that every command (run,
// audit, hosts exec...) started after `make run` works on the web chat's
// rows rather than on a new, empty database in the current folder.
func (c *Config) findDefaultStore(getenv func(string) string) {
	if c.file != "" || exists(c.Store.WithDefaults().Path) {
		return
	}
	dir := makeRunDataDir(getenv)
	if dir == "" || !exists(filepath.Join(dir, "opsbot.db")) {
		return
	}
	c.placeData(dir)
	c.storeFound = true
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// defaultStorePlaces says, for a person, where a command without --config
// or --data-dir looked for the database.
func defaultStorePlaces(getenv func(string) string) string {
	here, _ := filepath.Abs(store.Config{}.WithDefaults().Path)
	dir := makeRunDataDir(getenv)
	if dir == "" {
		return here
	}
	return fmt.Sprintf("%s (the default) nor at %s (where make run keeps it)", here, filepath.Join(dir, "opsbot.db"))
}

// noteStore tells the person, on stderr, which database a command that
// opens one for writing works on when no setting of theirs chose it: the
// one `make run` keeps, or a new one it is about to create.
func (c *Config) noteStore(w io.Writer, getenv func(string) string) {
	switch path := c.Store.WithDefaults().Path; {
	case c.storeFound:
		fmt.Fprintf(w, "opsbot: using the database make run keeps, %s (--data-dir DIR or --config FILE chooses another)\n", path)
	case c.file == "" && c.dataDir == "" && !exists(path):
		abs, _ := filepath.Abs(path)
		fmt.Fprintf(w, "opsbot: no database found at %s: creating %s (--data-dir DIR or --config FILE chooses another)\n", defaultStorePlaces(getenv), abs)
	}
}

// logger builds the process logger from config and the --log-level flag.
func (c *Config) logger(cmd *cobra.Command) (*slog.Logger, error) {
	return c.loggerAt(cmd, c.Log.Level)
}

// terminalLogger is the logger of a command a person runs at the terminal
// (chat, ask, health run): warnings and errors only, unless --log-level
// says otherwise, so that the bot's start-up notes (the sandbox, the
// approvers) do not come before every answer.
func (c *Config) terminalLogger(cmd *cobra.Command) (*slog.Logger, error) {
	return c.loggerAt(cmd, "warn")
}

// loggerAt builds the logger at level name, or at --log-level when given.
func (c *Config) loggerAt(cmd *cobra.Command, name string) (*slog.Logger, error) {
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
	// connectors are started beside the configured ones.
	connectors []connectors.Connector
	// ha is the leadership this process serves under (serveHA), or nil.
	ha *haRole
	// memProfile, when set, is where the live heap is written as the bot
	// is told to stop, before it lets go of anything (--memprofile).
	memProfile string
}

// sqliteMemory caps what SQLite holds, its page caches above all
// (store.LimitMemory): the operating system caches the file anyway.
const sqliteMemory = 4 << 20

// serveBot is runBot with hooks for tests.
func serveBot(ctx context.Context, cfg *Config, log *slog.Logger, hooks runHooks) error {
	if cfg.HA.Enabled && hooks.ha == nil {
		return serveHA(ctx, cfg, log, hooks) // it comes back here as the leader
	}
	unlock, err := lockStore(cfg.Store.WithDefaults().Path, cfg.storeSetting())
	if err != nil {
		return err
	}
	defer unlock()
	// Listen first: an address in use is told before anything else
	// starts, and a port chosen by the system (":0") is known to the
	// policy as the bot's own listener, as a configured one is.
	ln, err := hooks.ha.listen(cfg.Web.Listen)
	if err != nil {
		// It cannot start as configured, as with a database in use: 2.
		return usageError(listenError(cfg.Web.Listen, err))
	}
	defer ln.Close()
	if _, port, _ := net.SplitHostPort(cfg.Web.Listen); port == "0" {
		cfg.Web.Listen = ln.Addr().String()
	}
	rt, err := build(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer rt.Close()
	if err := hooks.ha.attach(ctx, rt); err != nil {
		return err
	}
	if err := rt.store.LimitMemory(ctx, sqliteMemory); err != nil {
		log.Warn("limit SQLite's memory", "err", err)
	}
	conns, routers, err := rt.newConnectors(ctx)
	if err != nil {
		return err
	}
	for _, c := range hooks.connectors {
		conns = append(conns, c)
		if r, ok := c.(router); ok {
			routers = append(routers, r)
		}
	}
	// The platforms come first: the scheduler posts its reports through
	// them, and the bot is built over both (no setter closes a cycle).
	platforms := bot.NewPlatforms(rt.red, log, conns...)
	platforms.Fence(rt.fence.err)
	platforms.Replicate(rt.fence.replicate)
	sched, publisher, err := rt.newScheduler(platforms.ReportPoster, rt.metrics.checks)
	if err != nil {
		return err
	}
	b, err := rt.newBot(platforms, sched)
	if err != nil {
		return err
	}
	desk, intake, err := rt.newAlerts(platforms, b)
	if err != nil {
		return err
	}
	if intake != nil {
		routers = append(routers, intake)
	}
	reg := rt.metrics.reg
	if err := wireQueues(b, conns, rt.fleet, reg); err != nil {
		return err
	}
	if hooks.checks != nil {
		hooks.checks(sched, publisher)
	}
	// What a previous process left half-done is settled before anything new
	// can start: a turn begun now must not be taken for an interrupted one.
	b.Recover(ctx)

	set := &connectorSet{list: conns, log: log}
	for _, c := range conns {
		rt.ready.Add("connector "+c.Name(), func(ctx context.Context) error { return set.ready(ctx, c) })
	}
	rt.ready.Detail("sandbox", rt.sandbox.status)
	rt.ready.Detail("remote_sandbox", rt.remote.status)
	reg.MustRegister(connectorsUp{set})
	mux := newMux(rt.ready, reg)
	for _, r := range routers {
		r.Routes(mux)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	botCtx, stopBot := context.WithCancel(ctx)
	set.start(botCtx, b.Handle)
	b.Start(botCtx)
	desk.Start(botCtx)
	if err = sched.Start(botCtx); err == nil {
		log.Info("opsbot started", "version", version, "listen", "http://"+ln.Addr().String(), "db", rt.store.Path(),
			"agent", rt.agentState(), "connectors", connectorNames(conns), "schedules", len(sched.Names()))
		// Starting leaves garbage several times what the bot then holds
		// (the config parsed, the migrations, the redactor's rules
		// compiled): hand it back now rather than keep it for the heap
		// to grow into (issue 28 item 8).
		debug.FreeOSMemory()
		_, _ = releaseStartupCode() // advice: a kernel that refuses it changes nothing
		if hooks.ready != nil {
			hooks.ready <- ln.Addr().String()
		}
		select {
		case err = <-served:
			err = fmt.Errorf("web listener: %w", err)
		case <-ctx.Done():
		}
	}
	if hooks.memProfile != "" {
		if err := writeHeapProfile(hooks.memProfile); err != nil {
			log.Error("write the heap profile", "err", err)
		}
	}
	log.Info("shutting down")
	stopBot()
	sched.Stop() // a run under way is cut short and not recorded
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 1500*time.Millisecond)
	defer cancel()
	if srv.Shutdown(shutdownCtx) != nil {
		srv.Close() // streams still open after the grace period are cut
	}
	desk.Close()
	b.Close()
	set.wait()
	if err != nil {
		return err
	}
	if e := <-served; !errors.Is(e, http.ErrServerClosed) {
		return e
	}
	return nil
}

// botStores hands the bot its stores by aggregate. Today the one
// *store.Store is every aggregate; this is the one place that changes
// when the bot takes the store's sub-stores (st.Approvals() …).
func botStores(st *store.Store) bot.Deps {
	return bot.Deps{Approvals: st.Approvals(), Sessions: st.Sessions(), Inbox: st.Inbox(), JobRecords: st.Jobs(), Grants: st.Approvals(), Feedback: st, Memory: st.Memory()}
}

// newBot builds the bot over the parts, posting through platforms;
// health is the scheduled checks for `health`.
func (rt *parts) newBot(platforms *bot.Platforms, health bot.Health) (*bot.Bot, error) {
	cfg, log := rt.cfg, rt.log
	gateCfg, anyone := webGateConfig(cfg)
	if anyone {
		log.Info("approvals: anyone on the web chat may approve another person's request, as only this machine can reach it " +
			"(loopback listener, no web.api_key) and approvals.approvers names no web user; name them there to choose who may")
	}
	for _, w := range cfg.warnings() {
		// The key apart from the message: "bot_token: warning: …" in one
		// string reads to the log's redactor as a secret assigned, and
		// the person would see its tag in place of the word "warning".
		// (An attribute named "key" is redacted whole.)
		at := w.File
		if w.Line > 0 {
			at = fmt.Sprintf("%s:%d", w.File, w.Line)
		}
		log.Warn(logLine(strings.TrimPrefix(w.Msg, "warning: ")), "config", at, "setting", w.Key)
	}
	gate := approvals.NewGate(rt.store.Approvals(), gateCfg, approvals.GateOptions{HostGroups: rt.hostGroups})
	// Platform is the fallback for a session that names none; requests
	// are made as the session's own platform's person.
	guard := rt.guard(approvals.GateApprover{Gate: gate, Store: rt.store.Approvals(), Platform: web.Platform, Groups: rt.hostGroups})
	d := botStores(rt.store)
	d.Platforms, d.Health = platforms, health
	d.Agent, d.Guard, d.Jobs, d.Gate, d.Hosts = rt.newAgent(guard, gateCfg), guard, rt.jobs, gate, rt.hostInfo()
	d.Config, d.Log, d.NoAgentHelp, d.CancelOnNewMessage = cfg.botConfig(), log, noAgentHelp, cfg.onBusy() == bot.OnBusyCancel
	d.JobEndTurns, d.Metrics = rt.jobEndTurns(), rt.metrics.bot
	rt.addPlans(&d, gate, guard)
	// Every command is on record while it runs, so that after a crash the
	// next start ends what this process left running (Recover).
	rt.fleet.Track(executor.NewProcessLedger(executorStore{st: rt.store, fence: &rt.fence}, log))
	d.Sweeper = rt.fleet
	return bot.New(d)
}

// agentState says whether the agent is on, for the start-up line.
func (rt *parts) agentState() string {
	if rt.provider == nil && len(rt.cfg.MCP.Servers) > 0 {
		return "off (set ANTHROPIC_API_KEY or OPENAI_API_KEY/OPENAI_BASE_URL); the MCP servers of mcp.servers give the agent tools, so they are not started either"
	}
	if rt.provider == nil {
		return "off (set ANTHROPIC_API_KEY or OPENAI_API_KEY/OPENAI_BASE_URL)"
	}
	return rt.model
}

func connectorNames(conns []connectors.Connector) []string {
	names := make([]string, len(conns))
	for i, c := range conns {
		names[i] = c.Name()
	}
	return names
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

// newMux serves the operational endpoints: /healthz, /readyz (ready's
// checks) and /metrics (reg).
func newMux(ready http.Handler, reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /readyz", ready)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// listenFlagError is the config's objection to the address --listen (or
// OPSBOT_LISTEN) gave, in the flag's words: the config key it names
// (api_key) is one the person who typed a flag may never have seen.
func listenFlagError(from, addr string, err error) error {
	var fe interface{ Field() string }
	if errors.As(err, &fe) && fe.Field() == "api_key" {
		_, port, _ := net.SplitHostPort(addr)
		return fmt.Errorf("%s %s: other machines could reach the bot there, and anyone who does could use it: "+
			"listen on 127.0.0.1:%s, or give a config file (--config FILE) whose web section sets api_key or users", from, addr, port)
	}
	return fmt.Errorf("%s %s: %w", from, addr, err)
}

// listenError says in words why opsbot cannot listen on addr, and how to
// choose another address: a bind error's chain ("listen tcp …: bind:")
// is not for a person.
func listenError(addr string, err error) error {
	const choose = "choose another with --listen ADDR, OPSBOT_LISTEN or web.listen"
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s is already in use (is another opsbot running?); stop it, or %s", addr, choose)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("may not listen on %s: ports below 1024 need root or CAP_NET_BIND_SERVICE; %s", addr, choose)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("cannot listen on %s: no network interface of this machine has that address; %s", addr, choose)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("cannot listen on %s: %q is not a name this machine can look up (use an address such as 127.0.0.1); %s", addr, dns.Name, choose)
	}
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return fmt.Errorf("cannot listen on %s: %s is not a port or address this machine can use; %s", addr, ae.Addr, choose)
	}
	return fmt.Errorf("cannot listen on %s (%v); %s", addr, errors.Unwrap(err), choose)
}
