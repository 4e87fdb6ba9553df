package policy

import (
	"fmt"
	"slices"
	"strings"
)

// subcommand splits a tool's command line into its options and
// operands, the first operands being the subcommand path.
func subcommand(spec optSpec, args []arg) (parsed, []string, string) {
	p := spec.parse(args)
	if p.unknown != "" {
		return p, nil, p.unknown
	}
	var path []string
	for _, o := range p.operands {
		path = append(path, o.val)
	}
	return p, path, ""
}

func at(path []string, i int) string {
	if i < len(path) {
		return path[i]
	}
	return ""
}

// jqValueOpts are jq's options and how many words follow each as values.
var jqValueOpts = map[string]int{"--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "--indent": 1, "-L": 1}

// jqFlags are jq's options that take no value: long, and the letters a
// short word may bundle (jq -nr).
var (
	jqFlags = []string{"--slurp", "--raw-input", "--null-input", "--compact-output", "--tab", "--color-output", "--monochrome-output",
		"--ascii-output", "--unbuffered", "--sort-keys", "--raw-output", "--raw-output0", "--join-output", "--nul-output", "--exit-status",
		"--seq", "--stream", "--stream-errors", "--args", "--jsonargs", "--help", "--version", "--build-configuration"}
	jqShortFlags = "sRrncCMaSjeh0V"
)

// checkJq allows a jq filter given on the line that neither reads the
// environment (env, $ENV) nor loads modules from files (import,
// include, modulemeta); -f reads the filter from a file, which the policy
// cannot see. jq reads its options itself, anywhere on the line, and
// stops at an unknown one.
func checkJq(args []arg) (Action, string) {
	filter, positional := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.static() && a.mayBeOption():
			return Approve, fmt.Sprintf("the jq argument %s is computed at run time", a.show())
		case positional || a.val == "-" || !strings.HasPrefix(a.val, "-"):
			if filter == "" && !positional {
				if !a.static() {
					return Approve, "jq without a filter known now"
				}
				filter = a.val
			}
		case a.val == "--":
			positional = filter != ""
		case jqValueOpts[a.val] > 0:
			i += jqValueOpts[a.val]
		case strings.HasPrefix(a.val, "-L") || slices.Contains(jqFlags, a.val):
		case a.val == "-f" || a.val == "--from-file" || !strings.HasPrefix(a.val, "--") && strings.Contains(a.val, "f"):
			return Approve, "jq -f reads its filter from a file the policy cannot read"
		case !strings.HasPrefix(a.val, "--") && strings.Trim(a.val[1:], jqShortFlags) == "":
		default:
			return Approve, fmt.Sprintf("jq %s is not an option the policy knows", a.val)
		}
	}
	if why := jqFilterUnsafe(filter); why != "" {
		return Approve, why
	}
	return Allow, "the jq filter only reads its input"
}

// jqFilterUnsafe returns why a jq filter reads the environment or files,
// or "". It reads names outside string constants (the code in a
// string's \( ) counts) and comments: env and ENV unless a field (.env)
// or, for env, a variable ($env), and the module statements. A comment ending in a backslash or holding
// a carriage return is refused: jq 1.7.1 goes on with the next line after
// the first, earlier versions do not.
func jqFilterUnsafe(filter string) string {
	code, why := jqCode(filter)
	if why != "" {
		return why
	}
	for i := 0; i < len(code); {
		if !isIdent(code[i]) {
			i++
			continue
		}
		j := i
		for j < len(code) && (isIdent(code[j]) || code[j] >= '0' && code[j] <= '9') {
			j++
		}
		name, field, variable := code[i:j], i > 0 && code[i-1] == '.', i > 0 && code[i-1] == '$'
		switch {
		case !field && (name == "ENV" || name == "env" && !variable):
			return "jq " + name + " reads the environment, which holds credentials"
		case !field && (name == "import" || name == "include" || name == "modulemeta"):
			return "jq " + name + " loads a module from a file the policy cannot read"
		}
		i = j
	}
	return ""
}

// jqCode blanks out a jq filter's string constants and comments, keeping
// the code of string interpolations, \( ).
func jqCode(src string) (string, string) {
	out := []byte(src)
	var open []int // for each string being read, the ( depth its \( opened at
	depth := 0
	for i := 0; i < len(src); i++ {
		inString := len(open) > 0 && open[len(open)-1] == depth
		switch c := src[i]; {
		case inString && c == '\\' && i+1 < len(src) && src[i+1] == '(':
			depth++
			i++
		case inString && c == '\\':
			out[i] = ' '
			if i+1 < len(src) {
				i++
				out[i] = ' '
			}
		case inString && c == '"':
			open = open[:len(open)-1]
		case inString:
			out[i] = ' '
		case c == '"':
			open = append(open, depth)
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '#':
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			comment := src[i : i+end]
			if strings.HasSuffix(comment, "\\") || strings.ContainsRune(comment, '\r') {
				return "", "the jq filter has a comment that jq versions end in different places"
			}
			for k := i; k < i+end; k++ {
				out[k] = ' '
			}
			i += end - 1
		}
	}
	if len(open) > 0 {
		return "", "the jq filter has a string that does not end"
	}
	return string(out), ""
}
