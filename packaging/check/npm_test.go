package check

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// npmInstall installs tarballs (paths) into a fresh prefix the way a user's
// `npm install` would, but with an empty cache and --offline: our own
// packages come only from the local tarballs, and the platform packages
// that were not given cannot be fetched from anywhere, so npm must skip
// them as the optional dependencies they are.
func npmInstall(t *testing.T, tarballs ...string) string {
	t.Helper()
	prefix := t.TempDir()
	args := append([]string{"install", "--prefix", prefix, "--offline", "--cache", t.TempDir(),
		"--no-audit", "--no-fund", "--loglevel=error"}, tarballs...)
	run(t, prefix, "npm", args...)
	return prefix
}

// TestNPMTarballInstall: the launcher and the Linux x64 package, installed
// from their tarballs, give a working `npx deskhand`: --help prints
// deskhand's own help, and an MCP client on the launcher's stdio lists the
// tools and takes a screenshot with the helper the package carries.
func TestNPMTarballInstall(t *testing.T) {
	requireTool(t, "npm", "install Node.js 20 or later")
	requireDesktopTools(t)
	d := dist(t)
	v := version(t)
	prefix := npmInstall(t,
		filepath.Join(d, "npm", "deskhand-"+v+".tgz"),
		filepath.Join(d, "npm", "deskhand-linux-x64-"+v+".tgz"))

	for _, absent := range []string{"darwin-arm64", "darwin-x64", "linux-arm64"} {
		if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@deskhand", absent)); err == nil {
			t.Errorf("npm installed @deskhand/%s on linux/x64", absent)
		}
	}

	help := run(t, prefix, "npx", "--offline", "--no-install", "deskhand", "--help")
	if want := "deskhand " + v + " "; !strings.HasPrefix(help, want) {
		t.Errorf("npx deskhand --help starts %q, want %q", firstLine(help), want)
	}

	doctor := exec.Command("npx", "--offline", "--no-install", "deskhand", "doctor")
	doctor.Dir = prefix
	doctor.Env = isolatedEnv(t)
	checkDoctorHelper(t, doctor, filepath.Join(prefix, "node_modules", "@deskhand", "linux-x64", "bin"))

	cmd := exec.Command("npx", "--offline", "--no-install", "deskhand", "serve", "--virtual-display", "1280x800", "--state-dir", "none", "--allow", "xterm")
	cmd.Dir = prefix
	cmd.Env = isolatedEnv(t)
	checkServes(t, cmd, 1280, 800)
}

// TestNPMLauncherWithoutPlatformPackage: with the platform package missing
// (installed with --omit=optional, or a platform deskhand has no package
// for) the launcher says what is missing and what to do, and fails.
func TestNPMLauncherWithoutPlatformPackage(t *testing.T) {
	requireTool(t, "npm", "install Node.js 20 or later")
	d := dist(t)
	prefix := npmInstall(t, filepath.Join(d, "npm", "deskhand-"+version(t)+".tgz"))
	cmd := exec.Command("npx", "--offline", "--no-install", "deskhand", "--help")
	cmd.Dir = prefix
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("npx deskhand without its platform package succeeded:\n%s", out)
	}
	for _, want := range []string{"@deskhand/linux-x64", "is not installed", "DESKHAND_BINARY_PATH"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("launcher error %q does not say %q", out, want)
		}
	}
}

// TestNPMPackageManifests: the packed launcher depends, at exactly its own
// version, on a package for every platform, and each platform package
// declares the os and cpu npm selects it by and holds the binaries.
func TestNPMPackageManifests(t *testing.T) {
	requireTool(t, "tar", "install tar")
	d := dist(t)
	v := version(t)
	var platforms []struct {
		Package, OS, CPU string
		Helper           bool
	}
	readJSON(t, filepath.Join(repoRoot(t), "packaging", "npm", "platforms.json"), &platforms)

	var main struct {
		Name                 string
		Version              string
		MCPName              string `json:"mcpName"`
		Bin                  map[string]string
		OptionalDependencies map[string]string
	}
	json.Unmarshal([]byte(run(t, d, "tar", "-xOzf", filepath.Join(d, "npm", "deskhand-"+v+".tgz"), "package/package.json")), &main)
	if main.Name != "deskhand" || main.Version != v || main.Bin["deskhand"] != "bin/deskhand.js" {
		t.Errorf("launcher package is %s@%s with bin %v, want deskhand@%s with bin deskhand=bin/deskhand.js", main.Name, main.Version, main.Bin, v)
	}
	if main.MCPName != registryName {
		t.Errorf("mcpName %q, want %q (the MCP Registry checks it against server.json)", main.MCPName, registryName)
	}
	if len(main.OptionalDependencies) != len(platforms) {
		t.Errorf("optionalDependencies %v, want one per platform in platforms.json (%d)", main.OptionalDependencies, len(platforms))
	}
	for _, p := range platforms {
		if got := main.OptionalDependencies[p.Package]; got != v {
			t.Errorf("optionalDependencies[%s] = %q, want exactly %s", p.Package, got, v)
		}
		tarball := filepath.Join(d, "npm", strings.ReplaceAll(strings.TrimPrefix(p.Package, "@"), "/", "-")+"-"+v+".tgz")
		if _, err := os.Stat(tarball); err != nil {
			t.Logf("no %s: that platform was not built here", filepath.Base(tarball))
			continue
		}
		var pm struct {
			Name, Version string
			OS, CPU       []string
		}
		json.Unmarshal([]byte(run(t, d, "tar", "-xOzf", tarball, "package/package.json")), &pm)
		if pm.Name != p.Package || pm.Version != v || len(pm.OS) != 1 || pm.OS[0] != p.OS || len(pm.CPU) != 1 || pm.CPU[0] != p.CPU {
			t.Errorf("%s: package.json says %s@%s os %v cpu %v, want %s@%s os [%s] cpu [%s]", filepath.Base(tarball), pm.Name, pm.Version, pm.OS, pm.CPU, p.Package, v, p.OS, p.CPU)
		}
		files := run(t, d, "tar", "-tzvf", tarball)
		exe := ""
		if p.OS == "win32" {
			exe = ".exe"
		}
		want := []string{"package/bin/deskhand" + exe}
		if p.Helper {
			want = append(want, "package/bin/deskhand-helper"+exe, "package/bin/SHA256SUMS")
		}
		for _, f := range want {
			line := lineEnding(files, " "+f)
			if line == "" {
				t.Errorf("%s lacks %s:\n%s", filepath.Base(tarball), f, files)
			} else if !strings.HasSuffix(f, "SHA256SUMS") && !strings.HasPrefix(line, "-rwx") {
				t.Errorf("%s: %s is not executable: %s", filepath.Base(tarball), f, line)
			}
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lineEnding is the line of a listing that ends with suffix, or "".
func lineEnding(listing, suffix string) string {
	for _, line := range strings.Split(listing, "\n") {
		if strings.HasSuffix(line, suffix) {
			return line
		}
	}
	return ""
}
