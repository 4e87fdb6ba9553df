package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// ErrNoTerminal is returned by Confirm when there is no terminal to ask on:
// a command that needs approval is then denied.
var ErrNoTerminal = errors.New("there is no terminal to ask for approval on (stdin is not a terminal), so the answer is no")

// Terminal writes an answer and its activity, and asks questions.
type Terminal struct {
	// Out receives the answer text (stdout).
	Out io.Writer
	// Err receives activity and prompts (stderr).
	Err io.Writer
	// TTY is where approval questions are read from; nil means there is
	// no terminal and every question is answered no.
	TTY io.Reader

	// Interactive says TTY is a terminal a person answers on; when false
	// (input piped in), approval questions are answered no.
	Interactive bool
	// Styled says Out shows ANSI styles (a terminal, NO_COLOR unset):
	// bold text is shown bold there, plain elsewhere.
	Styled bool

	mu      sync.Mutex
	midLine bool // Out's last byte was not a newline
	once    sync.Once
	lines   chan string // lines of TTY, read by one goroutine
}

// Open returns a Terminal on the process's stdout and stderr, reading
// answers from stdin when it is a terminal.
func Open() *Terminal {
	return &Terminal{Out: os.Stdout, Err: os.Stderr, TTY: os.Stdin, Interactive: IsTerminal(os.Stdin),
		Styled: IsTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}
}

// IsTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one too, and nobody answers there).
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Answer writes a piece of the answer as it arrives.
func (t *Terminal) Answer(text string) {
	if text == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	io.WriteString(t.Out, text)
	t.midLine = !strings.HasSuffix(text, "\n")
}

// Activity writes one status line to stderr. Mid-answer it starts on a
// line of its own there, so stdout carries exactly the answer's text.
func (t *Terminal) Activity(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	prefix := ""
	if t.midLine {
		prefix = "\n"
	}
	fmt.Fprintf(t.Err, "%s· %s\n", prefix, line)
}

// EndAnswer finishes the answer's last line.
func (t *Terminal) EndAnswer() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.breakLine()
}

func (t *Terminal) breakLine() {
	if t.midLine {
		io.WriteString(t.Out, "\n")
		t.midLine = false
	}
}

// Confirm shows text and asks question y/N. Only "y" or "yes" is yes; an
// empty answer, anything else, end of input or a cancelled ctx is no.
// Without an interactive terminal the answer is no, with ErrNoTerminal.
func (t *Terminal) Confirm(ctx context.Context, text, question string) (bool, error) {
	t.mu.Lock()
	fmt.Fprintf(t.Err, "\n%s\n", text)
	if !t.Interactive || t.TTY == nil {
		fmt.Fprintf(t.Err, "%s\n", ErrNoTerminal)
		t.mu.Unlock()
		return false, ErrNoTerminal
	}
	fmt.Fprintf(t.Err, "%s [y/N] ", question)
	t.mu.Unlock()
	line, err := t.next(ctx)
	if errors.Is(err, io.EOF) {
		fmt.Fprintln(t.Err, "(end of input: no)")
		return false, nil
	}
	if err != nil {
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

// ReadLine reads one line of input for `opsbot chat`; io.EOF ends the
// chat.
func (t *Terminal) ReadLine(ctx context.Context, prompt string) (string, error) {
	t.mu.Lock()
	fmt.Fprint(t.Err, prompt)
	t.mu.Unlock()
	return t.next(ctx)
}

// next returns the next line of TTY. One goroutine reads TTY for the
// Terminal's whole life, so a question abandoned by a cancel never steals
// the next line from another reader.
func (t *Terminal) next(ctx context.Context) (string, error) {
	t.once.Do(func() {
		t.lines = make(chan string)
		go func() {
			r := bufio.NewReader(t.TTY)
			for {
				line, err := r.ReadString('\n')
				if line != "" {
					t.lines <- strings.TrimRight(line, "\r\n")
				}
				if err != nil {
					close(t.lines)
					return
				}
			}
		}()
	})
	select {
	case line, ok := <-t.lines:
		if !ok {
			return "", io.EOF
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
