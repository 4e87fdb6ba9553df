package redact

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsbot/opsbot/approvals/redact/redacttest"
)

// collect is a Stream's output, chunk by chunk.
type collect struct{ chunks []string }

func (c *collect) emit(s string) error {
	c.chunks = append(c.chunks, s)
	return nil
}

func (c *collect) text() string { return strings.Join(c.chunks, "") }

// streamed redacts chunks through a Stream and returns what it passed on.
func streamed(t testing.TB, r *Redactor, chunks ...string) string {
	t.Helper()
	var c collect
	s := r.NewStream(c.emit)
	for _, ch := range chunks {
		if _, err := s.WriteString(ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return c.text()
}

func TestStreamSecretSplitAcrossChunks(t *testing.T) {
	t.Parallel()
	r := New(redacttest.OwnSecrets...)
	tests := []struct{ name, a, b, want string }{
		{"github token", "token ghp_R8fKqT2vWx9Lm", "N4pZc7Yb1HsJd6Ge3Ua5QiO\n", "token [redacted github-pat]\n"},
		{"aws key", "AKIAQ3ZB", "7XK2LMW4RT5N done\n", "[redacted aws-access-key] done\n"},
		{"own secret", "OPENAI_API_KEY=sk-proj-Vq3Lz8", "Rk1TmW6Xp2Nc9Hb4Jd7Fg0Sa5Ye\n", "OPENAI_API_KEY=[redacted opsbot-secret]\n"},
		{"url password", "postgres://app:Tr0ub", "4dor-Xk9q@db-1:5432/x\n", "postgres://app:[redacted url-password]@db-1:5432/x\n"},
		{"key split in its BEGIN line", "-----BEGIN RSA PRIV", "ATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----\nok\n",
			"[redacted private-key]\nok\n"},
		{"no trailing newline", "secret=abc", "def", "secret=[redacted secret-assignment]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := streamed(t, r, tt.a, tt.b); got != tt.want {
				t.Errorf("streamed %q + %q\n got %q\nwant %q", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// TestStreamChunksApartInTime is the case: the two halves of a
// secret arrive 1.2 s apart, and nothing of it is passed on in between.
func TestStreamChunksApartInTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := New()
		out := make(chan string, 10)
		s := r.NewStream(func(p string) error { out <- p; return nil })
		chunks := make(chan string)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for c := range chunks {
				_, _ = s.WriteString(c)
			}
			_ = s.Flush()
		}()
		chunks <- "first line\nxoxb-2048561937-40968"
		synctest.Wait()
		if got := <-out; got != "first line\n" {
			t.Fatalf("first emit = %q; want the complete line only", got)
		}
		time.Sleep(1200 * time.Millisecond) // fake time inside the bubble
		chunks <- "13725-Zq8Rk2VtWm9XpLc4NbHy7JdF rest\n"
		close(chunks)
		<-done
		if got := <-out; got != "[redacted slack-bot-token] rest\n" {
			t.Errorf("second emit = %q", got)
		}
	})
}

func TestStreamPrivateKeyLongerThanBound(t *testing.T) {
	t.Parallel()
	line := "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
	body := strings.Repeat(line, 3*MaxLine/len(line))
	in := "$ cat key.pem\n-----BEGIN PRIVATE KEY-----\n" + body + "-----END PRIVATE KEY-----\n$ \n"
	var c collect
	s := New().NewStream(c.emit)
	for i := 0; i < len(in); i += 100 {
		_, _ = s.WriteString(in[i:min(len(in), i+100)])
		if s.Held() > MaxLine {
			t.Fatalf("held back %d bytes; bound is %d", s.Held(), MaxLine)
		}
	}
	_ = s.Flush()
	if got, want := c.text(), "$ cat key.pem\n[redacted private-key]\n$ \n"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}

func TestStreamHoldsBackAtMostMaxLine(t *testing.T) {
	t.Parallel()
	var c collect
	s := New().NewStream(c.emit)
	_, _ = s.WriteString(strings.Repeat("x", 3*MaxLine+7))
	if s.Held() > MaxLine {
		t.Errorf("held back %d bytes of one long line; bound is %d", s.Held(), MaxLine)
	}
	if len(c.text()) < 2*MaxLine {
		t.Errorf("passed on %d bytes of a %d-byte line before its end", len(c.text()), 3*MaxLine+7)
	}
}

func TestStreamSeeds(t *testing.T) {
	t.Parallel()
	r := New(redacttest.OwnSecrets...)
	whole := r.String(redacttest.Output())
	got := streamed(t, r, redacttest.Chunks()...)
	redacttest.AssertNoSecret(t, redacttest.Secrets(), whole, got)
	if got != whole {
		t.Errorf("streamed output differs from whole-text output:\n%s\n---\n%s", got, whole)
	}
	if !strings.Contains(got, "[redacted private-key]\ndone\n") {
		t.Errorf("output lost what follows the key: %q", got)
	}
}

func TestStreamEmitError(t *testing.T) {
	t.Parallel()
	boom := errors.New("gone")
	s := New().NewStream(func(string) error { return boom })
	if _, err := s.WriteString("a line\n"); !errors.Is(err, boom) {
		t.Errorf("Write error = %v; want %v", err, boom)
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := New().NewWriter(&b)
	_, _ = w.Write([]byte("password=hunt"))
	_, _ = w.Write([]byte("er22\n"))
	_ = w.Flush()
	if got := b.String(); got != "password=[redacted secret-assignment]\n" {
		t.Errorf("got %q", got)
	}
}
