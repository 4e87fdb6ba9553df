package policy

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRenderCommandMakesHiddenCharactersVisible(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		hidden   int
	}{
		{"ls\u200b -la", "ls⟨U+200B⟩ -la", 1},
		{"rm -rf /tmp/build \u202e/ --", "rm -rf /tmp/build ⟨U+202E⟩/ --", 1},
		{"\u202a\u202b\u202c\u202d\u202e", "⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩⟨U+202E⟩", 5},
		{"echo \u2066a\u2067b\u2068c\u2069", "echo ⟨U+2066⟩a⟨U+2067⟩b⟨U+2068⟩c⟨U+2069⟩", 4},
		{"ls\x1b[2K\rrm -rf /", "ls⟨ESC⟩[2K⟨CR⟩rm -rf /", 2},
		{"a\x00b\x7fc\u0085d", "a⟨NUL⟩b⟨DEL⟩c⟨U+0085⟩d", 3},
		{"r\u00adm \ufeffx\u00a0y\u2060z\u200d", "r⟨U+00AD⟩m ⟨U+FEFF⟩x⟨U+00A0⟩y⟨U+2060⟩z⟨U+200D⟩", 5},
		{"bad \xff byte", "bad ⟨0xFF⟩ byte", 1},
		{"echo ⟨U+200B⟩ ↪", "echo ⟨U+27E8⟩U+200B⟨U+27E9⟩ ⟨U+21AA⟩", 0},
		{"cat <<EOF\n\tindented\nEOF", "cat <<EOF\n\tindented\nEOF", 0},
		{"grep 'café' ü.txt", "grep 'café' ü.txt", 0},
	}
	for _, tt := range tests {
		d := RenderCommand(tt.in, DisplayOptions{})
		if d.Text != tt.want || len(d.Hidden) != tt.hidden {
			t.Errorf("RenderCommand(%q) = %q with %d hidden %v, want %q with %d", tt.in, d.Text, len(d.Hidden), d.Hidden, tt.want, tt.hidden)
		}
		if d.Long || d.Preview != d.Text {
			t.Errorf("RenderCommand(%q): a short command is shown whole", tt.in)
		}
	}
	if d := RenderCommand("ls\u200b", DisplayOptions{}); !strings.Contains(d.Hidden[0], "ZERO WIDTH SPACE at character 3") {
		t.Errorf("hidden description %q", d.Hidden[0])
	}
}

// TestRenderCommandWraps: lines are wrapped at the width without ever
// splitting a mark, and unwrapping gives the whole command back.
func TestRenderCommandWraps(t *testing.T) {
	t.Parallel()
	cmd := strings.Repeat("kubectl get pods -n production -o wide \u200b| grep -v Running; ", 20)
	d := RenderCommand(cmd, DisplayOptions{Width: 50})
	for _, line := range strings.Split(d.Text, "\n") {
		if n := utf8.RuneCountInString(line); n > 50+len("⟨U+200B⟩") {
			t.Errorf("line of %d characters: %q", n, line)
		}
		if strings.Count(line, "⟨") != strings.Count(line, "⟩") {
			t.Errorf("a mark is split across lines: %q", line)
		}
	}
	if got := unrender(t, d.Text); got != cmd {
		t.Errorf("unwrapped text differs from the command:\n%q\n%q", got, cmd)
	}
}

// TestRenderCommandLong: past the limit the preview says how much is in
// the attachment, and Text still holds everything.
func TestRenderCommandLong(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "echo line %d\u200b\n", i)
	}
	cmd := b.String()
	d := RenderCommand(cmd, DisplayOptions{Limit: 3000, Width: 80})
	if !d.Long {
		t.Fatal("a 6,000-character command is not flagged for attachment")
	}
	if n := utf8.RuneCountInString(d.Preview); n > 3000 {
		t.Errorf("preview has %d characters, limit 3000", n)
	}
	m := regexp.MustCompile(`\n… (\d+) more characters \(of (\d+)\) are not shown here: the whole command is attached$`).FindStringSubmatch(d.Preview)
	if m == nil {
		t.Fatalf("the preview does not say it was cut:\n…%s", d.Preview[len(d.Preview)-200:])
	}
	more, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	shown := utf8.RuneCountInString(strings.TrimSuffix(d.Preview, m[0]))
	if total != utf8.RuneCountInString(d.Text) || shown+more != total {
		t.Errorf("preview counts: shown %d + more %d != total %d (text %d)", shown, more, total, utf8.RuneCountInString(d.Text))
	}
	if !strings.HasPrefix(d.Text, strings.TrimSuffix(d.Preview, m[0])) {
		t.Error("the preview is not the beginning of the text")
	}
	if unrender(t, d.Text) != cmd {
		t.Error("Text does not hold the whole command")
	}
}

// TestRenderCommandRoundTrip: for random commands full of hidden
// characters, the display holds none of them and decodes back exactly.
func TestRenderCommandRoundTrip(t *testing.T) {
	t.Parallel()
	alphabet := []rune("abc -|;'\"$\\⟨⟩↪é\t\n\u200b\u200e\u202e\u2066\u2069\x1b\r\x00\u00a0\ufeff\U000E0041\u3164")
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var b strings.Builder
		for range r.IntN(200) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		cmd := b.String()
		d := RenderCommand(cmd, DisplayOptions{Width: 1 + r.IntN(40)})
		for _, c := range d.Text {
			if _, hidden := hiddenRune(c); hidden && c != '\n' && c != '\t' {
				t.Fatalf("hidden %U left in %q", c, d.Text)
			}
		}
		if got := unrender(t, d.Text); got != cmd {
			t.Fatalf("round trip:\n in  %q\n out %q\n via %q", cmd, got, d.Text)
		}
	}
}

// unrender undoes RenderCommand: it removes the wraps and decodes the marks.
func unrender(t *testing.T, text string) string {
	t.Helper()
	text = strings.ReplaceAll(text, "\n↪ ", "")
	names := map[string]rune{}
	for r, n := range controlNames {
		names[n] = r
	}
	return regexp.MustCompile(`⟨([^⟨⟩]*)⟩`).ReplaceAllStringFunc(text, func(m string) string {
		name := m[len("⟨") : len(m)-len("⟩")]
		if r, ok := names[name]; ok {
			return string(r)
		}
		if hex, ok := strings.CutPrefix(name, "U+"); ok {
			n, err := strconv.ParseUint(hex, 16, 32)
			if err != nil {
				t.Fatalf("bad mark %q", m)
			}
			return string(rune(n))
		}
		if hex, ok := strings.CutPrefix(name, "0x"); ok {
			n, _ := strconv.ParseUint(hex, 16, 8)
			return string([]byte{byte(n)})
		}
		t.Fatalf("unknown mark %q", m)
		return ""
	})
}
