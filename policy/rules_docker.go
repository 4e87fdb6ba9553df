package policy

import (
	"fmt"
	"slices"
	"strings"
)

// dockerGlobal are docker's own flags before the verb, in pflag's family.
var dockerGlobal = optSpec{family: pflag, short: "c:DH:l:v", long: []string{"config=", "context=", "debug", "host=", "log-level=", "tls",
	"tlscacert=", "tlscert=", "tlskey=", "tlsverify", "version", "help"}, stopAtOperand: true}

// dockerReads maps docker's read-only verbs, and the read-only verbs of
// its management commands, to their flags (docker VERB --help).
var dockerReads = map[string]optSpec{
	"ps":      {short: "af:n:lqs", long: []string{"all", "filter=", "format=", "last=", "latest", "no-trunc", "quiet", "size"}},
	"logs":    {short: "fn:t", long: []string{"details", "follow", "since=", "tail=", "timestamps", "until="}},
	"inspect": {short: "f:s", long: []string{"format=", "size", "type="}},
	"images":  {short: "af:q", long: []string{"all", "digests", "filter=", "format=", "no-trunc", "quiet", "tree"}},
	"stats":   {short: "a", long: []string{"all", "format=", "no-stream", "no-trunc"}},
	"top":     {},
	"version": {short: "f:", long: []string{"format="}},
	"info":    {short: "f:", long: []string{"format="}},
	"port":    {}, "diff": {},
	"history":  {short: "Hq", long: []string{"human", "no-trunc", "quiet", "format="}},
	"events":   {short: "f:", long: []string{"filter=", "format=", "since=", "until="}},
	"ls":       {short: "af:n:lqs", long: []string{"all", "filter=", "format=", "last=", "latest", "no-trunc", "quiet", "size", "digests", "tree"}},
	"df":       {short: "v", long: []string{"verbose", "format="}},
	"services": {short: "f:q", long: []string{"filter=", "format=", "quiet"}},
	"show":     {},
}

// dockerManaged maps a management command to its read-only verbs.
var dockerManaged = map[string][]string{
	"container": {"ls", "ps", "list", "inspect", "logs", "top", "port", "diff", "stats"},
	"image":     {"ls", "list", "inspect", "history"}, "network": {"ls", "list", "inspect"}, "volume": {"ls", "list", "inspect"},
	"system": {"df", "info", "events"}, "node": {"ls", "inspect", "ps"}, "service": {"ls", "ps", "inspect", "logs"},
	"stack": {"ls", "ps", "services"}, "context": {"ls", "show", "inspect"},
}

// checkDocker allows the verbs that read containers, images and the
// daemon; -H points at another daemon.
func checkDocker(args []arg) (Action, string) {
	g := dockerGlobal.parse(args)
	if g.unknown != "" {
		return Approve, g.unknown
	}
	if o := g.find("H", "host", "c", "context", "config", "tlscacert", "tlscert", "tlskey"); o != nil {
		return Approve, fmt.Sprintf("docker %s talks to another daemon or reads another configuration", o)
	}
	if len(g.rest) == 0 {
		return Allow, "prints its version or help"
	}
	words := g.rest
	for _, a := range words[:min(2, len(words))] {
		if !a.static() {
			return Approve, fmt.Sprintf("the docker verb %s is computed at run time", a.src)
		}
	}
	verb := words[0].val
	if verb == "compose" {
		return checkCompose(words[1:])
	}
	mgmt := verb
	if subs, ok := dockerManaged[verb]; ok {
		if len(words) < 2 || !slices.Contains(subs, words[1].val) {
			return Approve, fmt.Sprintf("docker %s %s is not read-only", verb, at(shows(words), 1))
		}
		verb, words = dockerAlias(words[1].val), words[1:]
	}
	if verb == "inspect" && !slices.Contains([]string{"network", "volume", "context", "node"}, mgmt) {
		return Approve, "docker inspect shows the environment, which holds credentials"
	}
	spec, ok := dockerReads[verb]
	if !ok {
		return Approve, "docker " + verb + " changes containers, images or the daemon"
	}
	spec.family = pflag
	spec.long = append(slices.Clip(spec.long), "help")
	if verb == "top" {
		spec.stopAtOperand = true // the words after the container are ps options
	}
	if p := spec.parse(words[1:]); p.unknown != "" {
		return Approve, p.unknown
	}
	return Allow, "docker " + verb + " only reads"
}

// dockerAlias maps a management command's verb to the top-level verb
// with the same flags.
func dockerAlias(v string) string {
	switch v {
	case "list":
		return "ls"
	case "history", "ps":
		return map[string]string{"history": "history", "ps": "ps"}[v]
	}
	return v
}

// composeGlobal are docker compose's own flags before its verb.
var composeGlobal = optSpec{family: pflag, short: "f:p:", long: []string{"file=", "project-name=", "profile=", "env-file=",
	"project-directory=", "ansi=", "progress=", "parallel=", "compatibility", "dry-run", "all-resources", "help"}, stopAtOperand: true}

// composeReads are docker compose's read-only verbs and their flags.
var composeReads = map[string]optSpec{
	"ps":     {short: "aq", long: []string{"all", "filter=", "format=", "quiet", "services", "status=", "no-trunc", "orphans"}},
	"logs":   {short: "fn:t", long: []string{"follow", "index=", "no-color", "no-log-prefix", "since=", "tail=", "timestamps", "until="}},
	"config": {short: "q", long: []string{"format=", "hash=", "images", "no-consistency", "no-interpolate", "no-normalize", "no-path-resolution", "profiles", "quiet", "resolve-image-digests", "services", "variables", "volumes", "environment"}},
	"images": {short: "q", long: []string{"format=", "quiet"}},
	"top":    {}, "version": {short: "f:", long: []string{"format=", "short"}},
	"ls":     {short: "aq", long: []string{"all", "filter=", "format=", "quiet"}},
	"events": {long: []string{"json", "since=", "until="}},
}

// checkCompose allows docker compose's read-only verbs; config -o, which
// writes a file, is not in its spec.
func checkCompose(args []arg) (Action, string) {
	g := composeGlobal.parse(args)
	if g.unknown != "" {
		return Approve, g.unknown
	}
	if len(g.rest) == 0 || !g.rest[0].static() {
		return Approve, "docker compose without a verb known now"
	}
	for _, o := range g.findAll("f", "file") {
		if strings.Contains(o.value, "://") || strings.HasPrefix(o.value, "git@") {
			return Approve, fmt.Sprintf("docker compose %s %s fetches the project from the network", o, o.value)
		}
	}
	verb := g.rest[0].val
	if verb == "config" {
		return Approve, "docker compose config shows the environment from .env files, which holds credentials"
	}
	spec, ok := composeReads[verb]
	if !ok {
		return Approve, "docker compose " + verb + " changes containers"
	}
	spec.family = pflag
	spec.long = append(slices.Clip(spec.long), "help")
	if p := spec.parse(g.rest[1:]); p.unknown != "" {
		return Approve, p.unknown
	}
	return Allow, "docker compose " + verb + " only reads"
}
