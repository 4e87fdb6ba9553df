package agent_test

import (
	"errors"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
)

// A negative stream_idle_timeout is refused by name; zero is the default.
func TestStreamIdleTimeoutIsValidated(t *testing.T) {
	t.Parallel()
	err := agent.Config{StreamIdleTimeout: -time.Second}.Validate()
	var f interface{ Field() string }
	if !errors.As(err, &f) || f.Field() != "stream_idle_timeout" {
		t.Errorf("err = %v; want one about stream_idle_timeout", err)
	}
	if err := (agent.Config{StreamIdleTimeout: 0}).Validate(); err != nil {
		t.Errorf("the default was refused: %v", err)
	}
}
