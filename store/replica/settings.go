package replica

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Settings is the config's `ha.litestream` section. Empty Replica: no
// replication (both replicas then share one volume, see docs/DEPLOY.md).
type Settings struct {
	// Replica is where the generations' replicas go: a Litestream replica
	// URL, e.g. s3://bucket/opsbot or file:///replicas/opsbot.
	Replica string `yaml:"replica"`
	// Socket is the sidecar's control socket (default DefaultSocket).
	Socket string `yaml:"socket"`
	// Bin is the litestream binary restores run (default "litestream",
	// found in PATH).
	Bin string `yaml:"bin"`
	// SyncTimeout bounds a sync-and-wait before a command (default 10s).
	SyncTimeout time.Duration `yaml:"sync_timeout"`
	// FollowInterval is how often the standby's copy polls the replica
	// (default 1s).
	FollowInterval time.Duration `yaml:"follow_interval"`
	// SidecarGrace is how long a leader goes on without an answer from
	// its sidecar before it hands the lead over (default 30s): the
	// kubelet restarts a sidecar that died well within it.
	SidecarGrace time.Duration `yaml:"sidecar_grace"`
}

// DefaultSocket is the control socket the chart's sidecar listens on.
const DefaultSocket = "/run/litestream/litestream.sock"

// Enabled says whether the section asks for replication.
func (s Settings) Enabled() bool { return s.Replica != "" }

// WithDefaults fills what the section left empty.
func (s Settings) WithDefaults() Settings {
	if s.Socket == "" {
		s.Socket = DefaultSocket
	}
	if s.Bin == "" {
		s.Bin = "litestream"
	}
	if s.SyncTimeout == 0 {
		s.SyncTimeout = 10 * time.Second
	}
	if s.FollowInterval == 0 {
		s.FollowInterval = time.Second
	}
	if s.SidecarGrace == 0 {
		s.SidecarGrace = 30 * time.Second
	}
	return s
}

// Validate says in words what is wrong with the section.
func (s Settings) Validate() error {
	if !s.Enabled() {
		return nil
	}
	var errs []error
	u, err := url.Parse(s.Replica)
	switch {
	case err != nil || u.Scheme == "" || (u.Host == "" && u.Path == ""):
		errs = append(errs, fmt.Errorf("litestream.replica: %q is not a Litestream replica URL: write one like s3://bucket/opsbot or file:///replicas/opsbot", s.Replica))
	case u.RawQuery != "" || u.Fragment != "":
		errs = append(errs, fmt.Errorf("litestream.replica: %q: give the bucket and folder only; opsbot adds a folder per leadership generation", s.Replica))
	}
	if s.SyncTimeout < 0 {
		errs = append(errs, errors.New("litestream.sync_timeout: must be a positive duration, e.g. 10s"))
	}
	if s.FollowInterval < 0 {
		errs = append(errs, errors.New("litestream.follow_interval: must be a positive duration, e.g. 1s"))
	}
	if s.SidecarGrace < 0 {
		errs = append(errs, errors.New("litestream.sidecar_grace: must be a positive duration, e.g. 30s"))
	}
	return errors.Join(errs...)
}

// Generation is the replica URL of leadership generation gen.
func (s Settings) Generation(gen int64) string {
	return fmt.Sprintf("%s/generation-%06d", strings.TrimRight(s.Replica, "/"), gen)
}
