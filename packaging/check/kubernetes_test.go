package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// externalSecrets are the Secrets the manifest uses but does not define,
// because the operator makes them (deploy/README.md).
var externalSecrets = []string{"deskhand-tls"}

// k8sObjects are the objects of a manifest, each decoded strictly into
// its Kubernetes API type.
type k8sObjects struct {
	secrets      map[string]*corev1.Secret
	services     map[string]*corev1.Service
	statefulSets map[string]*appsv1.StatefulSet
}

// decodeManifest decodes every document of a multi-document YAML
// manifest strictly, as the API server's strict field validation does: a
// field the API type lacks (matched case-sensitively, unlike
// encoding/json), a duplicate key, a value of the wrong type or a
// malformed quantity is an error.
func decodeManifest(data []byte) (*k8sObjects, error) {
	objs := &k8sObjects{secrets: map[string]*corev1.Secret{}, services: map[string]*corev1.Service{}, statefulSets: map[string]*appsv1.StatefulSet{}}
	for i, doc := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(data), -1) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if tm.Kind == "" && strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var meta *metav1.ObjectMeta
		var err error
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 Secret":
			o := &corev1.Secret{}
			err, meta = strictDecode(doc, o), &o.ObjectMeta
			objs.secrets[o.Name] = o
		case "v1 Service":
			o := &corev1.Service{}
			err, meta = strictDecode(doc, o), &o.ObjectMeta
			objs.services[o.Name] = o
		case "apps/v1 StatefulSet":
			o := &appsv1.StatefulSet{}
			err, meta = strictDecode(doc, o), &o.ObjectMeta
			objs.statefulSets[o.Name] = o
		default:
			return nil, fmt.Errorf("document %d: %s %s is not a kind this check knows", i+1, tm.APIVersion, tm.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
		}
		if errs := validation.IsDNS1123Subdomain(meta.Name); len(errs) > 0 {
			return nil, fmt.Errorf("document %d (%s): name %q: %s", i+1, tm.Kind, meta.Name, strings.Join(errs, "; "))
		}
	}
	return objs, nil
}

// strictDecode decodes one YAML document into an API object the way the
// API server's strict field validation does.
func strictDecode(doc string, obj any) error {
	data, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(data, obj)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return errors.Join(strict...)
	}
	return nil
}

func stripComments(doc string) string {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")
}

// TestKubernetesManifest: deploy/kubernetes/deskhand.yaml decodes strictly
// into the Kubernetes API types and hangs together: a headless Service
// that selects the StatefulSet's pods and targets a container port, one
// desktop container per pod running `deskhand serve --http` on a
// non-loopback address with TLS and the token from the Secret, every
// $(VAR) in its arguments defined, every mount backed by a volume and
// every Secret it names defined here or made by the operator.
func TestKubernetesManifest(t *testing.T) {
	path := filepath.Join(repoRoot(t), "deploy", "kubernetes", "deskhand.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeManifest(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, p := range checkFleet(objs, version(t)) {
		t.Errorf("%s: %s", path, p)
	}
	for _, ss := range objs.statefulSets {
		checkArgsAgainstServe(t, "StatefulSet "+ss.Name, ss.Spec.Template.Spec.Containers[0].Args)
	}
}

// TestKubernetesManifestRefusals: the checks are real: a misspelt field,
// a bad quantity, a selector that misses the pods, a Secret that does not
// exist and an undefined $(VAR) are each caught.
func TestKubernetesManifestRefusals(t *testing.T) {
	path := filepath.Join(repoRoot(t), "deploy", "kubernetes", "deskhand.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, old, new string }{
		{"misspelt field", "serviceName: deskhand", "servicename: deskhand"},
		{"unknown field", "  replicas: 3\n", "  replica: 3\n"},
		{"duplicate key", "  replicas: 3\n", "  replicas: 3\n  replicas: 4\n"},
		{"bad quantity", "memory: 2Gi", "memory: two-gigabytes"},
		{"selector misses the pods", "    app.kubernetes.io/component: desktop\n  ports:", "    app.kubernetes.io/component: browser\n  ports:"},
		{"unknown Secret", "name: deskhand-token\n                  key: token", "name: deskhand-tokens\n                  key: token"},
		{"undefined variable", "$(POD_NAME).deskhand\n", "$(POD_NAM).deskhand\n"},
		{"plain HTTP beyond the pod", "            - --tls-cert\n            - /etc/deskhand/tls/tls.crt\n            - --tls-key\n            - /etc/deskhand/tls/tls.key\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(data), c.old) {
				t.Fatalf("the manifest no longer contains %q: update this case", c.old)
			}
			bad := strings.Replace(string(data), c.old, c.new, 1)
			objs, err := decodeManifest([]byte(bad))
			if err != nil {
				t.Logf("refused: %v", err)
				return
			}
			problems := checkFleet(objs, version(t))
			if len(problems) == 0 {
				t.Errorf("the check accepted the manifest with %s", c.name)
			}
			t.Logf("refused: %v", problems)
		})
	}
}

