//go:build soak

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsbot/opsbot/bot"
	"github.com/opsbot/opsbot/hosts/sshtest"
)

// TestSoakKillLoop is the kill half of `make soak` (issue 12): the real
// binary with a real config and the scripted model, killed with SIGKILL at
// a random moment of every iteration — every other one within 50 ms of an
// Approve click — and restarted, SOAK_ITERATIONS times (default 200). Each
// iteration asks for a command that waits for approval and is never
// clicked, one that bob approves, one the model asks for (bob approves it
// too), a running command, a background job and a streamed answer. After each restart, and
// once more at the end, it counts what must be 0; it logs every count and
// fails on any that is not 0.
func TestSoakKillLoop(t *testing.T) {
	n := 200
	if v := os.Getenv("SOAK_ITERATIONS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	s := newSoak(t)
	start := time.Now()
	for i := range n {
		s.iteration(i)
	}
	s.kill()
	s.start()
	s.settle()
	s.checkRestart()
	s.checkEnd()
	s.report(n, time.Since(start))
}

// soak is the loop's state: the bot's files, the model, what was asked
// and clicked, and the counts.
type soak struct {
	t    *testing.T
	dir  string
	cfg  string
	runs string // approved commands append their marker here
	db   *sql.DB
	llm  string
	bot  *exec.Cmd
	base string
	// since is when the running bot was started: what is older is the
	// killed one's.
	since time.Time
	// settled counts the running bot's settled log lines (bot.Settled);
	// settledNow is closed and replaced at each.
	settledMu  sync.Mutex
	settled    int
	settledNow chan struct{}
	gen        int // the running bot's: a killed one's late lines are not its

	mu      sync.Mutex
	asked   map[string]string // marker → thread
	pending []string          // markers of requests nobody clicks
	clicks  []click           // clicks answered 202
	retries []click           // clicks cut off before an answer: retried after the restart
	sleeps  []string          // the running commands
	kills   map[string]int    // where the kills landed
	counts  map[string]int    // what must stay 0
	seen    map[string]int    // what was seen, for the record
}

type click struct{ msg, approval, requestID, marker string }

func newSoak(t *testing.T) *soak {
	dir := t.TempDir()
	s := &soak{t: t, dir: dir, runs: filepath.Join(dir, "runs.log"), asked: map[string]string{},
		kills: map[string]int{}, counts: map[string]int{}, seen: map[string]int{}}
	s.cfg = filepath.Join(dir, "opsbot.yaml")
	// Debug: the harness waits on the bot's settled lines (bot.Settled).
	// A minute's expiry: a loop of a few minutes sees unclicked requests
	// expire (by the sweep, across kills) and their cards edited.
	conf := "web:\n  listen: 127.0.0.1:0\nlog:\n  format: json\n  level: debug\napprovals:\n  expiry: 1m\nstore:\n  path: " +
		filepath.Join(dir, "opsbot.db") + "\n"
	if err := os.WriteFile(s.cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s.llm = (&soakModel{runs: s.runs}).serve(t)
	t.Cleanup(s.endSleeps) // after the last bot's kill: leave nothing of the loop running
	s.start()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "opsbot.db")+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s.db = db
	return s
}

// start runs `opsbot run` and waits until it serves.
func (s *soak) start() {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(os.Args[0], "run", "--config", s.cfg)
	cmd.Dir = s.dir
	cmd.Env = append(env, "OPSBOT_BE_MAIN=1", "OPENAI_BASE_URL="+s.llm, "OPENAI_API_KEY=test-key", "OPSBOT_MODEL=fake-model")
	stderr, _ := cmd.StderrPipe()
	var logs io.Reader = stderr
	if dbg := os.Getenv("SOAK_DEBUG"); dbg != "" {
		f, _ := os.OpenFile(dbg, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		logs = io.TeeReader(stderr, f)
	}
	s.since = time.Now()
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s.settledMu.Lock()
	s.gen++
	s.settled, s.settledNow = 0, make(chan struct{})
	gen := s.gen
	s.settledMu.Unlock()
	listen := make(chan string, 1)
	go s.follow(logs, gen, listen)
	select {
	case s.base = <-listen:
	case <-time.After(2 * time.Minute): // a guard against a hang
		s.t.Fatal("opsbot run did not log its address within two minutes")
	}
	s.bot = cmd
}

// follow reads the bot's log (JSON lines) until it ends: it hands on the
// address it listens on, and counts the lines that say it settled.
func (s *soak) follow(logs io.Reader, gen int, listen chan<- string) {
	addr := regexp.MustCompile(`"listen":"(http://[^"]+)"`)
	lines := bufio.NewScanner(logs)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		l := lines.Text()
		if m := addr.FindStringSubmatch(l); m != nil {
			listen <- m[1]
		}
		if strings.Contains(l, `"msg":"`+bot.Settled+`"`) {
			s.settledMu.Lock()
			if gen != s.gen {
				s.settledMu.Unlock()
				continue
			}
			s.settled++
			close(s.settledNow)
			s.settledNow = make(chan struct{})
			s.settledMu.Unlock()
		}
	}
}

func (s *soak) kill() {
	s.bot.Process.Kill()
	s.bot.Wait()
}

// iteration asks, clicks and is killed once, then restarts and checks.
func (s *soak) iteration(i int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bot := s.bot
	killAt := func(where string) {
		if ctx.Err() == nil {
			s.count(s.kills, where)
			cancel()
			bot.Process.Kill()
		}
	}
	nearClick := i%2 == 1
	if !nearClick {
		t := time.AfterFunc(time.Duration(mrand.IntN(1500))*time.Millisecond, func() { killAt("at a random moment") })
		defer t.Stop()
	}
	s.act(ctx, i, nearClick, killAt)
	if !nearClick {
		<-ctx.Done() // the kill comes at its random moment
	}
	killAt("after the iteration's last action")
	s.kill()
	s.start()
	s.retryClicks()
	s.checkRestart()
	s.settle()
	s.checkSettled()
}

// act posts the iteration's requests and clicks Approve on two cards.
func (s *soak) act(ctx context.Context, i int, nearClick bool, killAt func(string)) {
	mark := func(kind string) string { return fmt.Sprintf("soak-%d-%s-%s", i, kind, nonce()) }
	p, a, m := mark("p"), mark("a"), mark("m")
	sleep := fmt.Sprintf("sleep 600.%06d", mrand.IntN(1_000_000))
	job := fmt.Sprintf("sleep 601.%06d", mrand.IntN(1_000_000))
	s.mu.Lock()
	s.sleeps = append(s.sleeps, sleep, job)
	s.mu.Unlock()
	posts := []struct{ marker, text string }{
		{p, "@opsbot run local echo " + p + " >> " + s.runs},
		{a, "@opsbot run local echo " + a + " >> " + s.runs},
		{"", "@opsbot run local " + sleep},
		{"", "@opsbot run --bg local " + job},
		{"", fmt.Sprintf("@opsbot tell me a story %d", i)},
		{m, "@opsbot please fix " + m},
	}
	for _, post := range posts {
		th, ok := s.post(ctx, post.text)
		if !ok {
			return
		}
		s.mu.Lock()
		if post.marker != "" {
			s.asked[post.marker] = th
		}
		if post.marker == p {
			s.pending = append(s.pending, p)
		}
		s.mu.Unlock()
	}
	for _, marker := range []string{a, m} {
		msg, id, ok := s.card(ctx, s.asked[marker])
		if !ok {
			return
		}
		c := click{msg: msg, approval: id, requestID: "soak-" + nonce(), marker: marker}
		if nearClick {
			go func() {
				time.Sleep(time.Duration(mrand.IntN(50)) * time.Millisecond)
				killAt("within 50 ms of an Approve click")
			}()
		}
		switch s.approve(c) {
		case http.StatusAccepted:
			s.mu.Lock()
			s.clicks = append(s.clicks, c)
			s.mu.Unlock()
		case 0: // cut off before the answer: the client retries it
			s.mu.Lock()
			s.retries = append(s.retries, c)
			s.mu.Unlock()
		}
		if nearClick {
			<-ctx.Done()
			return
		}
	}
}

// post starts a thread as alice; ok is false once the bot is gone.
func (s *soak) post(ctx context.Context, text string) (thread string, ok bool) {
	body, _ := json.Marshal(map[string]string{"channel": "ops", "user": "alice", "text": text})
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/api/messages", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	var res struct{ Thread string }
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&res) != nil {
		return "", false
	}
	return res.Thread, true
}

