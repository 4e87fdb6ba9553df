package approvals

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
