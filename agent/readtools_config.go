package agent

import (
	"fmt"
	"net/url"
)

// Endpoint is a service the agent's query tools read: agent.prometheus
// and agent.loki. An empty URL leaves its tool out (tools.QueryTools).
type Endpoint struct {
	// URL is the service's base URL, e.g. http://prometheus:9090 (the
	// tool adds /api/v1/query) or http://loki:3100.
	URL string `yaml:"url"`
}

// Validate checks that a set URL is an http or https URL with a host;
// key names the section ("prometheus") in the error.
func (e Endpoint) Validate(key string) error {
	if e.URL == "" {
		return nil
	}
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fieldError{key + ".url", fmt.Sprintf("%q is not an http:// or https:// URL", e.URL)}
	}
	return nil
}
