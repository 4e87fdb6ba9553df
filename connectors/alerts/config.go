package alerts

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The source types.
const (
	TypeAlertmanager = "alertmanager"
	TypeGrafana      = "grafana"
	TypePagerDuty    = "pagerduty"
	TypeGeneric      = "generic"
)

// Config is the `alerts` section.
type Config struct {
	// Sources are the senders, each served at POST /hooks/{name}.
	Sources []Source `yaml:"sources"`
	// Routes say where an alert group is posted: the first whose match
	// fits the group's labels.
	Routes []Route `yaml:"routes"`
	// HostLabels are the labels whose values name inventory hosts: the
	// investigation's targets (default instance, host, nodename).
	HostLabels []string `yaml:"host_labels"`
	// MaxConcurrent is how many investigations run at once (default 3);
	// the rest queue and say so.
	MaxConcurrent int `yaml:"max_concurrent"`
	// Cooldown is the least time between two investigations of one group
	// (default 30m).
	Cooldown time.Duration `yaml:"cooldown"`
}

// Source is one sender of alerts.
type Source struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	// Token is the bearer token an alertmanager, grafana or generic
	// source sends (Authorization: Bearer TOKEN).
	Token string `yaml:"token"`
	// Secrets are a pagerduty source's signing secrets: several while one
	// is rotated out.
	Secrets []string `yaml:"secrets"`
	// Fields are a generic source's JSON paths.
	Fields Fields `yaml:"fields"`
}

// Fields are where a generic payload holds each part of an alert: JSON
// paths like $.title or $.alert.labels.
type Fields struct {
	Title    string `yaml:"title"`
	Status   string `yaml:"status"`
	Severity string `yaml:"severity"`
	Dedupe   string `yaml:"dedupe"`
	Labels   string `yaml:"labels"`
}

// Route sends the alert groups whose labels match to a channel.
type Route struct {
	// Match holds label = value; a value written =~RE is a regular
	// expression the whole label value must match. Empty matches all.
	Match       map[string]string `yaml:"match"`
	PostTo      PostTo            `yaml:"post_to"`
	Investigate bool              `yaml:"investigate"`
}

// PostTo is a channel on a platform.
type PostTo struct {
	Platform string `yaml:"platform"`
	Channel  string `yaml:"channel"`
}

// Defaults of the section.
const (
	DefaultMaxConcurrent = 3
	DefaultCooldown      = 30 * time.Minute
)

// DefaultHostLabels are the labels read for host names when host_labels
// is not set.
var DefaultHostLabels = []string{"instance", "host", "nodename"}

// WithDefaults fills what the file left empty.
func (c Config) WithDefaults() Config {
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.Cooldown == 0 {
		c.Cooldown = DefaultCooldown
	}
	if c.HostLabels == nil {
		c.HostLabels = DefaultHostLabels
	}
	return c
}

// Enabled says whether any source is configured.
func (c Config) Enabled() bool { return len(c.Sources) > 0 }

// Source finds a source by name.
func (c Config) Source(name string) (Source, bool) {
	for _, s := range c.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// Open says whether a source can authenticate a sender: it has a token,
// or a pagerduty source a secret. A source without one refuses every
// delivery (401).
func (s Source) Open() bool {
	if s.Type == TypePagerDuty {
		for _, v := range s.Secrets {
			if v != "" {
				return true
			}
		}
		return false
	}
	return s.Token != ""
}

// FieldError is a validation error about one key of the section.
type FieldError struct{ Key, Msg string }

// Error is the key and the problem, in words.
func (e FieldError) Error() string { return e.Key + ": " + e.Msg }

// Field is the key, within the section.
func (e FieldError) Field() string { return e.Key }

var sourceName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Validate checks every key of the section, each problem in words.
func (c Config) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, s := range c.Sources {
		errs = append(errs, s.validate(fmt.Sprintf("sources[%d]", i), seen)...)
	}
	for i, r := range c.Routes {
		errs = append(errs, r.validate(fmt.Sprintf("routes[%d]", i))...)
	}
	if len(c.Sources) > 0 && len(c.Routes) == 0 {
		errs = append(errs, FieldError{"routes", "no route: alerts would be posted nowhere; add one, e.g. - post_to: {platform: web, channel: ops}"})
	}
	for i, l := range c.HostLabels {
		if strings.TrimSpace(l) == "" {
			errs = append(errs, FieldError{fmt.Sprintf("host_labels[%d]", i), "is empty: name a label, e.g. instance"})
		}
	}
	if c.MaxConcurrent < 0 {
		errs = append(errs, FieldError{"max_concurrent", "must be 1 or more (0 or unset: 3)"})
	}
	if c.Cooldown < 0 {
		errs = append(errs, FieldError{"cooldown", "must be a positive duration, e.g. 30m"})
	}
	return errors.Join(errs...)
}

