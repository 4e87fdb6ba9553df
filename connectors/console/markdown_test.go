package console

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

func TestMarkdownForTheTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"**Approval needed** — requested by @bob", "Approval needed — requested by @bob"},
		{"Run:\n```sh\ndf -h\nfree -m\n```\nThen ask.", "Run:\n    df -h\n    free -m\nThen ask."},
		{"• `local`\n• `web-1`", "• local\n• web-1"},
		{"_(no output)_", "(no output)"},
		{"keep snake_case_names and 2*3*4", "keep snake_case_names and 2*3*4"},
		{"an *emphasis* and __strong__", "an emphasis and strong"},
		{"`**not bold**` in code", "**not bold** in code"},
		{"## Disk usage", "Disk usage"},
		{"see [the docs](https://example.com/x)", "see the docs (https://example.com/x)"},
		{`a \*literal\* star`, "a *literal* star"},
		{"one ` alone", "one ` alone"},
		{"- item\n* item", "- item\n* item"},
	} {
		if got := renderMarkdown(tc.in, false); got != tc.want {
			t.Errorf("renderMarkdown(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := renderMarkdown("**Approved** now", true); got != "\x1b[1mApproved\x1b[0m now" {
		t.Errorf("styled: %q", got)
	}
}

// Every message the bot's golden files hold reads as text on a terminal:
// no Markdown marks left, in the text, the context line or the fields.
func TestMarkdownOfTheBotsMessages(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../bot/testdata/*.golden.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden messages: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m connectors.Message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		shown := []string{renderMarkdown(m.Text, false), renderLine(m.Context, false)}
		for _, fl := range m.Fields {
			shown = append(shown, renderMarkdown(fl.Value, false))
		}
		for _, s := range shown {
			for _, mark := range []string{"**", "```", "`", "_("} {
				if strings.Contains(s, mark) {
					t.Errorf("%s: %q left in %q", filepath.Base(f), mark, s)
				}
			}
		}
	}
}

// A streamed answer printed piece by piece is the whole answer converted:
// nothing printed early has to be taken back.
func TestMarkdownStreamedInPieces(t *testing.T) {
	t.Parallel()
	text := "Let me **check** the `df -h` output:\n```\nFilesystem  Size\n/dev/sda1   20G\n```\n_(no output)_ from `free`; see [docs](https://x.example/d).\n## Done"
	want := renderMarkdown(text, false)
	for size := 1; size <= 7; size++ {
		s := mdStream{}
		var got strings.Builder
		for i := 0; i < len(text); i += size {
			got.WriteString(s.write(text[i:min(i+size, len(text))], false))
		}
		got.WriteString(s.write("", true))
		if got.String() != want {
			t.Errorf("in pieces of %d:\n got %q\nwant %q", size, got.String(), want)
		}
	}
}
