package leader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// ErrNoPod is the API server's 404 to a pod's patch: no pod of that name
// in the namespace.
var ErrNoPod = errors.New("no such pod")

// LabelPod sets the label key=value on the pod named pod, in the Client's
// namespace, by a JSON merge patch of its metadata.labels: the pod's
// other labels stay. ErrNoPod when there is no such pod.
//
// The chart's Service selects the pod labelled as the leader, so HTTP
// traffic reaches the Lease's holder while both pods are Ready.
func (c *Client) LabelPod(ctx context.Context, pod, key, value string) error {
	return c.PatchPod(ctx, pod, map[string]string{key: value}, nil)
}

// PatchPod sets labels and annotations on the pod named pod, in the
// Client's namespace, by a JSON merge patch of its metadata: its other
// labels and annotations stay. ErrNoPod when there is no such pod.
func (c *Client) PatchPod(ctx context.Context, pod string, labels, annotations map[string]string) error {
	meta := map[string]any{"labels": labels}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	u := c.Server + "/api/v1/namespaces/" + url.PathEscape(c.Namespace) + "/pods/" + url.PathEscape(pod)
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u, bytes.NewReader(patch))
	if err != nil {
		return err
	}
	if err := c.authorize(req); err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("pod %s/%s: %w", c.Namespace, pod, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("pod %s/%s: %w", c.Namespace, pod, ErrNoPod)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("label pod %s/%s: the API server answered %s", c.Namespace, pod, resp.Status)
	}
	return nil
}
