// Command idle measures what idle sessions cost in memory (design §7:
// 1,000 idle sessions in ≤ 50 MB RSS). It wires the bot as `opsbot run`
// does — SQLite store, policy, approval gate, local runner, agent — with a
// fake model; has each of -sessions new threads ask one short question;
// waits for every answer; lets the process go idle; collects garbage and
// prints the process's resident set from /proc/self/status.
//
// It is a program of its own, not a benchmark, because a benchmark's RSS
// includes the test binary, the testing package and whatever earlier
// benchmarks left in the heap.
//
//	go run ./bot/bench/idle                  # the web chat, as opsbot run serves it
//	go run ./bot/bench/idle -connector null  # a platform that keeps nothing (Slack's case)
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/persist"
	"github.com/opsbot/opsbot/agent/tools"
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/hosts"
	"github.com/opsbot/opsbot/hosts/executor"
	"github.com/opsbot/opsbot/policy"
	"github.com/opsbot/opsbot/store"
)

func main() {
	sessions := flag.Int("sessions", 1000, "threads that each ask one question")
	batch := flag.Int("batch", 100, "threads asking at once")
	platform := flag.String("connector", "web", "web: the embedded web chat, which keeps every message in memory; null: a platform that keeps nothing")
	flag.Parse()
	if err := run(*platform, *sessions, max(*batch, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

func run(platform string, sessions, batch int) error {
	dir, err := os.MkdirTemp("", "opsbot-idle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := newDeployment(ctx, dir, platform)
	if err != nil {
		cancel()
		return err
	}
	defer func() {
		cancel() // the bot's loops end with ctx; Close waits for them
		d.close()
	}()
	before := measure()

	start := time.Now()
	for asked := 0; asked < sessions; {
		n := min(batch, sessions-asked)
		for i := range n {
			if err := d.ask(ctx, asked+i); err != nil {
				return err
			}
		}
		for range n {
			select {
			case <-d.done:
			case <-time.After(time.Minute):
				return fmt.Errorf("an answer did not finish within a minute")
			}
		}
		asked += n
	}
	took := time.Since(start)
	time.Sleep(2 * time.Second) // idle: the answers' goroutines end, the bot's loops tick
	after := measure()

	count, err := d.st.Sessions().CountSessions(ctx)
	if err != nil {
		return err
	}
	var disk int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, "opsbot.db"+suffix)); err == nil {
			disk += fi.Size()
		}
	}
	fmt.Printf("connector %s: %d sessions in the store, each with one answered turn (asked %d at a time, %.1fs)\n", platform, count, batch, took.Seconds())
	fmt.Printf("%-28s %12s %12s\n", "", "no sessions", fmt.Sprintf("%d idle", count))
	fmt.Printf("%-28s %9.1f MB %9.1f MB\n", "VmRSS (after GC)", before.rss, after.rss)
	fmt.Printf("%-28s %9.1f MB %9.1f MB\n", "VmHWM (peak RSS so far)", before.hwm, after.hwm)
	fmt.Printf("%-28s %9.1f MB %9.1f MB\n", "Go heap in use", before.heap, after.heap)
	fmt.Printf("%-28s %9.1f MB %9.1f MB\n", "Go runtime total (Sys)", before.sys, after.sys)
	fmt.Printf("%-28s %12d %12d\n", "goroutines", before.goroutines, after.goroutines)
	fmt.Printf("RSS per idle session: %.1f KB; database with its WAL: %.1f MB on disk\n",
		(after.rss-before.rss)*1024/float64(max(count, 1)), float64(disk)/(1<<20))
	return nil
}

// memory is the process's footprint at one moment, in MB.
type memory struct {
	rss, hwm, heap, sys float64
	goroutines          int
}

// measure collects garbage, returns freed pages to the OS and reads the
// resident set the kernel counts.
func measure() memory {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := memory{heap: mb(ms.HeapInuse), sys: mb(ms.Sys), goroutines: runtime.NumGoroutine()}
	m.rss, m.hwm = procStatus("VmRSS:"), procStatus("VmHWM:")
	return m
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// procStatus reads one kB figure of /proc/self/status, in MB.
func procStatus(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	return -1
}

// deployment is the bot as `opsbot run` wires it, with a fake model.
type deployment struct {
	st    *store.Store
	bot   *bot.Bot
	jobs  *hosts.Jobs
	fleet *hosts.Fleet
	ask   func(ctx context.Context, i int) error
	// done receives one value per finished answer.
	done chan struct{}
}

func newDeployment(ctx context.Context, dir, platform string) (*deployment, error) {
	st, err := store.Open(ctx, store.Config{Path: filepath.Join(dir, "opsbot.db")})
	if err != nil {
		return nil, err
	}
	d := &deployment{st: st, done: make(chan struct{}, 1024)}
	if d.fleet, err = hosts.NewFleet(hosts.Config{}); err != nil {
		st.Close()
		return nil, err
	}
	pol, err := policy.NewPolicy(policy.PolicyConfig{})
	if err != nil {
		d.close()
		return nil, err
	}
	conn, ask, err := newPlatform(ctx, platform, st)
	if err != nil {
		d.close()
		return nil, err
	}
	gate := approvals.NewGate(st.Approvals(), approvals.GateConfig{}, approvals.GateOptions{})
	exec := executor.Settled{Executor: &executor.Fleet{Fleet: d.fleet}, FollowUps: st.Approvals()}
	guard := &approvals.Guard{Policy: approvals.FleetPolicy{Policy: pol, Inventory: d.fleet.Inventory},
		Approver: approvals.GateApprover{Gate: gate, Store: st.Approvals(), Platform: conn.Name()}, Exec: exec}
	d.jobs = &hosts.Jobs{Store: st.Jobs(), Exec: exec}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	deps := bot.Deps{Approvals: st.Approvals(), Sessions: st.Sessions(), Inbox: st.Inbox(), JobRecords: st.Jobs(), Guard: guard, Gate: gate, Jobs: d.jobs,
		Hosts: []agent.HostInfo{{Name: "local"}}, Config: bot.Config{DataDir: filepath.Join(dir, "data")}, Log: log,
		Platforms: bot.NewPlatforms(nil, log, &counting{Connector: conn, done: d.done}),
		Agent: &agent.Agent{Provider: shortAnswer, History: persist.History{Store: st}, Notices: persist.Notices{Store: st},
			Tools: agent.NewRegistry(&tools.RunCommand{Guard: guard})}}
	if d.bot, err = bot.New(deps); err != nil {
		d.close()
		return nil, err
	}
	d.bot.Start(ctx)
	d.ask = func(ctx context.Context, i int) error { return ask(ctx, d.bot, i) }
	return d, nil
}

func (d *deployment) close() {
	if d.bot != nil {
		d.bot.Close()
		d.jobs.Close()
	}
	d.fleet.Close()
	d.st.Close()
}

// shortAnswer is the fake model: one short answer in three deltas.
var shortAnswer = agent.ProviderFunc(func(context.Context, agent.Request) iter.Seq[agent.StreamEvent] {
	return func(yield func(agent.StreamEvent) bool) {
		for _, d := range []string{"The disk on web-1 ", "is at 42%; ", "nothing to do."} {
			if !yield(agent.StreamEvent{Kind: agent.EventText, Text: d}) {
				return
			}
		}
		yield(agent.StreamEvent{Kind: agent.EventStop, StopReason: agent.StopEndTurn})
	}
})

// counting passes a connector through and counts finished answers: a
// complete post, or a stream that stops.
type counting struct {
	connectors.Connector
	done chan<- struct{}
}

// Limits are the connector's, streaming or not.
func (c *counting) Limits() connectors.Limits { return c.Connector.Limits() }

func (c *counting) Post(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	ref, err := c.Connector.Post(ctx, d, m)
	c.done <- struct{}{}
	return ref, err
}

func (c *counting) StartStream(ctx context.Context, d connectors.Dest, m connectors.Message) (connectors.Ref, error) {
	return c.Connector.(connectors.Streamer).StartStream(ctx, d, m)
}

func (c *counting) AppendStream(ctx context.Context, ref connectors.Ref, text string) error {
	return c.Connector.(connectors.Streamer).AppendStream(ctx, ref, text)
}

func (c *counting) StopStream(ctx context.Context, ref connectors.Ref, m connectors.Message) error {
	err := c.Connector.(connectors.Streamer).StopStream(ctx, ref, m)
	c.done <- struct{}{}
	return err
}
