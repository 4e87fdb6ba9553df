package policy

import "strings"

// pythonIsolated returns args without a leading -I (or -P, -s, -E in
// one word with it; -Im json.tool is -I -m json.tool), which isolates
// python from the working directory, the user's site directory and
// PYTHON* variables, and whether there was one.
func pythonIsolated(args []arg) ([]arg, bool) {
	if len(args) == 0 || !args[0].static() {
		return args, false
	}
	switch v := args[0].val; {
	case v == "-Im":
		return append([]arg{{src: "-m", val: "-m"}}, args[1:]...), true
	case len(v) > 1 && v[0] == '-' && strings.Contains(v, "I") && strings.Trim(v[1:], "IPsE") == "":
		return args[1:], true
	}
	return args, false
}

// jsonTool allows python's json.tool when python cannot import a module
// from the working directory: with -I, which every python 3 since 3.4
// honours (older ones and python 2 refuse the option and run nothing);
// UnattendedEnv's PYTHONSAFEPATH does the same from 3.11 only, and the
// policy does not know which python a host has. Its file is judged as
// any file read.
func (w *walker) jsonTool(c *Command, args []arg) {
	if _, isolated := pythonIsolated(args); !isolated {
		c.add(Approve, "python -m json.tool imports modules from the working directory on python before 3.11 (./json.py): add -I to run it without approval")
		return
	}
	c.add(Allow, "python -I -m json.tool only formats JSON")
	w.secretRead(c, args)
}
