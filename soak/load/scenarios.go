package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hundredThreads: 100 threads at once, each `run local echo hi`.
func hundredThreads(b *bot) string {
	w := b.watch()
	defer w.cancel()
	before := b.rssMB()
	ctx, cancel := withTimeout(3 * time.Minute)
	defer cancel()
	var mu sync.Mutex
	var took []time.Duration
	var errs atomic.Int32
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			t0 := time.Now()
			p := b.post(fmt.Sprintf("user%d", i), "", "@opsbot run local echo hi")
			if p.Status != 201 || !w.waitAnswers(ctx, p.Thread, 1) {
				errs.Add(1)
				return
			}
			mu.Lock()
			took = append(took, time.Since(t0))
			mu.Unlock()
		})
	}
	wg.Wait()
	return fmt.Sprintf("post→done p50 %s p99 %s, %d errors, RSS %.1f → %.1f MB",
		ms(percentile(took, 50)), ms(percentile(took, 99)), errs.Load(), before, b.rssMB())
}

// idleStreams: 1,000 event-stream clients that only listen.
func idleStreams(b *bot) string {
	before := b.rssMB()
	ctx, cancel := context.WithCancel(context.Background())
	var ready, got sync.WaitGroup
	marker := fmt.Sprintf("marker-%d", time.Now().UnixNano())
	var failed atomic.Int32
	var done sync.WaitGroup
	for range 1000 {
		ready.Add(1)
		got.Add(1)
		done.Go(func() {
			isReady, isGot := false, false
			err := b.follow(ctx, -1, func() { isReady = true; ready.Done() }, func(v view) bool {
				if !isGot && strings.Contains(v.Text, marker) {
					isGot = true
					got.Done()
				}
				return true
			})
			if !isReady {
				failed.Add(1)
				ready.Done()
			}
			if !isGot {
				got.Done()
			}
			_ = err
		})
	}
	ready.Wait()
	open := b.rssMB()
	t0 := time.Now()
	b.post("alice", "", marker)
	got.Wait()
	fanout := time.Since(t0)
	cancel()
	done.Wait()
	return fmt.Sprintf("%d connected (%d failed), RSS %.1f → %.1f MB with them open (%.1f KB each), a post reached all in %s",
		1000-failed.Load(), failed.Load(), before, open, (open-before)*1024/1000, ms(fanout))
}

// history fills the chat with n messages of about size bytes, in threads
// of 100, not for the bot, so the stalled reader and the replays have
// something long to read.
func history(b *bot, n, size int) {
	pad := strings.Repeat("x", size)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for t := w; t < n/100; t += 8 {
				root := b.post("historian", "", fmt.Sprintf("history %d %s", t, pad))
				for i := 1; i < 100; i++ {
					b.post("historian", root.Thread, fmt.Sprintf("history %d.%d %s", t, i, pad))
				}
			}
		})
	}
	wg.Wait()
}

// timedPosts posts n messages, one every gap, and returns how long each
// took from the post until a following stream showed it.
func timedPosts(b *bot, w *watcher, n int, gap time.Duration) []time.Duration {
	var out []time.Duration
	ctx, cancel := withTimeout(time.Minute + time.Duration(n)*gap)
	defer cancel()
	for range n {
		t0 := time.Now()
		p := b.post("alice", "", "ping")
		if p.Status == 201 && w.waitSeen(ctx, p.ID) {
			out = append(out, time.Since(t0))
		}
		time.Sleep(gap)
	}
	return out
}

// stalledReader: one client opens a replay of the whole history and never
// reads, for 60 s; the others' post→seen times meanwhile.
func stalledReader(b *bot) string {
	history(b, 3000, 2000)
	w := b.watch()
	defer w.cancel()
	base := timedPosts(b, w, 20, 100*time.Millisecond)
	conn, err := net.Dial("tcp", strings.TrimPrefix(b.base, "http://"))
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /api/events?since=0 HTTP/1.1\r\nHost: %s\r\n\r\n", strings.TrimPrefix(b.base, "http://"))
	// Whether the server gave up on it is seen from the server's side: the
	// client, never reading, cannot see a close queued behind the data.
	stop := make(chan struct{})
	closedAfter := watchClose(b.cmd.Process.Pid, conn.LocalAddr().(*net.TCPAddr), stop)
	during := timedPosts(b, w, 120, 500*time.Millisecond)
	close(stop)
	closed := "no, still open after the 60 s"
	if c := <-closedAfter; c.err != nil {
		closed = "could not tell: " + c.err.Error()
	} else if c.closed {
		closed = fmt.Sprintf("yes, %.1f s after it connected", c.after.Seconds())
	}
	return fmt.Sprintf("others' post→seen before p50 %s p99 %s; during 60 s p50 %s p99 %s max %s (%d of 120); the stalled stream closed by the server (seen from its side): %s",
		ms(percentile(base, 50)), ms(percentile(base, 99)), ms(percentile(during, 50)), ms(percentile(during, 99)), ms(percentile(during, 100)), len(during), closed)
}

