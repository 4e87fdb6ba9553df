package policy

import "testing"

// TestRootedNamesAreNotKnown: a name written with its final dot skips the
// hosts file and goes to DNS, so a local name the config knows
// (localhost, an inventory name, an allowed domain) spelled that way is
// not a known destination: the nsverify SSH run saw curl send a query for
// localhost. to the resolver while the policy allowed it.
func TestRootedNamesAreNotKnown(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy(PolicyConfig{EgressAllow: []string{"localhost", "127.0.0.1", "example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line string
		want Action
	}{
		{"curl -s http://localhost:18299/", Allow},
		{"curl -s http://example.com/", Allow},
		{"curl -s http://localhost.:18299/", Approve},
		{"curl -s https://LOCALHOST./x", Approve},
		{"curl -s http://sub.example.com./", Approve},
		{"curl -s http://example.com./", Approve},
		{"wget -qO- http://localhost./", Approve},
	} {
		if d := p.Check(Target{Host: "web-1"}, tt.line); d.Action != tt.want {
			t.Errorf("%q: %s, want %s (%v)", tt.line, d.Action, tt.want, d.Reasons)
		}
	}
}
