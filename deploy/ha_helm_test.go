package deploy_test

import (
	"strings"
	"testing"
)

var haValues = []string{"--set", "ha.enabled=true", "--set", "persistence.accessModes={ReadWriteMany}"}

// TestHelmHA renders the chart with ha.enabled: two replicas rolled one
// at a time, spread over nodes, a PDB of minAvailable 1, a Role on the
// Lease bound to the pods' ServiceAccount, the pod's name and namespace
// from the downward API, and the config's ha section. helm lint --strict
// is clean, and without a shared claim the chart refuses in words.
func TestHelmHA(t *testing.T) {
	args := append(slices(slackTokens), haValues...)
	if out, err := helm(t, append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
		t.Fatalf("helm lint ha: %v\n%s", err, out)
	}
	docs := render(t, args...)
	dep := only(t, docs, "Deployment")
	if r, _ := get(dep, "spec", "replicas").(int); r != 2 {
		t.Errorf("replicas %v, want 2", get(dep, "spec", "replicas"))
	}
	if s := str(get(dep, "spec", "strategy", "type")); s != "RollingUpdate" {
		t.Errorf("strategy %q, want RollingUpdate", s)
	}
	if get(dep, "spec", "template", "spec", "affinity", "podAntiAffinity") == nil {
		t.Error("no pod anti-affinity: both pods may land on the node a drain takes")
	}
	if sa := str(get(dep, "spec", "template", "spec", "serviceAccountName")); sa != "opsbot" {
		t.Errorf("serviceAccountName %q", sa)
	}
	if n := get(only(t, docs, "PodDisruptionBudget"), "spec", "minAvailable"); n != 1 {
		t.Errorf("PDB minAvailable %v, want 1", n)
	}
	verbs := map[string]bool{}
	for _, r := range list(get(only(t, docs, "Role"), "rules")) {
		if strings.Join(strs(get(r, "resources")), ",") != "leases" || strings.Join(strs(get(r, "apiGroups")), ",") != "coordination.k8s.io" {
			t.Errorf("a rule not on leases: %v", r)
		}
		for _, v := range strs(get(r, "verbs")) {
			verbs[v] = true
		}
	}
	if !verbs["get"] || !verbs["create"] || !verbs["update"] || len(verbs) != 3 {
		t.Errorf("Role verbs %v, want get, create, update", verbs)
	}
	if sub := str(get(only(t, docs, "RoleBinding"), "subjects", 0, "name")); sub != "opsbot" {
		t.Errorf("RoleBinding subject %q", sub)
	}
	c := get(dep, "spec", "template", "spec", "containers", 0)
	env := map[string]string{}
	for _, e := range list(get(c, "env")) {
		env[str(get(e, "name"))] = str(get(e, "valueFrom", "fieldRef", "fieldPath"))
	}
	if env["POD_NAME"] != "metadata.name" || env["POD_NAMESPACE"] != "metadata.namespace" {
		t.Errorf("downward API env: POD_NAME %q, POD_NAMESPACE %q", env["POD_NAME"], env["POD_NAMESPACE"])
	}
	if conf := str(get(only(t, docs, "ConfigMap"), "data", "opsbot.yaml")); !strings.Contains(conf, "ha:\n  enabled: true") {
		t.Errorf("opsbot.yaml has no ha section:\n%s", conf)
	}
	_, err := helm(t, append([]string{"template", "opsbot", chartDir}, append(slices(slackTokens), "--set", "ha.enabled=true")...)...)
	if err == nil || !strings.Contains(err.Error(), "ReadWriteMany") {
		t.Errorf("ha on a ReadWriteOnce claim: %v", err)
	}
}
