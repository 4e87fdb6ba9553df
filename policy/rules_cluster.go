package policy

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// kubectlGlobal are kubectl's global flags (kubectl options), in pflag's
// family; a value-taking one is followed by "=".
var kubectlGlobal = []string{"as=", "as-group=", "as-uid=", "cache-dir=", "certificate-authority=", "client-certificate=", "client-key=",
	"cluster=", "context=", "disable-compression", "insecure-skip-tls-verify", "kubeconfig=", "log-flush-frequency=",
	"match-server-version", "namespace=", "password=", "profile=", "profile-output=", "request-timeout=", "server=",
	"tls-server-name=", "token=", "user=", "username=", "v=", "vmodule=", "warnings-as-errors", "help"}

// kubectlVerbFlags are the flags of each read-only verb (kubectl VERB
// --help); "other" serves the verbs whose flags do not clash.
var kubectlVerbFlags = map[string]optSpec{
	"get": {short: "Af:k:L:o:Rl:w", long: []string{"all-namespaces", "allow-missing-template-keys", "chunk-size=", "field-selector=", "filename=",
		"ignore-not-found", "kustomize=", "label-columns=", "no-headers", "output=", "output-watch-events", "raw=", "recursive", "selector=",
		"server-print", "show-kind", "show-labels", "show-managed-fields", "sort-by=", "subresource=", "template=", "watch", "watch-only"}},
	"logs": {short: "c:fpl:", long: []string{"all-containers", "all-pods", "container=", "follow", "ignore-errors", "insecure-skip-tls-verify-backend",
		"limit-bytes=", "max-log-requests=", "pod-running-timeout=", "prefix", "previous", "selector=", "since=", "since-time=", "tail=", "timestamps"}},
	"other": {short: "Af:k:Rl:o:qw", long: []string{"all-namespaces", "chunk-size=", "filename=", "kustomize=", "recursive", "selector=", "show-events",
		"containers", "no-headers", "sort-by=", "use-protocol-buffers", "field-selector=", "sum", "show-capacity", "api-version=", "output=",
		"client", "api-group=", "cached", "namespaced", "verbs=", "categories=", "for=", "template=", "types=", "watch",
		"allow-missing-template-keys", "show-managed-fields", "list", "quiet", "subresource=", "flatten", "merge", "minify", "raw",
		"revision=", "timeout=", "all", "local", "output-directory="}},
}

// kubectlReads are the kubectl verbs that only read the cluster.
var kubectlReads = []string{"get", "describe", "logs", "top", "explain", "version", "api-resources", "api-versions", "cluster-info", "events", "auth", "config", "rollout", "wait"}

// kubectlCredentials point kubectl at another cluster or identity.
var kubectlCredentials = []string{"s", "server", "token", "kubeconfig", "as", "as-group", "as-uid", "username", "password", "client-certificate", "client-key", "certificate-authority", "insecure-skip-tls-verify", "tls-server-name", "profile", "profile-output", "cache-dir", "user"}

// kubectlSpec is kubectl's parser for verb: the global flags and the
// verb's own, in pflag's family.
func kubectlSpec(verb string) optSpec {
	v, ok := kubectlVerbFlags[verb]
	if !ok {
		v = kubectlVerbFlags["other"]
	}
	return optSpec{family: pflag, short: "n:s:v:" + v.short, long: append(slices.Clip(kubectlGlobal), v.long...)}
}

// kubectlVerb finds the verb the way cobra does: the first word that is
// not a global flag or its value.
func kubectlVerb(args []arg) (string, string) {
	p := optSpec{family: pflag, short: "n:s:v:", long: kubectlGlobal, stopAtOperand: true}.parse(args)
	switch {
	case p.unknown != "":
		return "", p.unknown + " (kubectl's own options go after the verb)"
	case len(p.rest) == 0:
		return "", ""
	case !p.rest[0].static():
		return "", fmt.Sprintf("the kubectl verb %s is computed at run time", p.rest[0].src)
	}
	return p.rest[0].val, ""
}

// checkKubectl allows the verbs that read, with the cluster and identity
// from the host's own configuration, and never the values of secrets.
func checkKubectl(args []arg) (Action, string) {
	verb, why := kubectlVerb(args)
	if why != "" {
		return Approve, why
	}
	p, path, unknown := subcommand(kubectlSpec(verb), args)
	if unknown != "" {
		return Approve, unknown
	}
	if o := p.find(kubectlCredentials...); o != nil {
		return Approve, fmt.Sprintf("kubectl %s overrides the cluster or the identity", o)
	}
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
	case verb == "cluster-info" && sub != "":
		return Approve, "kubectl cluster-info " + sub + " writes files"
	case (verb == "get" || verb == "events" || verb == "wait" || verb == "rollout") && showsSecrets(p, path[1:]):
		return Approve, "kubectl get of secrets, or of everything with -o, --template or --raw, shows secrets"
	case verb == "describe" && (len(path) < 2 || namesSecrets(path[1:]) || p.has("f", "filename", "k", "kustomize")):
		return Approve, "kubectl describe of secrets (or of whatever a file or no name selects) shows their keys and sizes"
	}
	if why := kubectlFetches(p); why != "" {
		return Approve, why
	}
	return Allow, "kubectl " + verb + " only reads"
}

