package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opsbot/opsbot/agent"
)

// spec builds a tool's spec from its name, its embedded description and
// its JSON Schema. The description file ends in a newline an editor adds;
// the model reads it without.
func spec(name, description, inputSchema string) agent.ToolSpec {
	return agent.ToolSpec{Name: name, Description: strings.TrimSuffix(description, "\n"), InputSchema: json.RawMessage(inputSchema)}
}

// decodeInput unmarshals a tool's input strictly, for a clear error the
// model can correct.
func decodeInput(call agent.ToolCall, v any) error {
	if err := json.Unmarshal(call.Input, v); err != nil {
		return fmt.Errorf("invalid input for %s: %v", call.Name, err)
	}
	return nil
}

// orDefault is v, or d when v is not positive.
func orDefault[T int | ~int64](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}
