// Package kubernetes checks the example manifests against the Kubernetes
// API types, since no cluster is reachable where the tests run: every
// document decodes strictly (an unknown or misplaced field fails) into
// its apps/v1 or core/v1 type, and the settings that must agree with each
// other and with the image do.
package kubernetes

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// decodeAll decodes each document of a manifest strictly into the type
// its apiVersion and kind name.
func decodeAll(t *testing.T, path string) (deployments []appsv1.Deployment, services []corev1.Service) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, doc := range bytes.Split(data, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%s: document %d: %v", path, i+1, err)
		}
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(doc, &d); err != nil {
				t.Fatalf("%s: document %d (Deployment): %v", path, i+1, err)
			}
			deployments = append(deployments, d)
		case "v1 Service":
			var s corev1.Service
			if err := yaml.UnmarshalStrict(doc, &s); err != nil {
				t.Fatalf("%s: document %d (Service): %v", path, i+1, err)
			}
			services = append(services, s)
		default:
			t.Fatalf("%s: document %d: %q %q is not checked here", path, i+1, meta.APIVersion, meta.Kind)
		}
	}
	return deployments, services
}

func TestDeployment(t *testing.T) {
	deployments, services := decodeAll(t, "deployment.yaml")
	if len(deployments) != 1 || len(services) != 1 {
		t.Fatalf("got %d Deployments and %d Services, want one of each", len(deployments), len(services))
	}
	d, svc := deployments[0], services[0]
	for _, name := range []string{d.Name, svc.Name} {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Errorf("name %q: %v", name, errs)
		}
	}
	pod := d.Spec.Template
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || !selector.Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Deployment's selector %v does not match its pods' labels %v (%v)", d.Spec.Selector, pod.Labels, err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Service's selector %v does not match the pods' labels %v", svc.Spec.Selector, pod.Labels)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}

	release, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "m0serve:" + strings.TrimSpace(string(release)); c.Image != want {
		t.Errorf("image %q, want %q (the VERSION file's release)", c.Image, want)
	}

	// The port the probes and the Service use is the one m0serve listens on.
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if port := env["M0_PORT"].Value; port != strconv.Itoa(int(ports["http"])) {
		t.Errorf("M0_PORT=%q, the container port named http is %d", port, ports["http"])
	}
	if _, ok := ports[svc.Spec.Ports[0].TargetPort.StrVal]; !ok {
		t.Errorf("the Service's targetPort %v names no container port", svc.Spec.Ports[0].TargetPort)
	}
	for name, probe := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if probe == nil || probe.HTTPGet == nil {
			t.Errorf("no %s probe over HTTP", name)
			continue
		}
		if _, ok := ports[probe.HTTPGet.Port.StrVal]; !ok {
			t.Errorf("the %s probe's port %v names no container port", name, probe.HTTPGet.Port)
		}
	}

	// Grace period = preStop sleep + graceful timeout + a little.
	graceful, err := time.ParseDuration(env["M0_GRACEFUL_TIMEOUT"].Value + "s")
	if err != nil {
		t.Fatalf("M0_GRACEFUL_TIMEOUT: %v", err)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		t.Fatal("no preStop exec hook")
	}
	command := c.Lifecycle.PreStop.Exec.Command
	if len(command) != 2 || command[0] != "sleep" {
		t.Fatalf("preStop runs %q, want sleep SECONDS", command)
	}
	sleep, err := strconv.Atoi(command[1])
	if err != nil {
		t.Fatalf("preStop sleep: %v", err)
	}
	grace := *pod.Spec.TerminationGracePeriodSeconds
	needed := int64(sleep) + int64(graceful/time.Second)
	if grace < needed || grace > needed+10 {
		t.Errorf("terminationGracePeriodSeconds %d, want preStop %d s + graceful %v and at most 10 s more", grace, sleep, graceful)
	}

	// WEB_CONCURRENCY is the CPU limit of this container in whole cores.
	ref := env["WEB_CONCURRENCY"].ValueFrom
	if ref == nil || ref.ResourceFieldRef == nil || ref.ResourceFieldRef.Resource != "limits.cpu" ||
		ref.ResourceFieldRef.ContainerName != c.Name || ref.ResourceFieldRef.Divisor.String() != "1" {
		t.Errorf("WEB_CONCURRENCY is %+v, want the container's limits.cpu with divisor 1", env["WEB_CONCURRENCY"])
	}
	for _, resource := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		request, limit := c.Resources.Requests[resource], c.Resources.Limits[resource]
		if request.IsZero() || limit.IsZero() || request.Cmp(limit) > 0 {
			t.Errorf("%s: request %v, limit %v: want both, the request no more than the limit", resource, &request, &limit)
		}
	}

	// A read-only root leaves the app a writable /tmp (uploads, tempfile).
	if c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem {
		emptyDirs := map[string]bool{}
		for _, v := range pod.Spec.Volumes {
			if v.EmptyDir != nil {
				emptyDirs[v.Name] = true
			}
		}
		tmp := false
		for _, m := range c.VolumeMounts {
			tmp = tmp || m.MountPath == "/tmp" && emptyDirs[m.Name] && !m.ReadOnly
		}
		if !tmp {
			t.Error("readOnlyRootFilesystem without a writable emptyDir at /tmp")
		}
	}

	// Non-root, as the Dockerfile's USER.
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || sc.RunAsGroup == nil {
		t.Fatal("the pod does not run as a named non-root user")
	}
	if user := "USER " + strconv.FormatInt(*sc.RunAsUser, 10) + ":" + strconv.FormatInt(*sc.RunAsGroup, 10); !bytes.Contains(dockerfile, []byte("\n"+user+"\n")) {
		t.Errorf("runAsUser/runAsGroup are not the Dockerfile's %q", user)
	}
}
