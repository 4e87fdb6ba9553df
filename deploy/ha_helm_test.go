package deploy_test

import (
	"strings"
	"testing"
)

var haValues = []string{"--set", "ha.enabled=true", "--set", "ha.litestream.enabled=false", "--set", "persistence.accessModes={ReadWriteMany}"}

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
	_, err := helm(t, append([]string{"template", "opsbot", chartDir}, append(slices(slackTokens), "--set", "ha.enabled=true", "--set", "ha.litestream.enabled=false")...)...)
	if err == nil || !strings.Contains(err.Error(), "ReadWriteMany") {
		t.Errorf("ha on a shared ReadWriteOnce claim: %v", err)
	}
}

// TestHelmHALitestream renders ha with the database replicated by a
// Litestream sidecar: no shared claim (each pod its own database on an
// emptyDir, no PersistentVolumeClaim), a native sidecar that only listens
// on its control socket, the binary copied for opsbot's restores, and the
// config's ha.litestream pointing at both. A file:// replica without its
// claim is refused in words.
func TestHelmHALitestream(t *testing.T) {
	args := append(slices(slackTokens), "--set", "ha.enabled=true", "--set", "ha.litestream.replica=s3://ops-bucket/opsbot")
	if out, err := helm(t, append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
		t.Fatalf("helm lint ha with litestream: %v\n%s", err, out)
	}
	docs := render(t, args...)
	for _, d := range docs {
		if str(get(d, "kind")) == "PersistentVolumeClaim" {
			t.Error("a PersistentVolumeClaim for the database: with a replica each pod keeps its own")
		}
	}
	dep := only(t, docs, "Deployment")
	spec := get(dep, "spec", "template", "spec")
	if r, _ := get(dep, "spec", "replicas").(int); r != 2 {
		t.Errorf("replicas %v, want 2", get(dep, "spec", "replicas"))
	}
	vols := map[string]any{}
	for _, v := range list(get(spec, "volumes")) {
		vols[str(get(v, "name"))] = v
	}
	if get(vols["data"], "emptyDir") == nil {
		t.Errorf("the data volume is %v, want an emptyDir per pod", vols["data"])
	}
	inits := list(get(spec, "initContainers"))
	if len(inits) != 2 {
		t.Fatalf("%d init containers, want the binary's copy and the sidecar", len(inits))
	}
	side := inits[1]
	if str(get(side, "restartPolicy")) != "Always" || strings.Join(strs(get(side, "args")), " ") != "replicate -config /etc/litestream/litestream.yml" {
		t.Errorf("the sidecar: %v", side)
	}
	mounts := func(c any) map[string]string {
		m := map[string]string{}
		for _, v := range list(get(c, "volumeMounts")) {
			m[str(get(v, "name"))] = str(get(v, "mountPath"))
		}
		return m
	}
	opsbot := get(spec, "containers", 0)
	if sm, om := mounts(side), mounts(opsbot); sm["data"] != "/data" || om["data"] != "/data" || sm["litestream-run"] != "/run/litestream" || om["litestream-run"] != "/run/litestream" || om["litestream-bin"] != "/opt/litestream" {
		t.Errorf("mounts: sidecar %v, opsbot %v", sm, om)
	}
	cm := only(t, docs, "ConfigMap")
	conf := str(get(cm, "data", "opsbot.yaml"))
	for _, want := range []string{"replica: s3://ops-bucket/opsbot", "socket: /run/litestream/litestream.sock", "bin: /opt/litestream/litestream"} {
		if !strings.Contains(conf, want) {
			t.Errorf("opsbot.yaml lacks %q:\n%s", want, conf)
		}
	}
	if ls := str(get(cm, "data", "litestream.yml")); !strings.Contains(ls, "path: /run/litestream/litestream.sock") {
		t.Errorf("litestream.yml:\n%s", ls)
	}
	_, err := helm(t, append([]string{"template", "opsbot", chartDir}, append(slices(slackTokens), "--set", "ha.enabled=true", "--set", "ha.litestream.replica=file:///var/replicas")...)...)
	if err == nil || !strings.Contains(err.Error(), "file:///replicas/") {
		t.Errorf("a file:// replica off the replicas claim: %v", err)
	}

	// ha.enabled alone: the sidecar, a file replica on a ReadWriteMany
	// claim the chart makes, the Role and the PDB.
	args = append(slices(slackTokens), "--set", "ha.enabled=true")
	if out, err := helm(t, append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
		t.Fatalf("helm lint ha.enabled=true: %v\n%s", err, out)
	}
	docs = render(t, args...)
	only(t, docs, "Role")
	only(t, docs, "PodDisruptionBudget")
	claim := only(t, docs, "PersistentVolumeClaim")
	if name, modes := str(get(claim, "metadata", "name")), strs(get(claim, "spec", "accessModes")); name != "opsbot-replicas" || strings.Join(modes, ",") != "ReadWriteMany" {
		t.Errorf("the replicas' claim: %s %v", name, modes)
	}
	spec = get(only(t, docs, "Deployment"), "spec", "template", "spec")
	if side := get(spec, "initContainers", 1); str(get(side, "name")) != "litestream" || mounts(side)["replicas"] != "/replicas" {
		t.Errorf("the sidecar with ha.enabled alone: %v", side)
	}
	if conf := str(get(only(t, docs, "ConfigMap"), "data", "opsbot.yaml")); !strings.Contains(conf, "replica: file:///replicas/opsbot") {
		t.Errorf("opsbot.yaml with ha.enabled alone:\n%s", conf)
	}
}
