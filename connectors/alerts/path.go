package alerts

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is a JSON path of a generic source: $ then .key and [index] steps
// ($.alert.labels, $.events[0].id).
type Path []step

// step is one key, or one index when key is "".
type step struct {
	key   string
	index int
}

// ParsePath reads a path like $.a.b[0].c.
func ParsePath(s string) (Path, error) {
	rest, ok := strings.CutPrefix(s, "$")
	if !ok {
		return nil, fmt.Errorf("%q is not a JSON path: start it with $, e.g. $.title", s)
	}
	var p Path
	for rest != "" {
		var st step
		var err error
		st, rest, err = nextStep(rest)
		if err != nil {
			return nil, fmt.Errorf("%q is not a JSON path: %w", s, err)
		}
		p = append(p, st)
	}
	return p, nil
}

func nextStep(rest string) (step, string, error) {
	switch rest[0] {
	case '.':
		rest = rest[1:]
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return step{}, "", errors.New("a '.' without a key after it")
		}
		return step{key: rest[:end]}, rest[end:], nil
	case '[':
		end := strings.IndexByte(rest, ']')
		n, err := strconv.Atoi(rest[1:max(end, 1)])
		if end < 0 || err != nil || n < 0 {
			return step{}, "", errors.New("a '[' needs a list index and ']', e.g. [0]")
		}
		return step{index: n}, rest[end+1:], nil
	}
	return step{}, "", fmt.Errorf("expected .key or [index] at %q", rest)
}

// Lookup follows the path in a decoded JSON value (nil when a step is
// missing).
func (p Path) Lookup(v any) any {
	for _, st := range p {
		switch x := v.(type) {
		case map[string]any:
			if st.key == "" {
				return nil
			}
			v = x[st.key]
		case []any:
			if st.key != "" || st.index >= len(x) {
				return nil
			}
			v = x[st.index]
		default:
			return nil
		}
	}
	return v
}
