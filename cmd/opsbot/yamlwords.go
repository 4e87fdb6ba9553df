package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The YAML parser's messages name Go types and YAML tags ("cannot
// unmarshal !!int `60` into time.Duration"). A person fixing a config
// file needs the expected form and what was found instead.

var unmarshalMsg = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")

// plainYAML rewrites one parser message in words.
func plainYAML(msg string) string {
	if m := unmarshalMsg.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("expected %s, not %s", expectedForm(m[3]), foundForm(m[1], m[2]))
	}
	if m := duplicateKey.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("this key is also at line %s: a key may appear once in its section; merge the two", m[2])
	}
	for _, p := range syntaxPhrases {
		if strings.Contains(msg, p.yaml) {
			return p.plain
		}
	}
	return "this is not valid YAML here (" + msg + "): check the indentation, and quote a value that holds ': ', ' #' or starts with a special character"
}

var duplicateKey = regexp.MustCompile(`^mapping key "(.*)" already defined at line (\d+)$`)

// expectedForm says in words what a Go type wants.
func expectedForm(goType string) string {
	switch {
	case goType == "time.Duration":
		return "a duration like 60s (a number and its unit: ms, s, m or h)"
	case strings.HasPrefix(goType, "[]"):
		return "a list: [a, b], or one '- ' item per line below the key"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "keys indented below this one"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a single value"
	}
	return "another kind of value"
}

// foundForm names what the file holds instead.
func foundForm(tag, value string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "keys"
	case "null":
		return "an empty value"
	}
	if value == "" {
		return "an empty value"
	}
	if tag == "str" {
		return strconv.Quote(value)
	}
	return value
}

// syntaxPhrases are the parser's syntax errors, in words.
var syntaxPhrases = []struct{ yaml, plain string }{
	{"found character that cannot start any token", "a value starts with a character YAML reserves (@, `, % or a tab): quote the value"},
	{"mapping values are not allowed in this context", "a ': ' where no key may start: quote a value that holds ': ', or fix this line's indentation"},
	{"did not find expected key", "a line here is not indented like the keys around it"},
	{"could not find expected ':'", "a key without ':' after it (or a quoted value that does not end on its line)"},
	{"block sequence entries are not allowed in this context", "a '- ' list item where a value was expected: put the list on the lines below its key"},
	{"did not find expected node content", "a value is missing, or a [ ] or { } list is not closed"},
	{"did not find expected ',' or ']'", "a [ ] list is not closed, or its items are not separated by ','"},
	{"did not find expected ',' or '}'", "a { } mapping is not closed, or its items are not separated by ','"},
	{"found unexpected end of stream", "the file ends inside a quoted value or a [ ] list: close it"},
	{"found unknown escape character", "an unknown \\ escape in a double-quoted value: use single quotes, or write \\\\"},
	{"did not find expected alphabetic or numeric character", "a value starts with a character YAML reserves (& or *): quote the value"},
	{"did not find expected '-' indicator", "a line here is not indented like the '- ' items around it"},
}

// syntaxErrors reports a file the parser could not read. The parser stops
// at its first error, often a line after the cause; the lines are scanned
// for the usual causes (a tab, a line indented unlike any key above it),
// each reported on its own line. When none is found, the parser's error
// is given in words.
func syntaxErrors(path string, data []byte, err error) []error {
	var errs []error
	for _, p := range scanIndentation(string(data)) {
		errs = append(errs, &ConfigError{File: path, Line: p.line, Msg: p.msg})
	}
	if len(errs) > 0 {
		return errs
	}
	return []error{parserError(path, data, err)}
}

// parserOnlyPhrases are the syntax errors yaml.v3 raises in its parser
// rather than its scanner. For these it reports the line 0-based (the line
// above the one where the list or block starts), and no line at all for
// the first one; its scanner errors are 1-based.
var parserOnlyPhrases = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected key",
	"did not find expected '-' indicator", "did not find expected node content",
}

// flowWithReference is a [ ] list holding an unquoted ${NAME}, whose { is
// read as the start of a { } mapping.
var flowWithReference = regexp.MustCompile(`\[[^\]'"]*\$\{`)

// parserError locates the parser's one syntax error on the right line and
// says it in words.
func parserError(path string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	for _, p := range parserOnlyPhrases {
		if strings.Contains(msg, p) {
			line++
			break
		}
	}
	lines := strings.Split(string(data), "\n")
	// An error at the end of the file is shown on its last written line.
	for line > len(lines) || line > 1 && strings.TrimSpace(lines[line-1]) == "" {
		line--
	}
	if line >= 1 && line <= len(lines) && flowWithReference.MatchString(lines[line-1]) {
		return &ConfigError{File: path, Line: line, Msg: "a ${NAME} inside a [ ] list must be quoted, as YAML reads its { as the start of { } keys: " +
			"write ['${NAME}/file'], or put each item on a line of its own below the key as   - ${NAME}/file"}
	}
	return &ConfigError{File: path, Line: line, Msg: plainYAML(msg)}
}

