package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsbot/opsbot/store"
)

// TestMain lets the test binary act as opsbot itself for end-to-end tests:
// with OPSBOT_BE_MAIN=1 it runs main with the given arguments.
func TestMain(m *testing.M) {
	if os.Getenv("OPSBOT_BE_MAIN") == "1" {
		os.Exit(execute(os.Args[1:]))
	}
	if os.Getenv(scrubHelperEnv) == "1" {
		scrubHelper()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// scrubHelperEnv makes the test binary a process that scrubs its
// environment, says so, and waits for its input to close (see TestMain).
const scrubHelperEnv = "OPSBOT_TEST_SCRUB_ENV"

// scrubHelper is the child's side: scrub, report, wait.
func scrubHelper() {
	scrubEnv(nil)
	fmt.Println("scrubbed " + os.Getenv("SAFE_VAR"))
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// coverEnv is GOCOVERDIR set to this test binary's coverage folder when
// it runs under go test -cover, else nothing. A child that runs main from
// a binary built with -cover writes its coverage at exit: given this, it
// joins the package's figure; without it, it warns on stderr that
// GOCOVERDIR is not set, which a test of a child's exact output would
// read as the child's. A child given a whole environment of its own
// (cmd.Env = []string{...}) adds it; os.Environ() carries it already.
func coverEnv() []string {
	if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
		return []string{"GOCOVERDIR=" + f.Value.String()}
	}
	return nil
}

// opsbot prepares the test binary as an opsbot command in dir.
func opsbot(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	// HOME is a folder of its own: a bare command looks for `make run`'s
	// database under it, and must never find the developer's.
	cmd.Env = append(os.Environ(), "OPSBOT_BE_MAIN=1", "HOME="+t.TempDir())
	return cmd
}

// runOpsbot runs opsbot to completion and returns its exit code and output.
func runOpsbot(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := opsbot(t, t.TempDir(), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

func TestVersionPrintsVersionAndCommit(t *testing.T) {
	t.Parallel()
	code, out, _ := runOpsbot(t, "version")
	if code != 0 || !regexp.MustCompile(`^opsbot \S+ \(commit \S+, go1\.\d+`).MatchString(out) {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

func TestConfigCheckExitCodes(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("web:\n  listen: 127.0.0.1:8080\n  lisen: x\n"), 0o600)
	code, _, stderr := runOpsbot(t, "config", "check", "--config", bad)
	if code != 2 || !strings.Contains(stderr, "bad.yaml:3: web.lisen: unknown key") {
		t.Errorf("bad config: exit %d, stderr %q; want 2 naming line 3 and the key", code, stderr)
	}
	good := filepath.Join(t.TempDir(), "good.yaml")
	os.WriteFile(good, []byte("web:\n  listen: 127.0.0.1:8080\n"), 0o600)
	code, out, stderr := runOpsbot(t, "config", "check", "--config", good)
	if code != 0 || out != good+": ok\n" {
		t.Errorf("good config: exit %d, %q %q", code, out, stderr)
	}
	if code, _, stderr := runOpsbot(t, "config", "check"); code != 2 || !strings.Contains(stderr, "--config") {
		t.Errorf("no --config: exit %d %q", code, stderr)
	}
}

func TestUsageErrorsExit2AndEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"frobnicate"}, {"run", "--no-such-flag"}, {"version", "extra"}, {"run", "--log-level", "loud"}} {
		if code, _, stderr := runOpsbot(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, stderr)
		}
	}
	for _, cmd := range commandPaths(newRootCmd()) {
		code, out, _ := runOpsbot(t, append(cmd, "--help")...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%v --help: exit %d, %q", cmd, code, out)
		}
	}
}

func TestMigrateCreatesDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("store:\n  path: "+filepath.Join(dir, "x.db")+"\n"), 0o600)
	code, out, stderr := runOpsbot(t, "migrate", "--config", cfg)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("schema version %d", store.LatestSchema())) {
		t.Fatalf("migrate: exit %d %q %q", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err != nil {
		t.Error(err)
	}
}

// TestMigrateRefusesWhileTheBotRuns: the running bot's lock keeps a
// migration from changing the schema under it.
func TestMigrateRefusesWhileTheBotRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("store:\n  path: "+db+"\n"), 0o600)
	unlock, err := lockStore(db, "") // as `opsbot run` holds it
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	code, _, stderr := runOpsbot(t, "migrate", "--config", cfg)
	if code != 2 || !strings.Contains(stderr, fmt.Sprintf("another opsbot (pid %d) is using %s", os.Getpid(), db)) {
		t.Fatalf("migrate under a running bot: exit %d %q", code, stderr)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("migrate created the database while refusing")
	}
}

