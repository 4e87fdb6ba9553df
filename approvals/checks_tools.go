package approvals

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

// gitReads are the git subcommands that only read the repository.
var gitReads = []string{"status", "log", "show", "diff", "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list",
	"ls-files", "ls-tree", "ls-remote", "cat-file", "grep", "show-ref", "for-each-ref", "count-objects", "name-rev",
	"merge-base", "whatchanged", "cherry", "range-diff", "diff-tree", "diff-files", "diff-index", "check-ignore",
	"check-attr", "verify-commit", "verify-tag", "var", "version", "branch", "tag", "config", "remote", "stash",
	"reflog", "worktree", "submodule"}

var gitSpec = optSpec{shortArg: "CcnSUL", longArg: []string{"git-dir", "work-tree", "namespace", "config-env", "format", "pretty", "since", "until", "after", "before", "author", "committer", "grep", "contains", "no-contains", "merged", "no-merged", "sort", "points-at", "output", "max-count", "skip", "date", "abbrev", "type", "default", "file", "get", "get-all", "get-regexp", "get-urlmatch", "color", "column"}}

// checkGit allows the subcommands that read; in them --output writes a
// file and -O runs a pager command; -c sets config that can run programs.
func checkGit(args []arg) (Action, string) {
	p, path, unknown := subcommand(gitSpec, args)
	if unknown != "" {
		return Approve, unknown
	}
	if o := p.find("c", "config-env", "exec-path", "output", "O", "open-files-in-pager", "ext-diff", "upload-pack", "receive-pack", "exec"); o != nil && !(o.name == "exec-path" && o.value == "") {
		return Approve, fmt.Sprintf("git %s can write a file or run a program", o)
	}
	sub := at(path, 0)
	if sub == "" {
		return Allow, ""
	}
	if !slices.Contains(gitReads, sub) {
		return Approve, "git " + sub + " changes the repository or talks to a remote"
	}
	if why := gitListOnly(p, sub, path[1:]); why != "" {
		return Approve, why
	}
	return Allow, "git " + sub + " only reads"
}

// gitListOnly checks the subcommands that read in one form and write in
// another.
func gitListOnly(p parsed, sub string, ops []string) string {
	switch sub {
	case "branch", "tag":
		refused := map[string][]string{
			"branch": {"d", "D", "m", "M", "c", "C", "f", "u", "t", "delete", "move", "copy", "force", "set-upstream-to", "unset-upstream", "edit-description", "track", "create-reflog"},
			"tag":    {"d", "a", "s", "u", "f", "m", "F", "delete", "annotate", "sign", "local-user", "force", "message", "file", "create-reflog"},
		}[sub]
		if o := p.find(refused...); o != nil {
			return fmt.Sprintf("git %s %s changes refs", sub, o)
		}
		if len(ops) > 0 && !p.has("l", "list", "contains", "merged", "no-merged", "points-at") {
			return "git " + sub + " NAME creates a " + sub
		}
	case "config":
		if p.has("e", "edit", "unset", "unset-all", "add", "replace-all", "rename-section", "remove-section") {
			return "git config with these options writes the config"
		}
		if len(ops) > 1 && !p.has("get", "get-all", "get-regexp", "get-urlmatch", "l", "list") && at(ops, 0) != "get" && at(ops, 0) != "list" {
			return "git config NAME VALUE writes the config"
		}
	case "remote", "stash", "worktree", "submodule", "reflog":
		allowed := map[string][]string{"remote": {"show", "get-url"}, "stash": {"list", "show"}, "worktree": {"list"}, "submodule": {"status", "summary"}, "reflog": {"show"}}[sub]
		if len(ops) > 0 && !slices.Contains(allowed, ops[0]) && !(sub == "reflog" && !slices.Contains([]string{"expire", "delete", "drop"}, ops[0])) {
			return "git " + sub + " " + ops[0] + " changes the repository"
		}
	}
	return ""
}

// kubectlReads are the kubectl verbs that only read the cluster.
var kubectlReads = []string{"get", "describe", "logs", "top", "explain", "version", "api-resources", "api-versions", "cluster-info", "events", "auth", "config", "rollout", "wait"}

var kubectlSpec = optSpec{shortArg: "nlocsLfv", longArg: []string{"namespace", "selector", "output", "container", "context", "cluster", "user", "server", "token", "kubeconfig", "as", "as-group", "as-uid", "field-selector", "sort-by", "label-columns", "template", "tail", "since", "since-time", "filename", "request-timeout", "chunk-size", "certificate-authority", "client-certificate", "client-key", "tls-server-name", "password", "username", "cache-dir", "profile", "profile-output", "max-log-requests", "pod-running-timeout", "limit-bytes", "subresource", "raw", "for", "timeout", "types", "resource-version", "revision"}}

// kubectlCredentials point kubectl at another cluster or identity.
var kubectlCredentials = []string{"s", "server", "token", "kubeconfig", "as", "as-group", "as-uid", "username", "password", "client-certificate", "client-key", "certificate-authority", "insecure-skip-tls-verify", "tls-server-name", "profile-output", "cache-dir"}

