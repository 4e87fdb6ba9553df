package hosts

import (
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// capture keeps the first and last bytes of a stream within a fixed
// budget, so memory stays bounded whatever a command prints: the head is
// filled first, then the tail is a ring that overwrites its oldest bytes.
type capture struct {
	headCap, tailCap int
	head             []byte
	tail             []byte // ring once len(tail) == tailCap
	next             int    // ring position of the oldest tail byte
	total            int64
}

func newCapture(limit int) *capture {
	h := (limit + 1) / 2
	return &capture{headCap: h, tailCap: limit - h}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if c.tailCap == 0 || len(p) == 0 {
		return n, nil
	}
	if len(p) >= c.tailCap { // only the last tailCap bytes can survive
		c.tail = append(c.tail[:0], p[len(p)-c.tailCap:]...)
		c.next = 0
		return n, nil
	}
	if room := c.tailCap - len(c.tail); room > 0 { // ring still filling
		k := min(room, len(p))
		c.tail = append(c.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // ring full: overwrite the oldest bytes
		k := copy(c.tail[c.next:], p)
		p = p[k:]
		c.next = (c.next + k) % c.tailCap
	}
	return n, nil
}

// truncated reports whether bytes were dropped.
func (c *capture) truncated() bool { return c.total > int64(c.headCap+c.tailCap) }

// retained is how many bytes the capture holds in memory.
func (c *capture) retained() int { return cap(c.head) + cap(c.tail) }

// bytes returns the kept output: everything when nothing was dropped,
// else head, a marker saying how much was left out, and tail, each cut on
// a UTF-8 boundary so the marker never splits a character.
func (c *capture) bytes() []byte {
	tail := make([]byte, 0, len(c.tail))
	tail = append(tail, c.tail[c.next:]...)
	tail = append(tail, c.tail[:c.next]...)
	if !c.truncated() {
		return append(append([]byte{}, c.head...), tail...)
	}
	head := trimPartialEnd(c.head)
	tail = trimPartialStart(tail)
	omitted := c.total - int64(len(head)+len(tail))
	marker := fmt.Sprintf("\n[... opsbot: %d bytes of output omitted ...]\n", omitted)
	out := make([]byte, 0, len(head)+len(marker)+len(tail))
	return append(append(append(out, head...), marker...), tail...)
}

// trimPartialEnd drops an incomplete UTF-8 sequence at the end of b.
func trimPartialEnd(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// trimPartialStart drops UTF-8 continuation bytes at the start of b.
func trimPartialStart(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}

// sink is where a running command's output goes: the capture and the
// caller's chunk callback. One lock orders both streams, so onChunk is
// never called concurrently and Output interleaves as chunks arrived.
type sink struct {
	mu      sync.Mutex
	host    string
	onChunk func(Chunk)
	out     *capture
}

func newSink(host string, limit int, onChunk func(Chunk)) *sink {
	return &sink{host: host, onChunk: onChunk, out: newCapture(limit)}
}

// writer returns the io.Writer of one stream.
func (s *sink) writer(stream Stream) io.Writer { return streamWriter{s, stream} }

// fill copies the captured output into r.
func (s *sink) fill(r *Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Output = s.out.bytes()
	r.Truncated = s.out.truncated()
	r.OutputBytes = s.out.total
}

type streamWriter struct {
	s      *sink
	stream Stream
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.out.Write(p)
	if w.s.onChunk != nil && len(p) > 0 {
		w.s.onChunk(Chunk{Host: w.s.host, Stream: w.stream, Data: p})
	}
	return len(p), nil
}