// oneThread: 200 messages into one thread as fast as they can be sent.
func oneThread(b *bot) string {
	w := b.watch()
	defer w.cancel()
	first := b.post("alice", "", "@opsbot run local echo 0")
	codes := map[int]int{201: 1}
	for i := 1; i < 200; i++ {
		codes[b.post("alice", first.Thread, fmt.Sprintf("@opsbot run local echo %d", i)).Status]++
	}
	accepted := codes[201]
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	busy := w.texts(first.Thread, "Not taken")
	ok := w.waitAnswers(ctx, first.Thread, accepted-busy)
	w.mu.Lock()
	answered := w.answers[first.Thread]
	w.mu.Unlock()
	busy = w.texts(first.Thread, "Not taken")
	lost := accepted - answered - busy
	return fmt.Sprintf("200 sent: %d accepted (201), %d refused 429 with Retry-After, %d other; %d answered, %d told busy in the thread, %d lost (all answered: %v)",
		accepted, codes[429], 200-accepted-codes[429], answered, busy, lost, ok)
}

// replayWhilePosting: 20 clients replay the whole history over and over
// while one person posts. The replaying clients only look for the end of
// the replay (the seq in each frame's id line) rather than decode every
// message: they share the driver's process and the machine's two cores
// with the poster and opsbot, and decoding JSON as fast as opsbot sends
// it measured the driver more than opsbot (the replays were 3× faster,
// the post no faster).
func replayWhilePosting(b *bot) string {
	if b.seq() < 3000 { // run alone (-only replay): make the history
		history(b, 3000, 2000)
	}
	upTo := b.seq()
	ctx, cancel := context.WithCancel(context.Background())
	var replays, messages atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for ctx.Err() == nil {
				n, err := b.replay(ctx, upTo)
				messages.Add(int64(n))
				if err == nil {
					replays.Add(1)
				}
			}
		})
	}
	t0 := time.Now()
	var took []time.Duration
	for range 50 {
		p := b.post("alice", "", "while others replay")
		if p.Status == 201 {
			took = append(took, p.Took)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	return fmt.Sprintf("history of %d changes, %d whole replays done (%.0f messages/s); 50 posts meanwhile: p50 %s p99 %s max %s",
		upTo, replays.Load(), float64(messages.Load())/time.Since(t0).Seconds(),
		ms(percentile(took, 50)), ms(percentile(took, 99)), ms(percentile(took, 100)))
}

// steadyLoad: 10 people each running `run local echo hi` in a new thread,
// one after the other, for d; RSS is sampled every 10 s.
func steadyLoad(b *bot, d time.Duration) string {
	w := b.watch()
	defer w.cancel()
	ctx, cancel := withTimeout(d)
	defer cancel()
	var runs, errs atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			for ctx.Err() == nil {
				p := b.post(fmt.Sprintf("steady%d", i), "", "@opsbot run local echo hi")
				wait, stop := withTimeout(time.Minute)
				if p.Status != 201 || !w.waitAnswers(wait, p.Thread, 1) {
					errs.Add(1)
				}
				stop()
				runs.Add(1)
			}
		})
	}
	var samples []float64
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-tick.C:
			samples = append(samples, b.rssMB())
		case <-ctx.Done():
		}
	}
	wg.Wait()
	if len(samples) < 12 {
		return fmt.Sprintf("%d runs, %d errors; too short for a first and a last minute: RSS %v", runs.Load(), errs.Load(), samples)
	}
	first, last := avg(samples[:6]), avg(samples[len(samples)-6:])
	return fmt.Sprintf("%d runs (%.1f/s), %d errors; RSS first minute %.1f MB, last minute %.1f MB (%+.1f %%), min %.1f max %.1f",
		runs.Load(), float64(runs.Load())/d.Seconds(), errs.Load(), first, last, 100*(last-first)/first, minOf(samples), maxOf(samples))
}

func avg(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
