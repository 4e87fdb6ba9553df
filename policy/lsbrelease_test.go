package policy

import (
	"strings"
	"testing"
)

// lsbReleaseHelp is `lsb_release --help` of Debian's lsb-release 12.1
// (the shell script); the Python lsb_release it replaced prints the same
// options.
const lsbReleaseHelp = `Usage: lsb_release [options]

Options:
  -h, --help         show this help message and exit
  -v, --version      show LSB modules this system supports
  -i, --id           show distributor ID
  -d, --description  show description of this distribution
  -r, --release      show release number of this distribution
  -c, --codename     show code name of this distribution
  -a, --all          show all of the above information
  -s, --short        show requested information in short format
`

// lsb_release only prints what /etc/os-release says: every option of its
// help is allowed, and nothing else. Naming another release file (the
// script sources it as shell) is an assignment, which needs approval.
func TestLsbReleaseIsReadOnly(t *testing.T) {
	t.Parallel()
	opts := helpOptions(lsbReleaseHelp)
	if len(opts) != 16 {
		t.Fatalf("read %d options from lsb_release's help, want 16", len(opts))
	}
	for _, o := range opts {
		if k, ok := specKind(lsbReleaseSpec, o.name); !ok || k != o.kind {
			t.Errorf("lsb_release %s: the spec knows it %v as %s; the help says %s", dashed(o.name), ok, kindText(k), kindText(o.kind))
		}
	}
	p := fleetPolicy(t)
	tests := []struct {
		cmd  string
		want Action
	}{
		{"lsb_release -a", Allow},
		{"lsb_release", Allow},
		{"lsb_release -sc", Allow},
		{"lsb_release --all --short", Allow},
		{"lsb_release --desc", Allow}, // getopt takes an unambiguous prefix
		{"lsb_release -ds | tr -d '\"'", Allow},
		{"lsb_release -a 2>/dev/null", Allow},
		{"lsb_release -a extra", Approve},
		{"lsb_release -x", Approve},
		{"lsb_release --output=x", Approve},
		{"LSB_OS_RELEASE=/tmp/evil lsb_release -a", Approve},
		{"lsb_release -a > /tmp/release", Approve},
	}
	for _, tt := range tests {
		if d := p.Check(Target{Host: "h"}, tt.cmd); d.Action != tt.want {
			t.Errorf("Check(%q) = %s, want %s\n  %s", tt.cmd, d.Action, tt.want, strings.Join(d.Reasons, "\n  "))
		}
	}
}