// The embedded default: serves the operational endpoints, and SIGINT ends
// it with exit code 0.
func TestRunServesEndpointsAndExitsCleanlyOnSignal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	// Port 0: the test must not collide with a running bot.
	os.WriteFile(cfg, []byte("web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\n"), 0o600)
	cmd := opsbot(t, dir, "run", "--config", cfg)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := waitForListen(t, stderr)

	for path, want := range map[string]string{"/healthz": "ok", "/readyz": `"sandbox":"sandbox: `, "/metrics": "opsbot_build_info"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d %.80q; want 200 with %q", path, resp.StatusCode, body, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "opsbot.db")); err != nil {
		t.Errorf("database not created in the working directory: %v", err)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("opsbot run after SIGINT: %v; want exit 0", err)
		}
	case <-time.After(20 * time.Second): // a hang, not a speed bound
		t.Fatal("opsbot run did not exit after SIGINT")
	}
}

// commandPaths lists every command below root as argument paths.
func commandPaths(root *cobra.Command) [][]string {
	var out [][]string
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		out = append(out, []string{c.Name()})
		for _, sub := range commandPaths(c) {
			out = append(out, append([]string{c.Name()}, sub...))
		}
	}
	return out
}

// waitForListen reads the JSON log until the start line names the address.
func waitForListen(t *testing.T, r io.Reader) string {
	t.Helper()
	re := regexp.MustCompile(`"listen":"(http://[^"]+)"`)
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, r)
			return m[1]
		}
	}
	t.Fatal("opsbot run ended without logging its address")
	return ""
}

// Every command that opens the database takes run's --data-dir, and a
// refusal by the lock names the setting the person used to choose it.
func TestDataDirOnEveryCommandThatOpensTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	code, out, stderr := runOpsbot(t, "migrate", "--data-dir", data)
	if code != 0 || !strings.Contains(out, filepath.Join(data, "opsbot.db")) {
		t.Fatalf("migrate --data-dir: exit %d %q %q", code, out, stderr)
	}
	for _, args := range [][]string{{"chat"}, {"ask", "q"}, {"hosts", "exec"}, {"health", "run"}} {
		cmd := newRootCmd()
		sub, _, err := cmd.Find(args)
		if err != nil || sub.Flag("data-dir") == nil {
			t.Errorf("opsbot %s has no --data-dir (%v)", strings.Join(args, " "), err)
		}
	}
	chat := opsbot(t, dir, "chat", "--data-dir", filepath.Join(dir, "chat"))
	chat.Stdin = strings.NewReader("hosts\n")
	if b, err := chat.CombinedOutput(); err != nil {
		t.Fatalf("chat --data-dir: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "chat", "opsbot.db")); err != nil {
		t.Errorf("chat --data-dir did not use the folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "opsbot.db")); err == nil {
		t.Error("a command given --data-dir created ./opsbot.db")
	}

	db := filepath.Join(data, "opsbot.db")
	unlock, err := lockStore(db, "") // as `opsbot run --data-dir` holds it
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("store:\n  path: "+db+"\n"), 0o600)
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"migrate", "--data-dir", data}, "with --data-dir DIR"},
		{[]string{"OPSBOT_DATA_DIR_FROM=DATA_DIR"}, []string{"migrate", "--data-dir", data}, "with DATA_DIR"},
		{[]string{"MAKELEVEL=1"}, []string{"migrate", "--data-dir", data}, "with --data-dir DIR"}, // any make, not make run
		{nil, []string{"migrate", "--config", cfg}, "with store.path in " + cfg},
	} {
		cmd := opsbot(t, dir, tc.args...)
		cmd.Env = append(cmd.Env, tc.env...)
		b, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(b), tc.want) {
			t.Errorf("%v %v: exit %d %q; want 2 and %q", tc.env, tc.args, cmd.ProcessState.ExitCode(), b, tc.want)
		}
	}
}
