package redact

import (
	"io"
	"strings"
	"sync"
)

// Stream redacts text that arrives in chunks, such as command output or
// a model's answer, and passes it on a line at a time: it holds back the
// unfinished last line (at most MaxLine bytes), so a secret split across
// two chunks is still caught. Call Flush at the end to pass on what is
// held back. Whatever the chunks, the text passed on equals String of the
// whole text. A Stream is safe for concurrent use.
type Stream struct {
	r    *Redactor
	emit func(string) error

	mu  sync.Mutex
	buf []byte
	st  lineState
}

// NewStream returns a Stream passing redacted text to emit. An error from
// emit is returned by the Write or Flush that called it.
func (r *Redactor) NewStream(emit func(string) error) *Stream {
	return &Stream{r: r, emit: emit}
}

// NewWriter returns a Stream writing redacted text to w.
func (r *Redactor) NewWriter(w io.Writer) *Stream {
	return r.NewStream(func(s string) error {
		_, err := io.WriteString(w, s)
		return err
	})
}

var _ io.Writer = (*Stream)(nil)

// Write takes a chunk and passes on the redacted lines it completes. It
// always consumes all of p.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	return len(p), s.drain(false)
}

// WriteString is Write for a string.
func (s *Stream) WriteString(p string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	return len(p), s.drain(false)
}

// Flush redacts and passes on the text held back. Call it when the
// stream ends; called in the middle, it cuts the held-back line there, as
// a line longer than MaxLine is cut.
func (s *Stream) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.drain(true)
}

// Held is the number of bytes held back, for a caller that reports it.
func (s *Stream) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buf)
}

// drain redacts every complete segment in buf and emits them at once.
func (s *Stream) drain(final bool) error {
	pending := string(s.buf)
	var b strings.Builder
	used := 0
	for {
		n, ok := nextSegment(pending[used:], final)
		if !ok {
			break
		}
		s.r.segment(&b, &s.st, pending[used:used+n])
		used += n
	}
	s.buf = append(s.buf[:0], pending[used:]...)
	if b.Len() == 0 {
		return nil
	}
	return s.emit(b.String())
}
