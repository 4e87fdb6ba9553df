package leader_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsbot/opsbot/store/leader"
)

// TestLabelPod: the Client sets one label on a pod by a merge patch with
// the account's token; the pod's other labels stay, an unknown pod is
// ErrNoPod, and a wrong token is refused.
func TestLabelPod(t *testing.T) {
	t.Parallel()
	api, dir, env := cluster(t)
	c, err := leader.InCluster(dir, "ops", "opsbot", env)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.LabelPod(ctx, "opsbot-a", "opsbot.dev/role", "leader"); !errors.Is(err, leader.ErrNoPod) {
		t.Fatalf("label an unknown pod: %v, want ErrNoPod", err)
	}
	api.AddPod("ops", "opsbot-a")
	api.AddPod("other", "opsbot-b")
	for _, role := range []string{"standby", "leader"} {
		if err := c.LabelPod(ctx, "opsbot-a", "opsbot.dev/role", role); err != nil {
			t.Fatalf("label opsbot-a %s: %v", role, err)
		}
	}
	if err := c.LabelPod(ctx, "opsbot-a", "app", "opsbot"); err != nil {
		t.Fatal(err)
	}
	if got, _ := api.PodLabels("ops", "opsbot-a"); !maps.Equal(got, map[string]string{"opsbot.dev/role": "leader", "app": "opsbot"}) {
		t.Errorf("opsbot-a's labels: %v", got)
	}
	cost := "controller.kubernetes.io/pod-deletion-cost"
	if err := c.PatchPod(ctx, "opsbot-a", map[string]string{"opsbot.dev/role": "leader"}, map[string]string{cost: "1000"}); err != nil {
		t.Fatal(err)
	}
	if err := c.PatchPod(ctx, "opsbot-a", map[string]string{"app": "opsbot"}, map[string]string{"note": "kept"}); err != nil {
		t.Fatal(err)
	}
	if got := api.PodAnnotations("ops", "opsbot-a"); !maps.Equal(got, map[string]string{cost: "1000", "note": "kept"}) {
		t.Errorf("opsbot-a's annotations: %v", got)
	}
	if got, _ := api.PodLabels("other", "opsbot-b"); len(got) != 0 {
		t.Errorf("a pod in another namespace was labelled: %v", got)
	}

	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = c.LabelPod(ctx, "opsbot-a", "opsbot.dev/role", "standby")
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong token: %v, want the API server's 401", err)
	}
	if got, _ := api.PodLabels("ops", "opsbot-a"); got["opsbot.dev/role"] != "leader" {
		t.Errorf("a refused patch changed the label: %v", got)
	}
}
