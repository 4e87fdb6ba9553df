package nsverify

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Line is one corpus command.
type Line struct {
	Command string
	// Live marks a red-team line written with a leading "!": it really
	// changes state in the sandbox.
	Live bool
	// Where is "file:line".
	Where string
}

// ReadCorpus reads a corpus file in the format of policy/testdata: one
// command per line; blank lines and "#" comments skipped; "q:" starts a
// Go-quoted string; a leading "!" marks a live exploit.
func ReadCorpus(name string) ([]Line, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Line
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := Line{Where: fmt.Sprintf("%s:%d", name, n)}
		text, l.Live = strings.CutPrefix(text, "!")
		if q, ok := strings.CutPrefix(text, "q:"); ok {
			if text, err = strconv.Unquote(q); err != nil {
				return nil, fmt.Errorf("%s: %w", l.Where, err)
			}
		}
		l.Command = text
		out = append(out, l)
	}
	return out, sc.Err()
}
