// Command webflood replays the red team's flood of the web API (issue 11)
// against the web chat as opsbot run serves it — the connector on a real
// SQLite file behind a loopback HTTP server — and reports what it cost:
// 10,000 threads, then 2,000 posts of 32 KB, then five event streams
// asking for the whole history (since=0) that never read.
//
// The server runs in a child process (this program, with -serve), so the
// figures are the server's alone: VmRSS and VmHWM (peak) from
// /proc/PID/status, the largest list response while walking every page,
// and how long a page load's requests take (GET /, /api/me,
// /api/channels, the first page of threads, the event stream until ready).
//
//	go run ./bot/bench/webflood
//	go run ./bot/bench/webflood -rate 0   # the default post rate: count the 429s
//
// With -opsbot, the server is the real binary instead (`opsbot run`, the
// whole bot with the web chat and no model), every post asks the bot
// something (`@opsbot hosts`) so that each thread is a session with an
// answer, and the report is its RSS at start, after the threads, and
// after a restart on the same database:
//
//	make build && go run ./bot/bench/webflood -opsbot bin/opsbot -posts 0
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/store"
)

func main() {
	serve := flag.String("serve", "", "run the server on this database file (the child process)")
	rate := flag.Float64("rate", 1e9, "web.post_rate of the server; 0 for the default (then most of the flood is refused with 429)")
	threads := flag.Int("threads", 10000, "threads the flood starts")
	posts := flag.Int("posts", 2000, "posts of 32 KB that follow")
	binary := flag.String("opsbot", "", "measure this opsbot binary (opsbot run) instead of the web connector alone")
	flag.Parse()
	var err error
	switch {
	case *binary != "":
		err = runBinary(*binary, *threads)
	case *serve != "":
		err = runServer(*serve, *rate)
	default:
		err = runFlood(*rate, *threads, *posts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(1)
	}
}

// runServer serves the web chat on a loopback port it prints, until its
// stdin closes.
func runServer(db string, rate float64) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.Open(ctx, store.Config{Path: db})
	if err != nil {
		return err
	}
	defer st.Close()
	cfg := web.Config{PostRate: rate, PostBurst: 20}
	if rate >= 1e6 {
		cfg.PostBurst = 1 << 30
	}
	conn, err := web.New(ctx, cfg, st.Web())
	if err != nil {
		return err
	}
	go conn.Start(ctx, func(context.Context, connectors.Event) error { return nil })
	<-conn.Running()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	go http.Serve(ln, conn.Handler())
	io.Copy(io.Discard, os.Stdin) // the parent closes it when done
	return nil
}

type server struct {
	base string
	pid  int
	db   string
}

