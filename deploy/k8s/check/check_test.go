package check

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
)

const base = ".."

func load(t *testing.T) (*Kustomization, []Object) {
	t.Helper()
	k, objs, err := LoadBase(base)
	if err != nil {
		t.Fatal(err)
	}
	return k, objs
}

func find[T any](t *testing.T, objs []Object, name string) T {
	t.Helper()
	for _, o := range objs {
		if v, ok := o.Value.(T); ok && o.Name == name {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T named %q", zero, name)
	return zero
}

// Every YAML file in the base is a resource of the kustomization, and
// every resource decodes strictly.
func TestBaseDecodesStrictly(t *testing.T) {
	k, objs := load(t)
	files, _ := filepath.Glob(filepath.Join(base, "*.yaml"))
	for _, f := range files {
		name := filepath.Base(f)
		if name != "kustomization.yaml" && !slices.Contains(k.Resources, name) {
			t.Errorf("%s is not listed in kustomization.yaml's resources", name)
		}
	}
	if len(objs) < 12 {
		t.Errorf("only %d objects decoded", len(objs))
	}
}

// The contextd Deployment: at least 2 replicas, probes on /readyz and
// /healthz, resources, keys from the Secret, a PDB and NetworkPolicies.
func TestContextd(t *testing.T) {
	k, objs := load(t)
	d := find[*appsv1.Deployment](t, objs, "contextd")
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v, want >= 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want cpu and memory requests and a memory limit", c.Resources)
	}
	if !slices.ContainsFunc(c.EnvFrom, func(e corev1.EnvFromSource) bool { return e.SecretRef != nil && e.SecretRef.Name == "contextd-secrets" }) {
		t.Error("contextd does not take its keys from the contextd-secrets Secret")
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("contextd may run as root")
	}
	sec := find[*corev1.Secret](t, objs, "contextd-secrets")
	for _, key := range []string{"CONTEXTD_POSTGRES_DSN", "CONTEXTD_API_KEY_DEFAULT", "QDRANT_API_KEY", "POSTGRES_PASSWORD"} {
		if _, ok := sec.StringData[key]; !ok {
			t.Errorf("the Secret has no %s", key)
		}
	}
	cm := find[*corev1.ConfigMap](t, objs, "contextd-config")
	for _, ref := range []string{"${CONTEXTD_POSTGRES_DSN}", "${QDRANT_API_KEY}", "${CONTEXTD_API_KEY_DEFAULT}"} {
		if !strings.Contains(cm.Data["agents.yaml"], ref) {
			t.Errorf("agents.yaml does not use %s", ref)
		}
	}
	if !slices.ContainsFunc(k.Images, func(i Image) bool { return i.Name == c.Image }) {
		t.Errorf("kustomization.yaml's images do not set the tag of %q", c.Image)
	}

	pdb := find[*policyv1.PodDisruptionBudget](t, objs, "contextd")
	if pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable == nil {
		t.Error("the PDB bounds nothing")
	}
	if pdb.Spec.Selector == nil || !matches(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Error("the PDB does not select contextd's pods")
	}
	if !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Error("the Deployment's selector does not match its pods")
	}
	svc := find[*corev1.Service](t, objs, "contextd")
	if !matches(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Error("the Service does not select contextd's pods")
	}
	np := find[*networkingv1.NetworkPolicy](t, objs, "contextd")
	if !matches(np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels) {
		t.Error("contextd's NetworkPolicy does not select its pods")
	}
}

// Postgres and Qdrant: StatefulSets on pinned images, reachable only from
// contextd (and the migration Job, for Postgres).
func TestStores(t *testing.T) {
	_, objs := load(t)
	pinned := regexp.MustCompile(`^[a-z0-9./-]+:v?\d+\.\d+(\.\d+)?$`)
	for _, name := range []string{"postgres", "qdrant"} {
		ss := find[*appsv1.StatefulSet](t, objs, name)
		for _, c := range ss.Spec.Template.Spec.Containers {
			if !pinned.MatchString(c.Image) {
				t.Errorf("%s: image %q is not pinned to a version", name, c.Image)
			}
			if c.ReadinessProbe == nil {
				t.Errorf("%s: no readiness probe", name)
			}
		}
		if len(ss.Spec.VolumeClaimTemplates) == 0 {
			t.Errorf("%s keeps no data", name)
		}
		np := find[*networkingv1.NetworkPolicy](t, objs, name)
		if !matches(np.Spec.PodSelector.MatchLabels, ss.Spec.Template.Labels) || len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) == 0 {
			t.Errorf("%s: its NetworkPolicy does not restrict who connects", name)
		}
	}
	q := find[*appsv1.StatefulSet](t, objs, "qdrant").Spec.Template.Spec.Containers[0]
	if !slices.ContainsFunc(q.Env, func(e corev1.EnvVar) bool {
		return e.Name == "QDRANT__SERVICE__API_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key == "QDRANT_API_KEY"
	}) {
		t.Error("Qdrant is not given the API key of the Secret")
	}
}

// The migration Job runs `contextd migrate` (a command the binary has) on
// the same image, config and Secret as the Deployment.
func TestMigrationJob(t *testing.T) {
	_, objs := load(t)
	j := find[*batchv1.Job](t, objs, "contextd-migrate")
	d := find[*appsv1.Deployment](t, objs, "contextd")
	c := j.Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "migrate" {
		t.Errorf("the Job runs %v, want migrate", c.Args)
	}
	if c.Image != d.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("the Job's image %q is not contextd's", c.Image)
	}
	main, err := os.ReadFile(filepath.Join("..", "..", "..", "cmd", "contextd", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(main), `case "migrate":`) {
		t.Error("contextd has no migrate command")
	}
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure && j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", j.Spec.Template.Spec.RestartPolicy)
	}
}

// A misspelled or mis-cased field, or a wrong kind, is an error, not
// silently dropped.
func TestMisspelledFieldFails(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(base, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode("deployment.yaml", raw); err != nil {
		t.Fatalf("the real file: %v", err)
	}
	for from, to := range map[string]string{
		"  replicas: 2":                 "  replcas: 2",
		"readinessProbe:":               "readinesProbe:",
		"  replicas: 2\n":               "  Replicas: 2\n",
		"terminationGracePeriodSeconds": "terminationGracePeriod",
		"apiVersion: apps/v1":           "apiVersion: apps/v2",
	} {
		bad := strings.Replace(string(raw), from, to, 1)
		if bad == string(raw) {
			t.Fatalf("%q is not in deployment.yaml", from)
		}
		if _, err := Decode("deployment.yaml", []byte(bad)); err == nil {
			t.Errorf("%q → %q decoded without error", from, to)
		} else {
			t.Logf("%q → %q: %v", strings.TrimSpace(from), strings.TrimSpace(to), err)
		}
	}
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
