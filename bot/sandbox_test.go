package bot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/hosts"
)

// A classifier mistake is not a breach: with a rule that wrongly allows
// touch, `run local touch FILE` runs at once, without a person, and the
// sandbox refuses the write; the same command approved by a person runs
// outside it and writes.
func TestRunLocalOfAnAllowedCommandRunsInTheSandbox(t *testing.T) {
	t.Parallel()
	conn := newFakeConn(webLimits)
	conn.name = "web"
	dir := t.TempDir()
	mistake := approvals.PolicyConfig{Rules: []approvals.RuleConfig{{Program: "touch", Args: []string{"*/allowed-by-mistake"}, Action: "allow"}}}
	b, stop := startBot(t, dir, conn, botOptions{policy: mistake})
	t.Cleanup(stop)
	h := &harness{t: t, bot: b, conn: conn, st: storeOf(b), dir: dir, stop: stop}

	h.say("alice", "t1", "run local echo hello from the sandbox")
	h.eventually("the output", h.has("t1", "hello from the sandbox"))

	target := filepath.Join(dir, "allowed-by-mistake")
	h.say("alice", "t2", "run local touch "+target)
	if hosts.SandboxSupport() == nil {
		h.eventually("the refusal of the write", h.has("t2", "Permission denied"))
		h.eventually("the failed run", h.has("t2", "exit 1"))
	} else { // a kernel without Landlock: nothing runs without the sandbox
		h.eventually("the refusal to run", h.has("t2", "so the command did not run"))
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a command that ran without a person wrote outside its sandbox")
	}

	approved := filepath.Join(dir, "approved")
	h.say("alice", "t3", "run local touch "+approved)
	h.eventually("the approval card", h.has("t3", "Approval needed"))
	card, ref, _ := h.find("t3", "Approval needed")
	h.click("bob", card, ref, ActionApprove)
	h.eventually("the approved command to write", func() bool { _, err := os.Stat(approved); return err == nil })
}
