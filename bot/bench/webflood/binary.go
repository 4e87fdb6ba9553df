package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var memprofile = flag.String("memprofile", "", "with -opsbot: the binary writes its heap profile here when it stops (go tool pprof)")

// runBinary measures the real opsbot binary: RSS at start, after threads
// threads each asking `@opsbot hosts` (answered without a model), and at
// start again on the same database.
func runBinary(binary string, threads int) error {
	dir, err := os.MkdirTemp("", "opsbot-flood-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, stop, err := startBinary(binary, dir)
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %8.1f MB\n", "opsbot run: RSS at start", s.rss())
	start := time.Now()
	ids, refused := s.flood(threads, func(i int) string {
		return fmt.Sprintf(`{"channel":"ops","user":"flood-%d","text":"@opsbot hosts"}`, i%50)
	})
	fmt.Printf("%-44s %8d posted, %d refused (429) in %.1f s\n", "threads", len(ids), refused, time.Since(start).Seconds())
	if len(ids) == 0 {
		stop()
		return fmt.Errorf("no thread was posted")
	}
	if err := s.awaitAnswers(len(ids), 10*time.Minute); err != nil {
		stop()
		return err
	}
	fmt.Printf("%-44s %8.1f MB (peak %.1f MB; anonymous %.1f, file %.1f) after %.1f s\n", "RSS with every thread answered",
		s.rss(), s.hwm(), procStatus(s.pid, "RssAnon:"), procStatus(s.pid, "RssFile:"), time.Since(start).Seconds())
	stop()
	s, stop, err = startBinary(binary, dir)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("%-44s %8.1f MB\n", "RSS at start on that database", s.rss())
	if fi, err := os.Stat(s.db); err == nil {
		fmt.Printf("%-44s %8.1f MB\n", "database file", float64(fi.Size())/(1<<20))
	}
	return nil
}

// startBinary runs `opsbot run` on dir's config and database, and waits
// until it is ready.
func startBinary(binary, dir string) (*server, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	db := filepath.Join(dir, "opsbot.db")
	cfg := filepath.Join(dir, "opsbot.yaml")
	yaml := fmt.Sprintf("web:\n  listen: %s\n  post_rate: 1000000\n  post_burst: 1000000\nstore:\n  path: %s\nbot:\n  data_dir: %s\n",
		addr, db, filepath.Join(dir, "data"))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return nil, nil, err
	}
	args := []string{"run", "--config", cfg}
	if _, err := os.Stat(db); *memprofile != "" && err != nil { // the first start only
		args = append(args, "--memprofile", *memprofile)
	}
	cmd := exec.Command(binary, args...)
	log, err := os.Create(filepath.Join(dir, "opsbot.log"))
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait(); log.Close() }
	s := &server{base: "http://" + addr, pid: cmd.Process.Pid, db: db}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				time.Sleep(2 * time.Second) // past start-up's own work (the pages handed back)
				return s, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			out, _ := os.ReadFile(filepath.Join(dir, "opsbot.log"))
			return nil, nil, fmt.Errorf("opsbot run was not ready in a minute:\n%s", out)
		}
	}
}

// awaitAnswers waits until the bot has answered n threads: its finished
// messages in n threads, read from the database (sqlite3, read-only).
func (s *server) awaitAnswers(n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		out, err := exec.Command("sqlite3", s.db, "SELECT count(DISTINCT thread) FROM web_messages WHERE bot = 1 AND finished = 1").Output()
		got, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		if err == nil && got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s, %d of %d threads answered (%v)", limit, got, n, err)
		}
		time.Sleep(time.Second)
	}
}
