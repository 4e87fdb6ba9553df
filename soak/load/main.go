// Command load is the load half of `make soak`: it starts the real opsbot
// binary with a real config (the web chat on loopback, SQLite in a
// temporary folder) and drives it through the web API as people would,
// printing one line of figures per scenario (docs/BENCHMARKS.md records
// them):
//
//   - 100 threads at once, each `run local echo hi`: post→done p50/p99,
//     errors, RSS before and after;
//   - 1,000 idle event-stream clients: RSS, and how long a post takes to
//     reach all of them;
//   - a reader that never reads, for 60 s: the others' post→seen times
//     meanwhile, against before;
//   - 200 messages into one thread: none lost, the overflow told;
//   - 20 clients replaying a long history while someone posts: the post's
//     time;
//   - steady load for -steady (default 10m): RSS sampled, first minute
//     against last.
//
// It is not part of `make test`: it takes minutes and measures the
// machine as much as opsbot.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/opsbot", "the opsbot binary to run")
	steady := flag.Duration("steady", 10*time.Minute, "how long the steady load runs")
	only := flag.String("only", "", "run only the scenarios whose names contain this")
	flag.StringVar(&memProfile, "memprofile", "", "have opsbot write its heap profile to FILE when it stops (opsbot run --memprofile)")
	flag.Parse()
	raiseFileLimit()
	dir, err := os.MkdirTemp("", "opsbot-soak-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	b, err := start(*bin, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer b.stop()
	fmt.Printf("opsbot %s, pid %d, RSS at start %.1f MB\n", b.base, b.cmd.Process.Pid, b.rssMB())
	scenarios := []struct {
		name string
		run  func(*bot) string
	}{
		{"threads", hundredThreads},
		{"idle-streams", idleStreams},
		{"stalled-reader", stalledReader},
		{"one-thread", oneThread},
		{"replay", replayWhilePosting},
		{"steady", func(b *bot) string { return steadyLoad(b, *steady) }},
	}
	for _, s := range scenarios {
		if !strings.Contains(s.name, *only) {
			continue
		}
		t0 := time.Now()
		line := s.run(b)
		fmt.Printf("%-15s %s (%.0f s)\n", s.name, line, time.Since(t0).Seconds())
	}
}

// memProfile is passed to opsbot run as --memprofile when set.
var memProfile string

// bot is the running opsbot process.
type bot struct {
	cmd  *exec.Cmd
	base string
}

// start runs `opsbot run` in dir on a free loopback port, its post rate
// lifted (the scenarios post from one address faster than a person).
func start(bin, dir string) (*bot, error) {
	cfg := filepath.Join(dir, "opsbot.yaml")
	yaml := "web:\n  listen: 127.0.0.1:0\n  post_rate: 1000000\n  post_burst: 1000000\nlog:\n  format: json\n" +
		"store:\n  path: " + filepath.Join(dir, "opsbot.db") + "\nbot:\n  data_dir: " + filepath.Join(dir, "data") + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--config", cfg}
	if memProfile != "" {
		p, err := filepath.Abs(memProfile)
		if err != nil {
			return nil, err
		}
		args = append(args, "--memprofile", p)
	}
	cmd := exec.Command(abs, args...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`"listen":"(http://[^"]+)"`)
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			go warnings(lines) // what went wrong stays visible
			return &bot{cmd: cmd, base: m[1]}, nil
		}
		fmt.Fprintln(os.Stderr, lines.Text())
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("opsbot run ended without logging its address")
}

// warnings copies opsbot's log lines at WARN and ERROR to stderr.
func warnings(lines *bufio.Scanner) {
	for lines.Scan() {
		if l := lines.Text(); strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
			fmt.Fprintln(os.Stderr, l)
		}
	}
}

func (b *bot) stop() {
	b.cmd.Process.Signal(syscall.SIGTERM)
	b.cmd.Wait()
}

// rssMB is the process's resident set in MB, from /proc.
func (b *bot) rssMB() float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// raiseFileLimit lifts the open-file limit to its hard maximum: a
// thousand event streams are two thousand sockets, here and in opsbot
// (which inherits it).
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// percentile is the p-th percentile (0..100) of ds, or 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// withTimeout is a context for one scenario's waits: a bound on a hang,
// not a speed.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
