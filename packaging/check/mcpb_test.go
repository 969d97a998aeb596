package check

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// mcpbManifest is the part of an MCP Bundle manifest a host reads to start
// the server.
type mcpbManifest struct {
	ManifestVersion string `json:"manifest_version"`
	Name            string
	Version         string
	Server          struct {
		Type       string
		EntryPoint string `json:"entry_point"`
		MCPConfig  struct {
			mcpbCommand
			PlatformOverrides map[string]mcpbCommand `json:"platform_overrides"`
		} `json:"mcp_config"`
	}
	Compatibility struct{ Platforms []string }
	UserConfig    map[string]struct {
		Type    string
		Default any
	} `json:"user_config"`
}

type mcpbCommand struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// TestMCPBManifestValidates: the official mcpb CLI accepts the manifest,
// and rejects it with a key the spec does not define, so the check is the
// spec's and not a formality.
func TestMCPBManifestValidates(t *testing.T) {
	requireTool(t, "node", "install Node.js 20 or later")
	cli := mcpbCLI(t)
	manifest := filepath.Join(repoRoot(t), "packaging", "mcpb", "manifest.json")
	run(t, "", cli, "validate", manifest)

	var m map[string]any
	readJSON(t, manifest, &m)
	if m["version"] != version(t) {
		t.Errorf("manifest version %v, want supervisor.Version %s", m["version"], version(t))
	}
	server := m["server"].(map[string]any)
	server["entrypoint"] = server["entry_point"]
	delete(server, "entry_point")
	bad := filepath.Join(t.TempDir(), "manifest.json")
	data, _ := json.Marshal(m)
	os.WriteFile(bad, data, 0o644)
	out, err := exec.Command(cli, "validate", bad).CombinedOutput()
	if err == nil {
		t.Errorf("mcpb validate accepted a manifest with server.entrypoint for entry_point:\n%s", out)
	}
}

// TestMCPBBundle: the packed bundle holds the entry point and every
// platform's binaries, each built for its OS and CPU; started the way a
// host starts it (the manifest's command for this OS, with ${__dirname}
// and the user_config defaults filled in, virtual_display set by the
// user), it serves MCP and screenshots the private desktop with the
// helper it carries.
func TestMCPBBundle(t *testing.T) {
	requireTool(t, "node", "install Node.js 20 or later")
	requireDesktopTools(t)
	cli := mcpbCLI(t)
	bundle := filepath.Join(dist(t), "deskhand-"+version(t)+".mcpb")
	dir := t.TempDir()
	run(t, "", cli, "unpack", bundle, dir)

	var m mcpbManifest
	readJSON(t, filepath.Join(dir, "manifest.json"), &m)
	if m.Version != version(t) || m.Server.Type != "binary" {
		t.Errorf("bundle manifest: version %q type %q, want %s binary", m.Version, m.Server.Type, version(t))
	}
	checkExecutable(t, filepath.Join(dir, m.Server.EntryPoint))

	platforms, _ := filepath.Glob(filepath.Join(dir, "server", "*-*"))
	found := map[string]bool{}
	for _, p := range platforms {
		found[filepath.Base(p)] = true
	}
	for _, want := range []string{"linux-x64", "darwin-arm64", "darwin-x64"} {
		if !found[want] {
			t.Errorf("bundle lacks server/%s (has %v)", want, platforms)
		}
	}
	for plat := range found {
		exe, helper := "deskhand", "deskhand-helper"
		if strings.HasPrefix(plat, "win32-") {
			exe, helper = "deskhand.exe", "deskhand-helper.exe"
		}
		checkExecutable(t, filepath.Join(dir, "server", plat, exe))
		checkBinaryPlatform(t, filepath.Join(dir, "server", plat, exe), plat)
		if !strings.HasPrefix(plat, "darwin-") {
			checkExecutable(t, filepath.Join(dir, "server", plat, helper))
			checkBinaryPlatform(t, filepath.Join(dir, "server", plat, helper), plat)
		}
	}
	for _, p := range m.Compatibility.Platforms {
		ok := false
		for plat := range found {
			ok = ok || strings.HasPrefix(plat, p+"-")
		}
		if !ok {
			t.Errorf("compatibility.platforms lists %s but the bundle has no build for it", p)
		}
	}

	doctor := exec.Command(filepath.Join(dir, m.Server.EntryPoint), "doctor")
	doctor.Env = isolatedEnv(t)
	checkDoctorHelper(t, doctor, filepath.Join(dir, "server", "linux-x64"))

	cmd := hostCommand(t, m, dir, map[string]string{"virtual_display": "1280x800"})
	cmd.Args = append(cmd.Args, "--state-dir", "none", "--allow", "xterm")
	cmd.Env = isolatedEnv(t)
	checkServes(t, cmd, 1280, 800)
}

