package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
)

// canonical is the one JSON text of a call's arguments: an object, its
// keys sorted, no insignificant space, numbers as written, HTML left
// alone. An approval binds it and the server receives exactly it, so what
// people approved is what runs.
func canonical(input []byte) ([]byte, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New("the arguments are not JSON")
	}
	if dec.More() {
		return nil, errors.New("the arguments are more than one JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("the arguments must be a JSON object")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