func (s Source) validate(key string, seen map[string]bool) []error {
	var errs []error
	switch {
	case s.Name == "":
		errs = append(errs, FieldError{key + ".name", "is missing: it names the endpoint, POST /hooks/NAME"})
	case !sourceName.MatchString(s.Name):
		errs = append(errs, FieldError{key + ".name", fmt.Sprintf("%q cannot be part of the endpoint's path: use lower-case letters, digits, - and _", s.Name)})
	case seen[s.Name]:
		errs = append(errs, FieldError{key + ".name", fmt.Sprintf("%q names another source too: each source needs its own name", s.Name)})
	}
	seen[s.Name] = true
	switch s.Type {
	case TypeAlertmanager, TypeGrafana, TypeGeneric:
		if len(s.Secrets) > 0 {
			errs = append(errs, FieldError{key + ".secrets", "is for pagerduty sources, which sign their deliveries; a " + s.Type + " source sends a bearer token: set token"})
		}
	case TypePagerDuty:
		if s.Token != "" {
			errs = append(errs, FieldError{key + ".token", "PagerDuty signs its webhooks rather than sending a token: put the subscription's signing secret in secrets"})
		}
	case "":
		errs = append(errs, FieldError{key + ".type", "is missing: use alertmanager, grafana, pagerduty or generic"})
	default:
		errs = append(errs, FieldError{key + ".type", fmt.Sprintf("%q is not a source type: use alertmanager, grafana, pagerduty or generic", s.Type)})
	}
	return append(errs, s.validateFields(key)...)
}

func (s Source) validateFields(key string) []error {
	if s.Type != TypeGeneric {
		if s.Fields != (Fields{}) {
			return []error{FieldError{key + ".fields", "is for generic sources: a " + s.Type + " payload has a known shape"}}
		}
		return nil
	}
	var errs []error
	for _, f := range []struct{ name, path string }{{"title", s.Fields.Title}, {"status", s.Fields.Status},
		{"severity", s.Fields.Severity}, {"dedupe", s.Fields.Dedupe}, {"labels", s.Fields.Labels}} {
		if f.path == "" {
			if f.name == "title" || f.name == "dedupe" {
				errs = append(errs, FieldError{key + ".fields." + f.name, "is missing: a generic source needs the JSON path of its " + f.name + ", e.g. $." + f.name})
			}
			continue
		}
		if _, err := ParsePath(f.path); err != nil {
			errs = append(errs, FieldError{key + ".fields." + f.name, err.Error()})
		}
	}
	return errs
}

func (r Route) validate(key string) []error {
	var errs []error
	switch r.PostTo.Platform {
	case "slack", "discord", "web":
	case "":
		errs = append(errs, FieldError{key + ".post_to.platform", "is missing: use slack, discord or web"})
	default:
		errs = append(errs, FieldError{key + ".post_to.platform", fmt.Sprintf("%q is not a platform: use slack, discord or web", r.PostTo.Platform)})
	}
	if r.PostTo.Channel == "" {
		errs = append(errs, FieldError{key + ".post_to.channel", "is missing: the channel the alert's thread opens in (a Slack or Discord channel id, a web chat channel name)"})
	}
	for label, v := range r.Match {
		if re, ok := strings.CutPrefix(v, "=~"); ok {
			if _, err := regexp.Compile("^(?:" + re + ")$"); err != nil {
				errs = append(errs, FieldError{key + ".match." + label, fmt.Sprintf("%q is not a regular expression Go reads: %s", re, reWords(err))})
			}
		}
	}
	return errs
}

// reWords is a regexp error without the package's prefix.
func reWords(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}
