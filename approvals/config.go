package approvals

import "time"

// PolicyConfig is the `policy` section of the config file.
type PolicyConfig struct {
	// Default is the action for a command no rule and no allowlist entry
	// covers: allow, approve or deny. Empty means approve.
	Default string `yaml:"default"`
}

// GateConfig is the `approvals` section of the config file.
type GateConfig struct {
	// Quorum is how many approvals approve a request (default 1).
	Quorum int `yaml:"quorum"`
	// Expiry is how long a request waits for a decision (default 15m); no
	// decision by then is a deny.
	Expiry time.Duration `yaml:"expiry"`
	// AllowSelfApproval lets a requester approve their own request.
	AllowSelfApproval bool `yaml:"allow_self_approval"`
}
