package check

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaudeCodeRegistersTheREADMECommand runs the README's first
// `claude mcp add` command with the real Claude Code CLI (pinned in
// packaging/tools) against bin/deskhand, then `claude mcp list`, which
// starts the server and completes the MCP handshake, and wants it
// connected. Claude Code refuses some names (computer-use is reserved), so
// this is what shows that the README's name works. It runs with a fresh
// HOME, no Anthropic credentials and, where a network namespace can be
// made, no network: a new user can register deskhand before logging in.
func TestClaudeCodeRegistersTheREADMECommand(t *testing.T) {
	requireDesktopTools(t) // no DISPLAY: serve starts a private desktop
	root := repoRoot(t)
	claude := filepath.Join(root, "packaging", "tools", "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		need(t, "the pinned Claude Code CLI is not installed at %s: run `make package-tools`", claude)
	}
	// make build puts the helper beside deskhand, where serve finds it.
	for _, name := range []string{"deskhand", "deskhand-helper"} {
		if _, err := os.Stat(filepath.Join(root, "bin", name)); err != nil {
			need(t, "no bin/%s: run make build", name)
		}
	}
	add := readmeClaudeAdd(t, root)

	var env []string
	for _, kv := range isolatedEnv(t) {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE_") {
			continue // no login of the machine's user reaches the CLI
		}
		env = append(env, kv)
	}
	env = append(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"MCP_TIMEOUT=60000") // a shared test machine may be slow to start Xvfb
	project := t.TempDir()
	offline := offlinePrefix(t)
	claudeCmd := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		argv := append(append(append([]string{}, offline...), claude), args...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = project, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := claudeCmd(add...); err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(add, " "), err, out)
	}
	out, err := claudeCmd("mcp", "list")
	if err != nil {
		t.Fatalf("claude mcp list: %v\n%s", err, out)
	}
	bin := filepath.Join(root, "bin", "deskhand")
	var line string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "deskhand: "+bin+" serve") {
			line = l
		}
	}
	if line == "" || !strings.Contains(line, "Connected") {
		t.Errorf("claude mcp list does not show deskhand (%s serve) connected:\n%s", bin, out)
	}
}

// readmeClaudeAdd is the README's first `claude mcp add NAME -- ...`
// command, as the arguments of claude, with $PWD the checkout (the README
// runs it from there).
func readmeClaudeAdd(t *testing.T, root string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "claude mcp add ") || !strings.Contains(line, " -- ") {
			continue
		}
		line, _, _ = strings.Cut(line, " #")
		words := shellWords(t, line)
		for i := range words {
			words[i] = strings.ReplaceAll(words[i], "$PWD", root)
		}
		return words[1:]
	}
	t.Fatal("README.md has no `claude mcp add NAME -- COMMAND` line")
	return nil
}

// offlinePrefix is the command that runs the CLI without a network (a
// network namespace of its own), or nothing where none can be made (a
// container without the privilege); the test then relies on Claude Code's
// own switches against nonessential traffic.
func offlinePrefix(t *testing.T) []string {
	t.Helper()
	for _, prefix := range [][]string{{"unshare", "-n"}, {"unshare", "-rn"}} {
		if exec.Command(prefix[0], append(prefix[1:], "true")...).Run() == nil {
			return prefix
		}
	}
	t.Log("cannot make a network namespace here; running the Claude Code CLI with the network it has")
	return nil
}