// card waits for the approval card in thread: its message and request.
func (s *soak) card(ctx context.Context, thread string) (msg, approval string, ok bool) {
	for ctx.Err() == nil {
		for _, m := range s.messages(ctx, thread) {
			for _, b := range m.Buttons {
				if b.ActionID == "approve" {
					return m.ID, b.Value, true
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return "", "", false
}

type soakMessage struct {
	ID       string
	Text     string
	Finished bool
	Buttons  []struct {
		ActionID string `json:"action_id"`
		Value    string
	}
}

func (s *soak) messages(ctx context.Context, thread string) []soakMessage {
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/api/threads/"+thread+"/messages", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var res struct{ Messages []soakMessage }
	json.NewDecoder(resp.Body).Decode(&res)
	return res.Messages
}

// approve clicks Approve as bob; 0 when no answer came.
func (s *soak) approve(c click) int {
	body, _ := json.Marshal(map[string]string{"message_id": c.msg, "action_id": "approve", "value": c.approval, "user": "bob"})
	req, _ := http.NewRequest("POST", s.base+"/api/actions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", c.requestID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// retryClicks sends again, after the restart, the clicks that got no
// answer, with the same X-Request-Id, as the API doc invites.
func (s *soak) retryClicks() {
	s.mu.Lock()
	retries := s.retries
	s.retries = nil
	s.mu.Unlock()
	for _, c := range retries {
		switch code := s.approve(c); code {
		case http.StatusAccepted:
			s.mu.Lock()
			s.clicks = append(s.clicks, c)
			s.mu.Unlock()
			s.count(s.seen, "clicks retried after a restart, answered 202")
		default:
			s.count(s.seen, fmt.Sprintf("clicks retried after a restart, answered %d", code))
		}
	}
}

// settle waits until the restarted bot has acted on what it found — no
// event open in the inbox, no decided approval without its follow-up —
// and its first expiry sweep has shown every decision on its card: it
// waits for the bot's settled log line (bot.Settled, logged only once
// the first sweep is done), and takes one that came before the clicks it
// retried only if the database shows nothing open since. No polling: a
// settled line comes after each change that settles the bot.
func (s *soak) settle() {
	guard := time.NewTimer(2 * time.Minute) // a guard against a hang, not a pace
	defer guard.Stop()
	for {
		s.settledMu.Lock()
		seen, next := s.settled, s.settledNow
		s.settledMu.Unlock()
		var open int
		s.db.QueryRow(`SELECT (SELECT count(*) FROM inbox WHERE done_at IS NULL)
			+ (SELECT count(*) FROM approval_followups f JOIN approvals a ON a.id = f.approval_id
			   WHERE f.done_at IS NULL AND a.state != 'pending')`).Scan(&open)
		if seen > 0 && open == 0 {
			return
		}
		select {
		case <-next:
		case <-guard.C:
			s.count(s.counts, "restarts that never settled (events or decisions left undone)")
			return
		}
	}
}

// checkRestart counts, right after a restart, what the killed process
// left that recovery must already have settled.
func (s *soak) checkRestart() {
	var integrity string
	s.db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity)
	if integrity != "ok" {
		s.count(s.counts, "integrity check failures")
	}
	since := s.since.UnixMilli()
	s.countQuery("unfinished messages (posted_messages)", `SELECT count(*) FROM posted_messages WHERE state = 'streaming' AND created_at < ?`, since)
	s.countQuery("unfinished messages (web chat)", `SELECT count(*) FROM web_messages WHERE bot = 1 AND finished = 0 AND updated_at < ?`, since)
	if os.Getenv("SOAK_DEBUG") != "" {
		rows, _ := s.db.Query(`SELECT id, thread, substr(message, 1, 160) FROM web_messages WHERE bot = 1 AND finished = 0 AND updated_at < ? LIMIT 5`, since)
		for rows.Next() {
			var id, th, m string
			rows.Scan(&id, &th, &m)
			var pm string
			s.db.QueryRow(`SELECT group_concat(id || ':' || message_id || ':' || state || ':' || created_at, ' ') FROM posted_messages WHERE message_id = ? OR thread = ?`, id, th).Scan(&pm)
			s.t.Logf("unfinished: %s in %s: %s; posted: %s; since %d", id, th, m, pm, since)
		}
		rows.Close()
	}
	s.countQuery("cards without an approval row", `SELECT count(*) FROM web_messages m, json_each(m.message, '$.buttons') b
		WHERE m.bot = 1 AND json_extract(b.value, '$.action_id') = 'approve'
		AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.id = json_extract(b.value, '$.value'))`)
	s.mu.Lock()
	sleeps := s.sleeps
	s.mu.Unlock()
	orphans := 0
	for _, sl := range sleeps {
		for _, pid := range sshtest.Processes(sl) {
			if !descends(pid, s.bot.Process.Pid) {
				orphans++ // left by a killed bot: the restart's sweep missed it
				if os.Getenv("SOAK_DEBUG") != "" {
					stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
					var rc string
					s.db.QueryRow(`SELECT group_concat(id || ':' || pid || ':' || command, ' | ') FROM running_commands`).Scan(&rc)
					s.t.Logf("orphan %d (%s): %s; bot %d; running_commands: %s", pid, sl, stat, s.bot.Process.Pid, rc)
				}
			}
		}
	}
	s.set("orphan processes", orphans)
	s.checkRuns()
}

// checkSettled counts, once the restarted bot acted on what it found,
// the clicks it lost.
func (s *soak) checkSettled() {
	s.mu.Lock()
	clicks := s.clicks
	s.mu.Unlock()
	lost := 0
	for _, c := range clicks {
		var votes int
		var state string
		s.db.QueryRow(`SELECT (SELECT count(*) FROM votes WHERE approval_id = ? AND voter = 'web:bob'), state FROM approvals WHERE id = ?`,
			c.approval, c.approval).Scan(&votes, &state)
		if votes == 0 && state == "pending" {
			lost++
		}
	}
	s.set("lost acknowledged clicks", lost)
}

// checkRuns counts commands run twice and commands run without an
// approval, from the file every approved command appends its marker to.
func (s *soak) checkRuns() {
	data, _ := os.ReadFile(s.runs)
	times := map[string]int{}
	for _, l := range strings.Fields(string(data)) {
		times[l]++
	}
	twice, unapproved := 0, 0
	for marker, n := range times {
		if n > 1 {
			twice++
		}
		var approved int
		s.db.QueryRow(`SELECT count(*) FROM approvals WHERE state = 'approved' AND instr(command, ?) > 0
			AND EXISTS (SELECT 1 FROM votes WHERE approval_id = approvals.id AND voter = 'web:bob')`, marker).Scan(&approved)
		if approved == 0 || strings.Contains(marker, "-p-") {
			unapproved++
		}
	}
	s.set("approved commands run twice", twice)
	s.set("commands run without an approval", unapproved)
	s.set("distinct approved commands run", len(times))
}

// checkEnd counts, after the last restart, what only the whole run shows:
// approvals approved and never run with nothing said, and requests nobody
// clicked that are neither pending nor correctly expired.
func (s *soak) checkEnd() {
	data, _ := os.ReadFile(s.runs)
	ran := string(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	silent, told := 0, 0
	rows, err := s.db.Query(`SELECT id, command FROM approvals WHERE state = 'approved'`)
	if err != nil {
		s.t.Fatal(err)
	}
	type approved struct{ id, command string }
	var all []approved
	for rows.Next() {
		var a approved
		rows.Scan(&a.id, &a.command)
		all = append(all, a)
	}
	rows.Close()
	for _, a := range all {
		marker := markerIn(a.command)
		if marker == "" || strings.Contains(ran, marker+"\n") {
			continue
		}
		if s.threadSays(s.asked[marker], marker) {
			told++
		} else {
			silent++
			s.t.Logf("approved, never run, nothing said: %s (thread %s)", a.command, s.asked[marker])
		}
	}
	s.counts["approved-not-run without a message"] = silent
	s.seen["approved-not-run, the thread told"] = told
	wrong := 0
	for _, p := range s.pending {
		var state, by string
		var expires, decided sql.NullInt64
		err := s.db.QueryRow(`SELECT state, decided_by, expires_at, decided_at FROM approvals WHERE instr(command, ?) > 0`, p).
			Scan(&state, &by, &expires, &decided)
		switch {
		case err == sql.ErrNoRows:
			s.seen["unclicked requests never made (killed first)"]++
		case state == "pending":
			s.seen["unclicked requests still pending"]++
		case state == "expired" && by == "opsbot:expiry" && decided.Int64 >= expires.Int64:
			s.seen["unclicked requests correctly expired"]++
		default:
			wrong++
			s.t.Logf("unclicked request %s is %s by %s", p, state, by)
		}
	}
	s.counts["pending approvals neither pending nor correctly expired"] = wrong
	var decided, stale int
	s.db.QueryRow(`SELECT count(*) FROM approvals WHERE state != 'pending'`).Scan(&decided)
	s.db.QueryRow(`SELECT count(*) FROM web_messages m, json_each(m.message, '$.buttons') b
		JOIN approvals a ON a.id = json_extract(b.value, '$.value')
		WHERE m.bot = 1 AND json_extract(b.value, '$.action_id') IN ('approve', 'deny') AND a.state != 'pending'`).Scan(&stale)
	s.seen["decided requests"] = decided
	s.seen["decided requests whose card still shows buttons"] = stale
}

// threadSays reports whether a bot message in thread names marker and
// says it did not run or was cut off.
func (s *soak) threadSays(thread, marker string) bool {
	if thread == "" {
		return false
	}
	for _, m := range s.messages(context.Background(), thread) {
		if strings.Contains(m.Text, marker) && (strings.Contains(m.Text, "Not run") || strings.Contains(m.Text, "Cut off") ||
			strings.Contains(m.Text, "not run")) {
			return true
		}
	}
	return false
}

// soakMarker is what every command of the loop carries.
var soakMarker = regexp.MustCompile(`soak-[0-9]+-[pam]-[0-9a-f]{8}`)

// markerIn finds the loop's marker in a text.
func markerIn(text string) string { return soakMarker.FindString(text) }

// countQuery records the most a count query gave after any restart.
func (s *soak) countQuery(what, query string, args ...any) {
	var n int
	if err := s.db.QueryRow(query, args...).Scan(&n); err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
	s.set(what, n)
}

// descends reports whether process pid is ancestor's or its descendant's
// (a command the running bot started, e.g. for an event it replayed).
func descends(pid, ancestor int) bool {
	for range 20 {
		if pid == ancestor {
			return true
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil || pid <= 1 {
			return false
		}
	}
	return false
}

func (s *soak) count(m map[string]int, what string) {
	s.mu.Lock()
	m[what]++
	s.mu.Unlock()
}

// set records a count that is a state (not a sum over restarts).
func (s *soak) set(what string, n int) {
	s.mu.Lock()
	if what == "distinct approved commands run" {
		s.seen[what] = n
	} else {
		s.counts[what] = max(s.counts[what], n)
	}
	s.mu.Unlock()
}

// report logs every count; any count that must be 0 and is not fails.
func (s *soak) report(n int, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var jobs int
	s.db.QueryRow(`SELECT count(*) FROM jobs WHERE state = 'interrupted'`).Scan(&jobs)
	s.seen["background jobs found interrupted by a kill (reported, not re-run)"] = jobs
	for _, k := range []string{"integrity check failures", "orphan processes", "restarts that never settled (events or decisions left undone)"} {
		s.counts[k] += 0
	}
	for what, like := range map[string]string{
		"threads told a command was cut off":   "%Cut off:%",
		"answers finalized as interrupted":     "%interrupted: opsbot restarted before this answer finished%",
		"threads told an approval was not run": "%Not run:%",
	} {
		var n int
		s.db.QueryRow(`SELECT count(*) FROM web_messages WHERE bot = 1 AND message LIKE ?`, like).Scan(&n)
		s.seen[what] = n
	}
	s.t.Logf("kill loop: %d iterations in %s (%.2f s each)", n, took.Round(time.Second), took.Seconds()/float64(n))
	for _, m := range []struct {
		title string
		m     map[string]int
	}{{"kills", s.kills}, {"must be 0", s.counts}, {"seen", s.seen}} {
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s.t.Logf("%s | %s | %d", m.title, k, m.m[k])
		}
	}
	for k, v := range s.counts {
		if v != 0 {
			s.t.Errorf("%s: %d, want 0", k, v)
		}
	}
}

// endSleeps kills what is left of the loop's running commands.
func (s *soak) endSleeps() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sl := range s.sleeps {
		for _, pid := range sshtest.Processes(sl) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
}

func nonce() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