// checkKubectl allows the verbs that read, with the cluster and identity
// from the host's own configuration.
func checkKubectl(args []arg) (Action, string) {
	p, path, unknown := subcommand(kubectlSpec, args)
	if unknown != "" {
		return Approve, unknown
	}
	if o := p.find(kubectlCredentials...); o != nil {
		return Approve, fmt.Sprintf("kubectl %s overrides the cluster or the identity", o)
	}
	verb := at(path, 0)
	if verb == "" || !slices.Contains(kubectlReads, verb) {
		return Approve, fmt.Sprintf("kubectl %s changes the cluster or runs something in it", orText(verb, "without a verb"))
	}
	sub := at(path, 1)
	switch {
	case verb == "auth" && sub != "can-i" && sub != "whoami":
		return Approve, "kubectl auth " + sub + " changes RBAC"
	case verb == "config" && !slices.Contains([]string{"view", "get-contexts", "current-context", "get-clusters", "get-users"}, sub):
		return Approve, "kubectl config " + sub + " changes the kubeconfig"
	case verb == "config" && p.has("raw", "flatten"):
		return Approve, "kubectl config view --raw shows credentials"
	case verb == "rollout" && sub != "status" && sub != "history":
		return Approve, "kubectl rollout " + sub + " changes a workload"
	case verb == "cluster-info" && sub == "dump":
		return Approve, "kubectl cluster-info dump writes files"
	case verb == "get" && (showsSecrets(p, path[1:]) || strings.Contains(valueOf(p, "raw"), "secrets")):
		return Approve, "kubectl get secret with -o or --raw shows secret values"
	}
	return Allow, "kubectl " + verb + " only reads"
}

func showsSecrets(p parsed, ops []string) bool {
	o := p.find("o", "output")
	if o == nil || o.value == "wide" || o.value == "name" {
		return false
	}
	for _, op := range ops {
		for _, part := range strings.Split(op, ",") {
			kind, _, _ := strings.Cut(part, "/")
			if kind == "secret" || kind == "secrets" || strings.HasPrefix(kind, "secret.") {
				return true
			}
		}
	}
	return false
}

// checkHelm allows the verbs that read releases and charts.
func checkHelm(args []arg) (Action, string) {
	spec := optSpec{shortArg: "nor", longArg: []string{"namespace", "output", "kube-context", "kubeconfig", "kube-token", "kube-apiserver", "kube-as-user", "kube-as-group", "kube-ca-file", "revision", "max", "filter", "selector", "repository-config", "registry-config"}}
	p, path, unknown := subcommand(spec, args)
	if unknown != "" {
		return Approve, unknown
	}
	if o := p.find("kubeconfig", "kube-token", "kube-apiserver", "kube-as-user", "kube-as-group", "kube-ca-file"); o != nil {
		return Approve, fmt.Sprintf("helm %s overrides the cluster or the identity", o)
	}
	verb := at(path, 0)
	if slices.Contains([]string{"list", "ls", "status", "history", "hist", "get", "show", "inspect", "search", "version", "env"}, verb) ||
		(verb == "repo" && at(path, 1) == "list") {
		return Allow, "helm " + verb + " only reads"
	}
	return Approve, "helm " + orText(verb, "without a verb") + " changes releases or repositories"
}

// dockerReads maps docker's read-only verbs; a management command maps to
// its read-only subcommands.
var dockerReads = map[string][]string{
	"ps": nil, "logs": nil, "inspect": nil, "images": nil, "stats": nil, "top": nil, "version": nil, "info": nil,
	"port": nil, "diff": nil, "history": nil, "events": nil,
	"container": {"ls", "ps", "list", "inspect", "logs", "top", "port", "diff", "stats"},
	"image":     {"ls", "list", "inspect", "history"}, "network": {"ls", "list", "inspect"}, "volume": {"ls", "list", "inspect"},
	"system": {"df", "info", "events"}, "node": {"ls", "inspect", "ps"}, "service": {"ls", "ps", "inspect", "logs"},
	"stack": {"ls", "ps", "services"}, "context": {"ls", "show", "inspect"},
	"compose": {"ps", "logs", "config", "images", "top", "version", "ls", "events"},
}

var dockerSpec = optSpec{shortArg: "HclfnpL", longArg: []string{"host", "context", "log-level", "config", "tlscacert", "tlscert", "tlskey", "format", "filter", "tail", "since", "until", "file", "project-name", "env-file", "profile", "project-directory", "last", "type"}}

// checkDocker allows the verbs that read containers, images and the
// daemon; -H points at another daemon.
func checkDocker(args []arg) (Action, string) {
	p, path, unknown := subcommand(dockerSpec, args)
	if unknown != "" {
		return Approve, unknown
	}
	if o := p.find("H", "host"); o != nil {
		return Approve, fmt.Sprintf("docker %s talks to another daemon", o)
	}
	verb := at(path, 0)
	subs, ok := dockerReads[verb]
	switch {
	case verb == "" && len(p.opts) > 0:
		return Allow, "prints its version or help"
	case !ok:
		return Approve, "docker " + orText(verb, "without a verb") + " changes containers, images or the daemon"
	case subs != nil && !slices.Contains(subs, at(path, 1)):
		return Approve, fmt.Sprintf("docker %s %s is not read-only", verb, at(path, 1))
	}
	return Allow, "docker " + verb + " only reads"
}

func valueOf(p parsed, name string) string {
	if o := p.find(name); o != nil {
		return o.value
	}
	return ""
}
