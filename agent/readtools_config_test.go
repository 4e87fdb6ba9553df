package agent

import (
	"errors"
	"testing"
)

func TestEndpointValidate(t *testing.T) {
	t.Parallel()
	for u, ok := range map[string]bool{"": true, "http://prometheus:9090": true, "https://loki.example/": true,
		"prometheus:9090": false, "ftp://x": false, "http://": false} {
		err := Endpoint{URL: u}.Validate("prometheus")
		if (err == nil) != ok {
			t.Errorf("Validate(%q) = %v; want ok %v", u, err, ok)
		}
		var fe fieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field() != "prometheus.url") {
			t.Errorf("Validate(%q) = %v; want a prometheus.url field error", u, err)
		}
	}
}
