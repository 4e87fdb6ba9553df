package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --listen, else OPSBOT_LISTEN, else web.listen; --data-dir moves the
// database and the sessions' folders.
func TestRunFlagsOverrideTheConfig(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "OPSBOT_LISTEN" {
				return v
			}
			return ""
		}
	}
	dir := filepath.Join(t.TempDir(), "state")
	for _, tc := range []struct {
		args       []string
		env, want  string
		wantErr    string
		wantDBPath string
	}{
		{nil, "", "127.0.0.1:8080", "", "opsbot.db"},
		{nil, "127.0.0.1:9001", "127.0.0.1:9001", "", "opsbot.db"},
		{[]string{"--listen", "127.0.0.1:9002"}, "127.0.0.1:9001", "127.0.0.1:9002", "", "opsbot.db"},
		{[]string{"--listen", "0.0.0.0:9003"}, "", "", "--listen 0.0.0.0:9003: other machines could reach the bot there", ""},
		{nil, "nonsense", "", "OPSBOT_LISTEN nonsense: \"nonsense\" has no port", ""},
		{[]string{"--data-dir", dir}, "", "127.0.0.1:8080", "", filepath.Join(dir, "opsbot.db")},
	} {
		cmd := newRunCmd()
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg := defaultConfig()
		err := cfg.applyRunFlags(cmd, env(tc.env))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v %q: %v; want %q", tc.args, tc.env, err, tc.wantErr)
			}
		case err != nil || cfg.Web.Listen != tc.want || cfg.Store.Path != tc.wantDBPath:
			t.Errorf("%v %q: %v, listen %q, db %q; want %q, %q", tc.args, tc.env, err, cfg.Web.Listen, cfg.Store.Path, tc.want, tc.wantDBPath)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("--data-dir did not create its folder: %v", err)
	}
	// The sessions' folders are DIR/sessions/N: bot.data_dir is DIR itself
	// (it was DIR/sessions, and cards showed DIR/sessions/sessions/1).
	cmd := newRunCmd()
	if err := cmd.ParseFlags([]string{"--data-dir", dir}); err != nil {
		t.Fatal(err)
	}
	cfg := defaultConfig()
	if err := cfg.applyRunFlags(cmd, env("")); err != nil || cfg.Bot.DataDir != dir {
		t.Errorf("--data-dir %s: bot.data_dir %q, %v; want the folder itself", dir, cfg.Bot.DataDir, err)
	}
}

// `opsbot run --listen ADDR --data-dir DIR` with no config serves there
// and keeps its database in DIR, not in the working directory.
func TestRunListenAndDataDir(t *testing.T) {
	t.Parallel()
	work, data := t.TempDir(), filepath.Join(t.TempDir(), "opsbot")
	cmd := opsbot(t, work, "run", "--listen", "127.0.0.1:0", "--data-dir", data)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := waitForListen(t, stderr)
	if code, body := get(t, base+"/readyz"); code != 200 || !strings.Contains(body, `"status":"ready"`) {
		t.Errorf("GET /readyz = %d %q", code, body)
	}
	if _, err := os.Stat(filepath.Join(data, "opsbot.db")); err != nil {
		t.Errorf("no database in --data-dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "opsbot.db")); err == nil {
		t.Errorf("a database in the working directory despite --data-dir")
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGINT: %v", err)
	}
}

// A second opsbot on the same database refuses to start, naming the
// first one's pid, with exit 2.
func TestSecondRunOnOneDatabaseRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := opsbot(t, dir, "run", "--listen", "127.0.0.1:0")
	stderr, _ := first.StderrPipe()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	waitForListen(t, stderr)
	second := opsbot(t, dir, "run", "--listen", "127.0.0.1:0")
	var out bytes.Buffer
	second.Stdout, second.Stderr = &out, &out
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(60*time.Second, func() { second.Process.Kill() }) // a second bot that runs, not a speed bound
	err := second.Wait()
	guard.Stop()
	want := "another opsbot (pid " + strconv.Itoa(first.Process.Pid) + ") is using opsbot.db; stop it, or give this one another database with --data-dir DIR"
	if code := second.ProcessState.ExitCode(); code != 2 || !strings.Contains(out.String(), want) {
		t.Errorf("second run: exit %d (%v), %q; want 2 with %q", code, err, out.String(), want)
	}
	first.Process.Signal(syscall.SIGINT)
	if err := first.Wait(); err != nil {
		t.Errorf("first run after SIGINT: %v", err)
	}
}

// An address in use is said in words, with how to choose another, not as
// a bind error's chain.
func TestRunOnAnAddressInUseSaysSo(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	cmd := opsbot(t, t.TempDir(), "run", "--listen", addr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() }) // a run that serves, not a speed bound
	cmd.Wait()
	guard.Stop()
	want := addr + " is already in use (is another opsbot running?); stop it, or choose another with --listen ADDR"
	// It cannot start as configured, as with its database in use: exit 2.
	if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(out.String(), want) || strings.Contains(out.String(), "bind:") {
		t.Errorf("run on a taken address: %v, %q; want a failure saying %q", cmd.ProcessState, out.String(), want)
	}
}
