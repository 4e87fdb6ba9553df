package leader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/opsbot/opsbot/store/replica"
)

// Settings is the config's `ha` section.
type Settings struct {
	// Enabled makes this process contend for the Lease and act only while
	// it holds it. Off (the default), opsbot is one process with the lock
	// file beside its database.
	Enabled bool `yaml:"enabled"`
	// LeaseName names the Lease (default opsbot).
	LeaseName string `yaml:"lease_name"`
	// Namespace holds the Lease (default $POD_NAMESPACE, from the
	// downward API, else the service account's namespace).
	Namespace string `yaml:"namespace"`
	// Identity is this process's holder name (default $POD_NAME, else the
	// host name, which in a pod is the pod's name).
	Identity string `yaml:"identity"`
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's
	// timings (defaults 15s, 10s, 2s).
	LeaseDuration time.Duration `yaml:"lease_duration"`
	RenewDeadline time.Duration `yaml:"renew_deadline"`
	RetryPeriod   time.Duration `yaml:"retry_period"`
	// ServiceAccount is the folder of the pod's token and CA (default
	// ServiceAccountDir).
	ServiceAccount string `yaml:"service_account"`
	// Litestream replicates the leader's database through a Litestream
	// sidecar, each replica on its own volume (store/replica). Empty: the
	// replicas share one volume.
	Litestream replica.Settings `yaml:"litestream"`
}

var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// Validate says in words what is wrong with the section.
func (s Settings) Validate() error {
	if !s.Enabled {
		return nil
	}
	d := s.WithDefaults(func(string) string { return "" })
	var errs []error
	if !dnsName.MatchString(d.LeaseName) {
		errs = append(errs, fmt.Errorf("lease_name: %q is not a Kubernetes object name (lower-case letters, digits, '-' and '.')", d.LeaseName))
	}
	if s.Namespace != "" && !dnsName.MatchString(s.Namespace) {
		errs = append(errs, fmt.Errorf("namespace: %q is not a Kubernetes namespace name", s.Namespace))
	}
	if err := Check(d.LeaseDuration, d.RenewDeadline, d.RetryPeriod); err != nil {
		errs = append(errs, fmt.Errorf("lease_duration, renew_deadline, retry_period: %w", err))
	}
	if err := s.Litestream.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// WithDefaults fills what the section left empty, from getenv where the
// downward API puts it.
func (s Settings) WithDefaults(getenv func(string) string) Settings {
	if s.LeaseName == "" {
		s.LeaseName = "opsbot"
	}
	if s.ServiceAccount == "" {
		s.ServiceAccount = ServiceAccountDir
	}
	if s.Namespace == "" {
		s.Namespace = getenv("POD_NAMESPACE")
	}
	if s.Namespace == "" {
		b, _ := os.ReadFile(filepath.Join(s.ServiceAccount, "namespace"))
		s.Namespace = strings.TrimSpace(string(b))
	}
	if s.Identity == "" {
		s.Identity = getenv("POD_NAME")
	}
	if s.Identity == "" {
		s.Identity, _ = os.Hostname()
	}
	s.LeaseDuration = or(s.LeaseDuration, DefaultLeaseDuration)
	s.RenewDeadline = or(s.RenewDeadline, DefaultRenewDeadline)
	s.RetryPeriod = or(s.RetryPeriod, DefaultRetryPeriod)
	return s
}

func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Elector builds the Elector the settings describe, in the pod whose
// environment getenv reads.
func (s Settings) Elector(getenv func(string) string) (*Elector, error) {
	d := s.WithDefaults(getenv)
	if d.Namespace == "" {
		return nil, errors.New("ha: no namespace for the Lease: set ha.namespace, or POD_NAMESPACE from the downward API")
	}
	c, err := InCluster(d.ServiceAccount, d.Namespace, d.LeaseName, getenv)
	if err != nil {
		return nil, fmt.Errorf("ha: %w", err)
	}
	return New(Config{Client: c, Identity: d.Identity, LeaseDuration: d.LeaseDuration, RenewDeadline: d.RenewDeadline, RetryPeriod: d.RetryPeriod})
}
