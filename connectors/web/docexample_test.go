package web_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/web"
	"github.com/opsbot/opsbot/connectors/web/testutil"
)

// docPath is the API's documentation, whose example the test runs.
const docPath = "../../docs/WEB_API.md"

// scriptRunBound guards one run of the example against a hang: generous,
// as the machine may be loaded; the example ends far sooner.
const scriptRunBound = 60 * time.Second

// The example of docs/WEB_API.md, run as written with bash, curl, sed and
// jq against a connector on loopback, prints the bot's finished answer
// and exits 0, twice in a row: each run posts with its own request id, so
// the second run gets its own answer, not the first one's. The first run
// gets its answer live (the bot starts writing only once the script's
// stream is open); the second from the replay (the bot has finished
// before the script reads the post's answer).
func TestDocExampleAsksAndPrintsTheAnswer(t *testing.T) {
	t.Parallel()
	script := docExample(t)
	for _, tool := range []string{"bash", "curl", "sed", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the example needs %s: install it (apt-get install -y %s)", tool, tool)
		}
	}
	b := &uptimeBot{streamOpen: make(chan struct{}, 1)}
	base := b.serve(t)

	for run, live := range []bool{true, false} {
		b.live.Store(live)
		stdout, stderr, err := runScript(t, script, base)
		want := uptimeAnswer(run + 1)
		if err != nil || stdout != want+"\n" {
			t.Fatalf("run %d of the example: %v; it printed %q (stderr %q), want %q", run+1, err, stdout, stderr, want+"\n")
		}
	}
	ids := b.requestIDs()
	if len(ids) != 2 || ids[0] == ids[1] || !strings.HasPrefix(ids[0], "nightly-") {
		t.Errorf("the runs posted with request ids %q, want a new nightly-… id per run", ids)
	}
}

// docExample is the script between the example markers of the doc,
// without its code fence.
func docExample(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok1 := strings.Cut(string(doc), "<!-- example:begin -->\n")
	block, _, ok2 := strings.Cut(rest, "<!-- example:end -->")
	_, script, ok3 := strings.Cut(block, "```bash\n")
	script, _, ok4 := strings.Cut(script, "```")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("%s: no ```bash block between <!-- example:begin --> and <!-- example:end -->", docPath)
	}
	return script
}

// runScript runs script with bash, OPSBOT_WEB_URL set to base, in a
// process group of its own that is killed should it outlive the bound.
func runScript(t *testing.T, script, base string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scriptRunBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = append(os.Environ(), "OPSBOT_WEB_URL="+base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second // a killed pipeline's pipes close with it
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.String(), errOut.String(), err
}

// uptimeBot answers "run local uptime" as opsbot does: it posts, edits as
// output comes, and finishes the message. When live, it waits for an
// event stream to open before it writes anything.
type uptimeBot struct {
	conn       *web.Connector
	streamOpen chan struct{}
	// live is set between runs; the server's goroutines read it (the
	// detector cannot see that the script's post orders them).
	live    atomic.Bool
	answers atomic.Int32
	wg      sync.WaitGroup

	mu  sync.Mutex
	ids []string
}

func uptimeAnswer(n int) string {
	return "Running `uptime` on local\n```\n 10:00:0" + string(rune('0'+n)) + " up 3 days,  load average: 0.10\n```\n✓ exit 0"
}

// serve starts the connector with b as its bot and returns the URL of a
// loopback server for it.
func (b *uptimeBot) serve(t *testing.T) string {
	t.Helper()
	conn, err := web.New(context.Background(), web.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.conn = conn
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		conn.Start(ctx, func(ctx context.Context, ev connectors.Event) error { b.handle(ctx, ev); return nil })
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done; b.wg.Wait() })
	select {
	case <-conn.Running():
	case <-done:
		t.Fatal("Start returned before it took the bot's Handler")
	}
	h := conn.Handler()
	return testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST" && r.URL.Path == "/api/messages":
			b.mu.Lock()
			b.ids = append(b.ids, r.Header.Get(web.HeaderRequestID))
			b.mu.Unlock()
		case r.URL.Path == "/api/events":
			w = &readySignal{ResponseWriter: w, ready: b.streamOpen}
		}
		h.ServeHTTP(w, r)
	}))
}

func (b *uptimeBot) requestIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ids...)
}

func (b *uptimeBot) handle(ctx context.Context, ev connectors.Event) {
	if ev.Kind != connectors.EventMessage || ev.Text != "run local uptime" {
		panic("uptime bot: unexpected event " + ev.Text)
	}
	n := int(b.answers.Add(1))
	answer := func() {
		ref, err := b.conn.StartStream(ctx, connectors.Dest{Channel: ev.Channel, Thread: ev.Thread}, connectors.Message{Text: "Running `uptime` on local"})
		if err == nil {
			err = b.conn.Edit(ctx, ref, connectors.Message{Text: "Running `uptime` on local\n```\n 10:00"})
		}
		if err == nil {
			err = b.conn.Edit(ctx, ref, connectors.Message{Text: uptimeAnswer(n)})
		}
		if err == nil {
			err = b.conn.StopStream(ctx, ref, connectors.Message{Text: uptimeAnswer(n)})
		}
		if err != nil {
			panic("uptime bot: " + err.Error()) // a connector bug: stop loudly
		}
	}
	if !b.live.Load() { // finished before the post is answered: only the replay has it
		answer()
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		select {
		case <-b.streamOpen:
			answer()
		case <-ctx.Done():
		}
	}()
}

// readySignal passes an event stream through and signals once the stream
// sent its ready event: the stream is subscribed by then.
type readySignal struct {
	http.ResponseWriter
	ready chan<- struct{}
	sent  bool
}

func (w *readySignal) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if !w.sent && bytes.Contains(p, []byte("event: ready")) {
		w.sent = true
		select {
		case w.ready <- struct{}{}:
		default:
		}
	}
	return n, err
}

// Unwrap lets http.ResponseController flush the stream.
func (w *readySignal) Unwrap() http.ResponseWriter { return w.ResponseWriter }