type indentProblem struct {
	line int
	msg  string
}

// indentLevel is an open block of the file: a key, or a list item ("-").
type indentLevel struct {
	indent int
	key    string
}

func (l indentLevel) String() string {
	if l.key == "-" {
		return fmt.Sprintf("the '- ' item above (%s)", spaces(l.indent))
	}
	return fmt.Sprintf("%q above (%s)", l.key+":", spaces(l.indent))
}

func spaces(n int) string {
	if n == 1 {
		return "1 space"
	}
	return fmt.Sprintf("%d spaces", n)
}

// scanIndentation finds lines indented with a tab, and lines indented
// unlike any open key above them. It follows YAML's block structure only
// as far as config files use it, and is consulted only for a file the
// parser refused, so a false alarm cannot reject a valid file.
func scanIndentation(text string) []indentProblem {
	var out []indentProblem
	var open []indentLevel // the enclosing keys and list items, outermost first
	opens := false         // the last line opened a block: a key without a value
	skipDeeper := -1       // inside a | or > block: skip lines deeper than this
	depth := 0             // inside a [ ] or { } spanning lines
	for n, raw := range strings.Split(text, "\n") {
		body := strings.TrimLeft(raw, " ")
		indent := len(raw) - len(body)
		if strings.HasPrefix(body, "\t") {
			out = append(out, indentProblem{n + 1, "a tab character indents this line: YAML indents with spaces only; replace the tab with spaces"})
			continue
		}
		body = stripComment(body)
		if body == "" || body == "---" {
			continue
		}
		if skipDeeper >= 0 && indent > skipDeeper || depth > 0 {
			depth += flowDepth(body)
			continue
		}
		skipDeeper = -1
		if p, ok := placeLine(&open, indent, opens); !ok {
			out = append(out, indentProblem{n + 1, p})
			opens = false
			continue
		}
		key, value := splitKey(body)
		open = append(open, indentLevel{indent, key})
		if key == "-" { // a list item: its keys start two columns in
			if k, v := splitKey(value); k != "" && k != "-" {
				open = append(open, indentLevel{indent + 2, k})
				value = v
			} else if value != "" {
				key = "" // a plain item such as "- web"
			}
		}
		opens = key != "" && value == ""
		if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") {
			skipDeeper, opens = indent, false
		}
		depth = flowDepth(value)
	}
	return out
}

// placeLine closes the blocks a line at indent is not inside and checks it
// starts a new block or continues an open one; otherwise it says why not.
func placeLine(open *[]indentLevel, indent int, opens bool) (string, bool) {
	o := *open
	if len(o) == 0 {
		return "", true
	}
	if top := o[len(o)-1]; opens && indent > top.indent {
		return "", true // the first line of the block the line above opened
	}
	var deeper *indentLevel
	for len(o) > 0 && o[len(o)-1].indent > indent {
		deeper = &o[len(o)-1]
		o = o[:len(o)-1]
	}
	*open = o
	switch {
	case len(o) > 0 && o[len(o)-1].indent == indent:
		*open = o[:len(o)-1] // a sibling: it replaces the level
		return "", true
	case deeper == nil && len(o) > 0:
		return fmt.Sprintf("this line is indented more (%s) than the line above, which already has its value: indent it like %s", spaces(indent), o[len(o)-1]), false
	case len(o) == 0 && indent == 0:
		return "", true
	}
	like := []string{}
	if deeper != nil {
		like = append(like, deeper.String())
	}
	if len(o) > 0 {
		like = append(like, o[len(o)-1].String())
	}
	return fmt.Sprintf("this line is indented by %s, like no key above it: indent it like %s", spaces(indent), strings.Join(like, ", or like ")), false
}

// splitKey splits "key: value", "key:" or "- value" into its key ("-" for
// a list item) and value; the key is "" when the line is neither.
func splitKey(s string) (key, value string) {
	if s == "-" || strings.HasPrefix(s, "- ") {
		return "-", strings.TrimSpace(s[1:])
	}
	if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
		return "", s
	}
	k, v, ok := strings.Cut(s, ":")
	if !ok || (v != "" && v[0] != ' ') {
		return "", s
	}
	return strings.Trim(k, `"' `), strings.TrimSpace(v)
}

// stripComment drops a trailing comment (a '#' after a space, outside
// quotes) and surrounding space.
func stripComment(s string) string {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

// flowDepth is how many [ and { a value leaves open.
func flowDepth(s string) int {
	return strings.Count(s, "[") + strings.Count(s, "{") - strings.Count(s, "]") - strings.Count(s, "}")
}
