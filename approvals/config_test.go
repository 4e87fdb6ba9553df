package approvals

import (
	"errors"
	"testing"
)

func TestGateConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		err   error
		field string
	}{
		{"quorum", GateConfig{Quorum: -1}.Validate(), "quorum"},
		{"expiry", GateConfig{Expiry: -1}.Validate(), "expiry"},
		{"approver names nobody", GateConfig{Approvers: []ApproverConfig{{Channels: []string{"C1"}}}}.Validate(), "approvers[0]"},
		{"approver blank id", GateConfig{Approvers: []ApproverConfig{{Slack: SlackApprovers{Users: []string{" U1"}}}}}.Validate(), "approvers[0].slack.users[0]"},
	}
	for _, tt := range tests {
		var fe interface{ Field() string }
		if !errors.As(tt.err, &fe) {
			t.Errorf("%s: error %v has no Field", tt.name, tt.err)
			continue
		}
		if fe.Field() != tt.field {
			t.Errorf("%s: Field() = %q, want %q (%v)", tt.name, fe.Field(), tt.field, tt.err)
		}
	}
	ok := []error{
		GateConfig{}.Validate(),
		GateConfig{Quorum: 2, Approvers: []ApproverConfig{{HostGroups: []string{"db"}, Discord: DiscordApprovers{Roles: []string{"123"}}}}}.Validate(),
	}
	for i, err := range ok {
		if err != nil {
			t.Errorf("valid config %d: %v", i, err)
		}
	}
}