func runFlood(rate float64, threads, posts int) error {
	dir, err := os.MkdirTemp("", "opsbot-flood-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, stop, err := startServer(dir, rate)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("%-44s %8.1f MB\n", "server RSS at start", s.rss())

	start := time.Now()
	ids, refused := s.flood(threads, func(i int) string {
		return fmt.Sprintf(`{"channel":"ops","user":"flood-%d","text":"thread %d"}`, i%50, i)
	})
	fmt.Printf("%-44s %8d posted, %d refused (429) in %.1f s\n", "threads", len(ids), refused, time.Since(start).Seconds())
	if len(ids) == 0 {
		return fmt.Errorf("no thread was posted")
	}
	big := strings.Repeat("x", 32000-10)
	start = time.Now()
	replies, refused := s.flood(posts, func(i int) string {
		thread := ids[len(ids)-1-i%min(len(ids), 20)] // the 20 most recent threads
		return fmt.Sprintf(`{"channel":"ops","thread":%q,"user":"flood-%d","text":"%05d%s"}`, thread, i%50, i, big)
	})
	fmt.Printf("%-44s %8d posted, %d refused (429) in %.1f s\n", "32 KB posts", len(replies), refused, time.Since(start).Seconds())
	fmt.Printf("%-44s %8.1f MB (peak %.1f MB)\n", "server RSS after the flood", s.rss(), s.hwm())

	largest, pages, err := s.walk("/api/channels/ops/threads?limit=200", "threads")
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %8.1f KB (%d pages of up to 200)\n", "largest thread list response", float64(largest)/1024, pages)
	largest, pages, err = s.walk("/api/threads/"+ids[len(ids)-1]+"/messages?limit=200", "messages")
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %8.1f KB (%d pages)\n", "largest message list response", float64(largest)/1024, pages)

	var worst time.Duration
	for range 5 {
		d, err := s.pageLoad()
		if err != nil {
			return err
		}
		worst = max(worst, d)
	}
	fmt.Printf("%-44s %8.0f ms (worst of 5)\n", "page load (/, me, channels, threads, stream)", float64(worst.Microseconds())/1000)

	stalled, err := s.stalledReaders(5)
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %8.1f MB (peak %.1f MB)\n", "server RSS, 5 stalled since=0 readers", s.rss(), s.hwm())
	time.Sleep(20 * time.Second) // past the 15 s write deadline
	for _, c := range stalled {
		c.Close()
	}
	fmt.Printf("%-44s %8.1f MB (peak %.1f MB)\n", "server RSS 20 s later", s.rss(), s.hwm())
	if fi, err := os.Stat(s.db); err == nil {
		fmt.Printf("%-44s %8.1f MB\n", "database file", float64(fi.Size())/(1<<20))
	}
	return nil
}

// startServer starts this program with -serve and waits for its address.
func startServer(dir string, rate float64) (*server, func(), error) {
	db := filepath.Join(dir, "opsbot.db")
	cmd := exec.Command(os.Args[0], "-serve", db, "-rate", strconv.FormatFloat(rate, 'g', -1, 64))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, nil, fmt.Errorf("the server did not start: %w", err)
	}
	stop := func() { stdin.Close(); cmd.Wait() }
	return &server{base: "http://" + strings.TrimSpace(addr), pid: cmd.Process.Pid, db: db}, stop, nil
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// flood posts n bodies from 32 clients at once; it returns the threads
// (or ids) posted and how many were refused with 429.
func (s *server) flood(n int, body func(int) string) (ids []string, refused int) {
	var mu sync.Mutex
	var next, tooMany atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				req, _ := http.NewRequest("POST", s.base+"/api/messages", strings.NewReader(body(i)))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				var res struct{ Thread string }
				json.NewDecoder(resp.Body).Decode(&res)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusCreated:
					mu.Lock()
					ids = append(ids, res.Thread)
					mu.Unlock()
				case http.StatusTooManyRequests:
					tooMany.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return ids, int(tooMany.Load())
}

// walk follows a list's cursors and returns its largest response.
func (s *server) walk(path, key string) (largest, pages int, err error) {
	cursor := ""
	for {
		p := path
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		b, err := s.get(p)
		if err != nil {
			return 0, 0, err
		}
		largest, pages = max(largest, len(b)), pages+1
		var page struct {
			Next string `json:"next_cursor"`
		}
		json.Unmarshal(b, &page)
		if page.Next == "" {
			return largest, pages, nil
		}
		cursor = page.Next
	}
}

func (s *server) get(path string) ([]byte, error) {
	resp, err := client.Get(s.base + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s %s", path, resp.Status, b)
	}
	return b, err
}

// pageLoad makes the requests the page makes when it loads, in order,
// and times them: the page, who am I, the channels, one screen of
// threads, and the event stream until it is ready.
func (s *server) pageLoad() (time.Duration, error) {
	start := time.Now()
	for _, p := range []string{"/", "/assets/app.js", "/api/me", "/api/channels", "/api/channels/ops/threads?limit=25"} {
		if _, err := s.get(p); err != nil {
			return 0, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/api/events", nil)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadBytes('{') // the ready event's data
	if err != nil || !bytes.Contains(line, []byte("event: ready")) {
		return 0, fmt.Errorf("the event stream did not get ready: %v", err)
	}
	return time.Since(start), nil
}

// stalledReaders opens n event streams that ask for the whole history and
// never read.
func (s *server) stalledReaders(n int) ([]net.Conn, error) {
	var out []net.Conn
	host := strings.TrimPrefix(s.base, "http://")
	for range n {
		c, err := net.Dial("tcp", host)
		if err != nil {
			return out, err
		}
		c.(*net.TCPConn).SetReadBuffer(4096)
		fmt.Fprintf(c, "GET /api/events?since=0 HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		out = append(out, c)
	}
	time.Sleep(5 * time.Second) // let the replays run into the full socket buffers
	return out, nil
}

func (s *server) rss() float64 { return procStatus(s.pid, "VmRSS:") }
func (s *server) hwm() float64 { return procStatus(s.pid, "VmHWM:") }

// procStatus reads one kB figure of /proc/PID/status, in MB.
func procStatus(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			kb, _ := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(line, field))[0], 64)
			return kb / 1024
		}
	}
	return 0
}