// showsSecrets reports whether a kubectl read lists secrets, in any
// output form (the resource named in any case, plural, or group form:
// Secret, secrets.v1., secret.v1), prints objects that may be secrets in
// full (all, or manifests read from files, with an output other than the
// table), or reads a raw path naming secrets however it is encoded.
func showsSecrets(p parsed, ops []string) bool {
	if raws := p.findAll("raw"); len(raws) > 0 {
		return slices.ContainsFunc(raws, func(raw opt) bool { return rawNamesSecret(raw.value) })
	}
	if namesSecrets(ops) {
		return true
	}
	// kubectl takes the last -o: any that prints objects in full counts.
	full := p.has("template") || slices.ContainsFunc(p.findAll("o", "output"), func(o opt) bool { return o.value != "wide" && o.value != "name" })
	if !full {
		return false
	}
	if p.has("f", "filename", "k", "kustomize") {
		return true
	}
	for _, op := range ops {
		for _, part := range strings.Split(op, ",") {
			kind, _, _ := strings.Cut(part, "/")
			kind, _, _ = strings.Cut(strings.ToLower(kind), ".")
			if kind == "all" {
				return true
			}
		}
	}
	return false
}

// kubectlFetches says why a read reaches past the API server: -k builds
// a kustomization, whose bases and resources may be URLs and git
// repositories anywhere; -f URL fetches the manifest (the egress check
// judges its host, kubectlDests); --raw through a proxy path
// (services/NAME/proxy, pods/NAME/proxy, nodes/NAME/proxy) reaches any
// service in the cluster, the kubelet's API included.
func kubectlFetches(p parsed) string {
	if o := p.find("k", "kustomize"); o != nil {
		return fmt.Sprintf("kubectl %s builds a kustomization, which can fetch bases and resources from anywhere", o)
	}
	for _, o := range p.findAll("f", "filename") {
		if strings.Contains(o.value, "://") {
			return fmt.Sprintf("kubectl %s %s fetches a manifest from the network", o, o.value)
		}
	}
	for _, o := range p.findAll("raw") {
		if rawReachesProxy(o.value) {
			return fmt.Sprintf("kubectl --raw %s goes through the API server's proxy to a service, pod or node", o.value)
		}
	}
	return ""
}

// rawReachesProxy reports whether a --raw path may go through a proxy
// subresource, decoded as the API server decodes it.
func rawReachesProxy(path string) bool {
	for range 4 {
		dec, err := url.PathUnescape(path)
		if err != nil {
			return true
		}
		if dec == path {
			break
		}
		path = dec
	}
	lower := strings.ToLower(path)
	return strings.Contains(lower, "proxy") || strings.Contains(lower, "%") || strings.Contains(lower, "..")
}

// namesSecrets reports whether resource operands name secrets, in any
// case, plural or group form (Secret, secrets.v1., secret.v1).
func namesSecrets(ops []string) bool {
	for _, op := range ops {
		for _, part := range strings.Split(op, ",") {
			kind, _, _ := strings.Cut(part, "/")
			kind, _, _ = strings.Cut(strings.ToLower(kind), ".")
			if kind == "secret" || kind == "secrets" {
				return true
			}
		}
	}
	return false
}

// rawNamesSecret reports whether a --raw path could name secrets: decoded
// as the API server decodes it, or not decodable at all.
func rawNamesSecret(path string) bool {
	for range 4 {
		dec, err := url.PathUnescape(path)
		if err != nil {
			return true
		}
		if dec == path {
			break
		}
		path = dec
	}
	return strings.Contains(strings.ToLower(path), "secret") || strings.Contains(path, "%")
}

// helmSpec is helm's global and read-verb flags, in pflag's family.
var helmSpec = optSpec{family: pflag, short: "n:o:aAdqrm:l:f:", long: []string{"namespace=", "output=", "kube-context=", "kubeconfig=",
	"kube-token=", "kube-apiserver=", "kube-as-user=", "kube-as-group=", "kube-ca-file=", "kube-insecure-skip-tls-verify",
	"kube-tls-server-name=", "burst-limit=", "qps=", "debug", "registry-config=", "repository-cache=", "repository-config=",
	"revision=", "max=", "filter=", "selector=", "all", "all-namespaces", "date", "deployed", "failed", "pending", "reverse",
	"short", "superseded", "uninstalled", "uninstalling", "no-headers", "time-format=", "offset=", "show-resources",
	"show-desc", "template=", "version=", "devel", "regexp", "versions", "max-col-width=", "fail-on-no-result", "help"}}

// checkHelm allows the verbs that read releases and charts.
func checkHelm(args []arg) (Action, string) {
	p, path, unknown := subcommand(helmSpec, args)
	if unknown != "" {
		return Approve, unknown
	}
	if o := p.find("kubeconfig", "kube-token", "kube-apiserver", "kube-as-user", "kube-as-group", "kube-ca-file"); o != nil {
		return Approve, fmt.Sprintf("helm %s overrides the cluster or the identity", o)
	}
	verb := at(path, 0)
	if verb == "env" {
		return Approve, "helm env prints helm's environment, HELM_KUBETOKEN among it"
	}
	if slices.Contains([]string{"list", "ls", "status", "history", "hist", "version"}, verb) ||
		(verb == "repo" && at(path, 1) == "list") || (verb == "search" && slices.Contains([]string{"repo", "hub"}, at(path, 1))) {
		return Allow, "helm " + verb + " only reads"
	}
	if verb == "get" && slices.Contains([]string{"notes", "hooks", "metadata"}, at(path, 1)) {
		return Allow, "helm get " + at(path, 1) + " only reads"
	}
	return Approve, "helm " + orText(verb, "without a verb") + " changes releases or repositories, or shows values that may hold secrets"
}