// hostCommand builds the command an MCP Bundle host runs: the platform
// override for this OS replaces the fields it gives, ${__dirname} is the
// unpacked bundle, and ${user_config.KEY} is the user's value or the
// field's default.
func hostCommand(t *testing.T, m mcpbManifest, dir string, user map[string]string) *exec.Cmd {
	t.Helper()
	c := m.Server.MCPConfig.mcpbCommand
	if o, ok := m.Server.MCPConfig.PlatformOverrides[runtime.GOOS]; ok {
		if o.Command != "" {
			c.Command = o.Command
		}
		if o.Args != nil {
			c.Args = o.Args
		}
		if o.Env != nil {
			c.Env = o.Env
		}
	}
	ref := regexp.MustCompile(`\$\{([a-zA-Z_.]+)\}`)
	subst := func(s string) string {
		return ref.ReplaceAllStringFunc(s, func(v string) string {
			key := v[2 : len(v)-1]
			if key == "__dirname" {
				return dir
			}
			field, ok := strings.CutPrefix(key, "user_config.")
			uc, declared := m.UserConfig[field]
			if !ok || !declared {
				t.Fatalf("manifest uses %s, which is neither ${__dirname} nor a declared user_config field", v)
			}
			if val, ok := user[field]; ok {
				return val
			}
			if s, ok := uc.Default.(string); ok {
				return s
			}
			t.Fatalf("user_config.%s has no string default and the test gave no value", field)
			return ""
		})
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = subst(a)
	}
	cmd := exec.Command(subst(c.Command), args...)
	for k, v := range c.Env {
		cmd.Env = append(cmd.Env, k+"="+subst(v))
	}
	return cmd
}

func checkExecutable(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("bundle lacks %s: %v", path, err)
		return
	}
	if fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("%s is not executable (mode %v): a host could not start it", path, fi.Mode())
	}
}

// checkBinaryPlatform checks a binary's format and CPU against the
// <os>-<cpu> directory it is in.
func checkBinaryPlatform(t *testing.T, path, plat string) {
	t.Helper()
	osName, cpu, _ := strings.Cut(plat, "-")
	switch osName {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			t.Errorf("%s is not an ELF binary: %v", path, err)
			return
		}
		defer f.Close()
		want := map[string]elf.Machine{"x64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[cpu]
		if f.Machine != want {
			t.Errorf("%s is built for %v, want %v", path, f.Machine, want)
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			t.Errorf("%s is not a Mach-O binary: %v", path, err)
			return
		}
		defer f.Close()
		want := map[string]macho.Cpu{"x64": macho.CpuAmd64, "arm64": macho.CpuArm64}[cpu]
		if f.Cpu != want {
			t.Errorf("%s is built for %v, want %v", path, f.Cpu, want)
		}
	case "win32":
		f, err := pe.Open(path)
		if err != nil {
			t.Errorf("%s is not a PE binary: %v", path, err)
			return
		}
		defer f.Close()
		want := map[string]uint16{"x64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[cpu]
		if f.Machine != want {
			t.Errorf("%s is built for machine %#x, want %#x", path, f.Machine, want)
		}
	default:
		t.Errorf("unknown platform directory %s", plat)
	}
}
