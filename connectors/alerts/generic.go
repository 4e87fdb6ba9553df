package alerts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// parseGeneric reads a payload through a generic source's JSON paths.
func parseGeneric(f Fields, body []byte) (Delivery, error) {
	var v any
	if err := decode(body, &v); err != nil {
		return Delivery{}, err
	}
	title, err := textAt(f.Title, v)
	if err != nil || title == "" {
		return Delivery{}, shapeErr("no title at %s (fields.title)", f.Title)
	}
	key, err := textAt(f.Dedupe, v)
	if err != nil || key == "" {
		return Delivery{}, shapeErr("no dedupe key at %s (fields.dedupe): it names the alert's thread", f.Dedupe)
	}
	status, _ := textAt(f.Status, v)
	labels, err := labelsAt(f.Labels, v)
	if err != nil {
		return Delivery{}, err
	}
	if sev, _ := textAt(f.Severity, v); sev != "" {
		labels["severity"] = sev
	}
	labels["alertname"] = cmpOr(labels["alertname"], title)
	d := Delivery{Group: key, Status: genericStatus(status), Title: title, Labels: labels}
	d.Alerts = []Alert{{ID: key, Status: d.Status, Labels: labels, StartsAt: time.Time{}}}
	return d, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// genericStatus reads resolved, ok, closed (any case) as resolved.
func genericStatus(s string) Status {
	switch strings.ToLower(s) {
	case "resolved", "ok", "closed", "recovered", "success":
		return Resolved
	}
	return Firing
}

// textAt is the scalar at path, as text ("" when the path is unset).
func textAt(path string, v any) (string, error) {
	if path == "" {
		return "", nil
	}
	p, err := ParsePath(path)
	if err != nil {
		return "", err
	}
	switch x := p.Lookup(v).(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case float64, bool:
		return fmt.Sprint(x), nil
	}
	return "", shapeErr("%s holds keys or a list, not a value", path)
}

// labelsAt reads labels: an object of values, or a list of "k:v" / "k=v"
// / bare tags.
func labelsAt(path string, v any) (map[string]string, error) {
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	p, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	switch x := p.Lookup(v).(type) {
	case nil:
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out[k] = fmt.Sprint(x[k])
		}
	case []any:
		for _, t := range x {
			k, val, _ := strings.Cut(fmt.Sprint(t), ":")
			if strings.Contains(k, "=") {
				k, val, _ = strings.Cut(fmt.Sprint(t), "=")
			}
			out[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
	default:
		return nil, shapeErr("%s (fields.labels) is neither keys nor a list", path)
	}
	return out, nil
}

// labelsKey is labels as one stable string.
func labelsKey(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// jsonWords says what is wrong with a body in words a sender reads,
// without the JSON package's own.
func jsonWords(err error) string {
	var syntax *json.SyntaxError
	var kind *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input":
		return "it ends before its JSON does (was it cut short?)"
	case errors.As(err, &syntax):
		return fmt.Sprintf("it is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &kind) && kind.Field != "":
		return fmt.Sprintf("%s is a JSON %s where a %s belongs", kind.Field, kind.Value, typeWords(kind.Type.Kind().String()))
	case errors.As(err, &kind):
		return fmt.Sprintf("it is a JSON %s where an object belongs", kind.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// typeWords names a Go kind as JSON calls it.
func typeWords(kind string) string {
	switch kind {
	case "slice", "array":
		return "list"
	case "map", "struct":
		return "object"
	case "int", "int64", "float64", "uint", "int32":
		return "number"
	case "bool":
		return "true or false"
	}
	return kind
}
