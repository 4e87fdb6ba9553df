package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/opsbot/opsbot"

// TestImportsFollowTheDesign checks every package's imports (not its
// tests') against design §2: imports point one way, cmd → bot → {agent,
// approvals, checks, hosts, connectors, store}; agent never imports bot or
// a connector; connectors never import each other, bot or store; only a
// command (cmd/opsbot, a benchmark's main) names a concrete adapter. What
// runs commands sits below every front: the Guard (approvals) and the
// Executor and Jobs (hosts) serve the agent, bot, checks and the terminal
// alike, so approvals and hosts import none of them, hosts not even the
// policy, and checks runs without the LLM. The policy only classifies: it
// imports neither the Guard and Gate (approvals) that act on its decision
// nor anyone who asks it, nor the store; the executors (hosts/executor)
// know hosts and the redactor only.
func TestImportsFollowTheDesign(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Name}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, name := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/"), f[1]
		for _, imp := range f[2:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if why := forbidden(pkg, name, strings.TrimPrefix(imp, module+"/")); why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}
}

// concrete are the adapters only a command may name.
var concrete = []string{"connectors/web", "connectors/console", "connectors/slack", "connectors/discord", "agent/anthropic", "agent/openai"}

// contracts are an adapter's own types and interfaces, apart from it so
// that another adapter implements them without naming it: the store's Web
// sub-store is the web chat's archive.
var contracts = []string{"connectors/web/archive"}

// forbidden says why package pkg (named name) may not import imp, or "".
func forbidden(pkg, name, imp string) string {
	under := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
	switch {
	case slices.Contains(contracts, imp) && !under(pkg, "bot") && !under(pkg, "agent"):
		return ""
	case under(imp, "cmd"):
		return "nothing imports the composition root"
	case slices.ContainsFunc(concrete, func(c string) bool { return under(imp, c) }) && name != "main" && !under(pkg, imp):
		if under(pkg, "connectors") && under(imp, "connectors") {
			return "connectors never import each other"
		}
		return "only a command names a concrete adapter"
	case under(imp, "bot") && !under(pkg, "bot") && name != "main":
		return "imports point from bot outwards: only the composition root uses bot"
	case under(pkg, "agent") && under(imp, "connectors"):
		return "agent never imports a connector"
	case pkg == "agent" && !under(imp, "agent/internal"):
		return "the loop knows its tools as agent.Tool: approvals, hosts and store are agent/tools' and agent/persist's"
	case under(pkg, "connectors") && (under(imp, "store") || under(imp, "bot")):
		return "connectors never import bot or store"
	case under(pkg, "store") && !under(imp, "store") && !slices.Contains([]string{"hosts", "approvals", "checks"}, imp):
		return "store keeps the domains' rows: it imports hosts, approvals and checks for their types (and implements the contracts), nothing else of ours"
	case under(pkg, "hosts/executor") && !slices.Contains([]string{"hosts", "approvals/redact"}, imp):
		return "the executors run what the Guard let through: they import hosts and the redactor only, and reach the store through their own interfaces"
	case under(pkg, "hosts/executor"):
		return ""
	case under(pkg, "hosts") && name != "main" && slices.ContainsFunc([]string{"agent", "approvals", "bot", "checks", "connectors", "policy", "store"}, func(r string) bool { return under(imp, r) }):
		return "hosts runs what it is handed: it knows no policy, model, router or platform, and owns its rows (the store keeps them)"
	case under(pkg, "approvals") && slices.ContainsFunc([]string{"agent", "bot", "checks"}, func(r string) bool { return under(imp, r) }):
		return "the Guard serves the agent, bot, checks and the terminal alike: approvals imports none of them"
	case under(pkg, "policy") && slices.ContainsFunc([]string{"approvals", "agent", "bot", "checks", "store"}, func(r string) bool { return under(imp, r) }):
		return "the policy only classifies: it imports nothing that acts on its decision, asks it, or stores it"
	case under(pkg, "checks") && under(imp, "agent"):
		return "health checks run commands without the LLM"
	}
	return ""
}

// The rules themselves catch what design §2 forbids.
func TestImportRules(t *testing.T) {
	t.Parallel()
	bad := [][3]string{
		{"agent", "agent", "bot"},
		{"agent", "agent", "connectors/web"},
		{"connectors/web", "web", "connectors/console"},
		{"connectors/web", "web", "store"},
		{"store", "store", "connectors/web"},
		{"connectors/web/archive", "archive", "store"},
		{"bot", "bot", "connectors/web/archive"},
		{"bot", "bot", "connectors/web"},
		{"checks", "checks", "bot"},
		{"store", "store", "bot"},
		{"store", "store", "agent"},
		{"store", "store", "approvals/redact"},
		{"bot", "bot", "cmd/opsbot"},
		{"approvals", "approvals", "agent"},
		{"approvals", "approvals", "checks"},
		{"hosts", "hosts", "approvals"},
		{"hosts", "hosts", "agent"},
		{"checks", "checks", "agent"},
		{"hosts", "hosts", "policy"},
		{"policy", "policy", "approvals"},
		{"policy", "policy", "agent"},
		{"policy", "policy", "bot"},
		{"policy", "policy", "checks"},
		{"policy", "policy", "store"},
		{"policy/nsverify", "nsverify", "approvals"},
		{"approvals", "approvals", "bot"},
		{"hosts/executor", "executor", "store"},
		{"hosts/executor", "executor", "approvals"},
		{"hosts/executor", "executor", "bot"},
		{"agent", "agent", "approvals"},
		{"agent", "agent", "store"},
		{"hosts", "hosts", "store"},
	}
	for _, b := range bad {
		if forbidden(b[0], b[1], b[2]) == "" {
			t.Errorf("%s importing %s is allowed", b[0], b[2])
		}
	}
	good := [][3]string{{"store", "store", "connectors/web/archive"}, {"connectors/web", "web", "connectors/web/archive"}, {"bot", "bot", "connectors"}, {"cmd/opsbot", "main", "connectors/web"}, {"bot/bench/idle", "main", "bot"}, {"checks", "checks", "connectors"},
		{"approvals", "approvals", "hosts"}, {"checks", "checks", "approvals"},
		{"store", "store", "hosts"}, {"store", "store", "approvals"}, {"store", "store", "checks"},
		{"approvals", "approvals", "policy"}, {"checks", "checks", "policy"}, {"policy", "policy", "hosts"}, {"policy/nsverify", "nsverify", "hosts/sshtest"},
		{"hosts/executor", "executor", "hosts"}, {"hosts/executor", "executor", "approvals/redact"},
		{"agent/tools", "tools", "approvals"}, {"agent/tools", "tools", "hosts"}, {"agent/persist", "persist", "store"}, {"agent", "agent", "agent/internal/textcut"}}
	for _, g := range good {
		if why := forbidden(g[0], g[1], g[2]); why != "" {
			t.Errorf("%s importing %s is refused: %s", g[0], g[2], why)
		}
	}
}