// checkFleet returns what is wrong with a fleet's objects.
func checkFleet(objs *k8sObjects, version string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(objs.statefulSets) != 1 {
		bad("want one StatefulSet, have %d", len(objs.statefulSets))
		return problems
	}
	for _, ss := range objs.statefulSets {
		pod := ss.Spec.Template
		sel, err := metav1.LabelSelectorAsSelector(ss.Spec.Selector)
		if err != nil || ss.Spec.Selector == nil || !sel.Matches(labels.Set(pod.Labels)) {
			bad("StatefulSet %s: selector %v does not match its pod labels %v", ss.Name, ss.Spec.Selector, pod.Labels)
		}
		svc, ok := objs.services[ss.Spec.ServiceName]
		if !ok {
			bad("StatefulSet %s: serviceName %q is not a Service in the manifest", ss.Name, ss.Spec.ServiceName)
		} else {
			if svc.Spec.ClusterIP != corev1.ClusterIPNone {
				bad("Service %s: clusterIP %q, want None: each desktop needs its own DNS name, not a load-balanced address", svc.Name, svc.Spec.ClusterIP)
			}
			if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				bad("Service %s: selector %v does not select the StatefulSet's pods %v", svc.Name, svc.Spec.Selector, pod.Labels)
			}
		}
		if len(pod.Spec.Containers) != 1 {
			bad("StatefulSet %s: want one desktop container per pod, have %d", ss.Name, len(pod.Spec.Containers))
			continue
		}
		c := pod.Spec.Containers[0]
		if !strings.HasSuffix(c.Image, ":"+version) {
			bad("container %s: image %q, want the tag %s", c.Name, c.Image, version)
		}
		ports := map[string]int32{}
		for _, p := range c.Ports {
			if errs := validation.IsValidPortName(p.Name); len(errs) > 0 {
				bad("container %s: port name %q: %s", c.Name, p.Name, strings.Join(errs, "; "))
			}
			ports[p.Name] = p.ContainerPort
		}
		if svc != nil {
			for _, sp := range svc.Spec.Ports {
				tp := sp.TargetPort
				if _, named := ports[tp.StrVal]; tp.StrVal != "" && !named {
					bad("Service %s: targetPort %q is not a port of container %s", svc.Name, tp.StrVal, c.Name)
				}
			}
		}
		for _, probe := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
			if probe == nil {
				bad("container %s: want readiness and liveness probes", c.Name)
				continue
			}
			if probe.TCPSocket != nil && probe.TCPSocket.Port.StrVal != "" {
				if _, ok := ports[probe.TCPSocket.Port.StrVal]; !ok {
					bad("container %s: probe port %q is not a container port", c.Name, probe.TCPSocket.Port.StrVal)
				}
			}
		}

		env := map[string]corev1.EnvVar{}
		for _, e := range c.Env {
			env[e.Name] = e
			if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
				checkSecretKey(objs, r.SecretKeyRef.Name, r.SecretKeyRef.Key, bad)
			}
		}
		if e, ok := env["DESKHAND_HTTP_TOKEN"]; !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			bad("container %s: DESKHAND_HTTP_TOKEN must come from a Secret", c.Name)
		}
		for _, a := range c.Args {
			for _, m := range regexp.MustCompile(`\$\(([A-Za-z0-9_]+)\)`).FindAllStringSubmatch(a, -1) {
				if _, ok := env[m[1]]; !ok {
					bad("container %s: argument %q uses $(%s), which is not in its env: Kubernetes would pass it literally", c.Name, a, m[1])
				}
			}
		}
		checkServeArgs(c, ports, bad)

		volumes := map[string]corev1.Volume{}
		for _, v := range pod.Spec.Volumes {
			volumes[v.Name] = v
			if v.Secret != nil {
				checkSecretKey(objs, v.Secret.SecretName, "", bad)
			}
		}
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok {
				bad("container %s: mount %s names no volume", c.Name, m.Name)
			}
		}
	}
	return problems
}

// checkServeArgs checks the container's deskhand command line: HTTP on a
// container port beyond loopback (the pod is reached from outside it),
// so with TLS, and a virtual display, since a pod has no screen.
func checkServeArgs(c corev1.Container, ports map[string]int32, bad func(string, ...any)) {
	args := c.Args
	if len(args) == 0 || args[0] != "serve" {
		bad("container %s: args %q, want serve ...", c.Name, args)
		return
	}
	flag := func(name string) (string, bool) {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			return "", false
		}
		return args[i+1], true
	}
	addr, ok := flag("--http")
	if !ok {
		bad("container %s: no --http ADDR", c.Name)
	} else {
		host, port, _ := strings.Cut(addr, ":")
		if host == "" || host == "127.0.0.1" || host == "localhost" {
			bad("container %s: --http %s listens on loopback only: nothing outside the pod could reach it", c.Name, addr)
		}
		var found bool
		for _, p := range ports {
			found = found || fmt.Sprint(p) == port
		}
		if !found {
			bad("container %s: --http port %s is not a container port %v", c.Name, port, ports)
		}
	}
	_, cert := flag("--tls-cert")
	_, key := flag("--tls-key")
	if !cert || !key {
		bad("container %s: --http beyond loopback needs --tls-cert and --tls-key (deskhand refuses plain HTTP there)", c.Name)
	}
	if v, ok := flag("--virtual-display"); !ok || !regexp.MustCompile(`^[0-9]+x[0-9]+$`).MatchString(v) {
		bad("container %s: want --virtual-display WIDTHxHEIGHT: a pod has no screen of its own", c.Name)
	}
}

func checkSecretKey(objs *k8sObjects, name, key string, bad func(string, ...any)) {
	if slices.Contains(externalSecrets, name) {
		return
	}
	s, ok := objs.secrets[name]
	if !ok {
		bad("Secret %q is neither in the manifest nor one the operator makes (%v)", name, externalSecrets)
		return
	}
	if key == "" {
		return
	}
	_, inData := s.Data[key]
	_, inString := s.StringData[key]
	if !inData && !inString {
		bad("Secret %s has no key %q", name, key)
	}
}
