package deploy_test

import (
	"maps"
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
	verbs := map[string]map[string]bool{"leases": {}, "pods": {}}
	for _, r := range list(get(only(t, docs, "Role"), "rules")) {
		res, group := strings.Join(strs(get(r, "resources")), ","), strings.Join(strs(get(r, "apiGroups")), ",")
		if !(res == "leases" && group == "coordination.k8s.io" || res == "pods" && group == "") {
			t.Errorf("a rule on neither the Lease nor the pods: %v", r)
			continue
		}
		for _, v := range strs(get(r, "verbs")) {
			verbs[res][v] = true
		}
	}
	if v := verbs["leases"]; !v["get"] || !v["create"] || !v["update"] || len(v) != 3 {
		t.Errorf("Role verbs on leases %v, want get, create, update", v)
	}
	if v := verbs["pods"]; !v["get"] || !v["patch"] || len(v) != 2 {
		t.Errorf("Role verbs on pods %v, want get, patch (a pod labels itself with its role)", v)
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

// TestHelmHARollsOutAndDrains: with ha.enabled the standby is Ready (its
// readiness is /healthz, not /readyz, which is 503 on a standby), so a
// rolling update and a drain under the PDB can take either pod; the
// Service selects the pod labelled leader, so HTTP traffic reaches the
// leader alone; the Role lets a pod label itself; the Litestream sidecar
// holds opsbot back until its control socket answers. Without ha nothing
// of this: readiness on /readyz, no role label in the selector.
func TestHelmHARollsOutAndDrains(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		sidecar  bool
		ready    string
		selector map[string]string
	}{
		{"ha with litestream", []string{"--set", "ha.enabled=true"}, true, "/healthz",
			map[string]string{"app.kubernetes.io/name": "opsbot", "app.kubernetes.io/instance": "opsbot", "opsbot.dev/role": "leader"}},
		{"ha on a shared claim", haValues, false, "/healthz",
			map[string]string{"app.kubernetes.io/name": "opsbot", "app.kubernetes.io/instance": "opsbot", "opsbot.dev/role": "leader"}},
		{"one pod", nil, false, "/readyz",
			map[string]string{"app.kubernetes.io/name": "opsbot", "app.kubernetes.io/instance": "opsbot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(slices(slackTokens), tc.args...)
			if out, err := helm(t, append([]string{"lint", "--strict", chartDir}, args...)...); err != nil {
				t.Fatalf("helm lint: %v\n%s", err, out)
			}
			docs := render(t, args...)
			spec := get(only(t, docs, "Deployment"), "spec", "template", "spec")
			if p := str(get(spec, "containers", 0, "readinessProbe", "httpGet", "path")); p != tc.ready {
				t.Errorf("readiness on %q, want %q", p, tc.ready)
			}
			if p := str(get(spec, "containers", 0, "livenessProbe", "httpGet", "path")); p != "/healthz" {
				t.Errorf("liveness on %q", p)
			}
			sel := map[string]string{}
			for k, v := range get(only(t, docs, "Service"), "spec", "selector").(map[string]any) {
				sel[k] = str(v)
			}
			if !maps.Equal(sel, tc.selector) {
				t.Errorf("the Service selects %v, want %v", sel, tc.selector)
			}
			// The pods themselves are selected without the role: the
			// Deployment and the PDB count both.
			if _, ok := get(only(t, docs, "Deployment"), "spec", "selector", "matchLabels").(map[string]any)["opsbot.dev/role"]; ok {
				t.Error("the Deployment selects on the role label")
			}
			if !tc.sidecar {
				return
			}
			if _, ok := get(only(t, docs, "PodDisruptionBudget"), "spec", "selector", "matchLabels").(map[string]any)["opsbot.dev/role"]; ok {
				t.Error("the PDB selects on the role label")
			}
			side := get(spec, "initContainers", 1)
			cmd := strings.Join(strs(get(side, "startupProbe", "exec", "command")), " ")
			if str(get(side, "name")) != "litestream" || cmd != "/usr/local/bin/litestream list -socket /run/litestream/litestream.sock -timeout 2" {
				t.Errorf("the sidecar's startup probe: %q on %v", cmd, get(side, "name"))
			}
		})
	}
}
