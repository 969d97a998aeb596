package check

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// clientFormat is what one client's documentation defines for its MCP
// config: the key holding the servers, the keys a server entry may have,
// and how a local and a remote entry are told apart.
type clientFormat struct {
	file    string
	topKey  string
	allowed []string // keys a server entry may have
	// typeKey, when set, must be in every entry and say the transport.
	typeKey string
	urlKey  string // the remote server's URL key ("" if remote entries are not documented)
}

var clientFormats = []clientFormat{
	{file: "claude-code.mcp.json", topKey: "mcpServers", allowed: []string{"type", "command", "args", "env", "url", "headers"}, urlKey: "url"},
	{file: "claude-desktop.json", topKey: "mcpServers", allowed: []string{"command", "args", "env"}},
	{file: "cursor.json", topKey: "mcpServers", allowed: []string{"type", "command", "args", "env", "envFile", "url", "headers"}, urlKey: "url"},
	{file: "vscode.json", topKey: "servers", allowed: []string{"type", "command", "args", "env", "envFile", "url", "headers"}, typeKey: "type", urlKey: "url"},
	{file: "windsurf.json", topKey: "mcpServers", allowed: []string{"command", "args", "env", "serverUrl", "headers", "disabled"}, urlKey: "serverUrl"},
	{file: "zed.json", topKey: "context_servers", allowed: []string{"command", "args", "env", "source", "enabled"}},
	{file: "codex.toml", topKey: "mcp_servers", allowed: []string{"command", "args", "env", "env_vars", "cwd", "startup_timeout_sec", "tool_timeout_sec", "enabled", "url", "bearer_token_env_var", "http_headers", "env_http_headers"}, urlKey: "url"},
}

// TestClientSnippets: every client's snippet parses, has only the keys
// that client documents, starts the npm package with `deskhand serve`
// flags deskhand really has, and points remote entries at the /mcp
// endpoint of an https URL with the token taken from outside the file.
func TestClientSnippets(t *testing.T) {
	flags := serveFlags(t)
	dir := filepath.Join(repoRoot(t), "packaging", "clients")
	for _, f := range clientFormats {
		t.Run(f.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, f.file))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if strings.HasSuffix(f.file, ".toml") {
				if _, err := toml.Decode(string(data), &doc); err != nil {
					t.Fatalf("parsing %s: %v", f.file, err)
				}
			} else {
				dec := json.NewDecoder(bytes.NewReader(data))
				if err := dec.Decode(&doc); err != nil {
					t.Fatalf("parsing %s: %v", f.file, err)
				}
			}
			servers, ok := doc[f.topKey].(map[string]any)
			if !ok || len(servers) == 0 {
				t.Fatalf("%s has no %q object of servers", f.file, f.topKey)
			}
			for key := range doc {
				if key != f.topKey && !(f.file == "vscode.json" && key == "inputs") {
					t.Errorf("%s: top-level key %q is not in the client's format", f.file, key)
				}
			}
			var local bool
			for name, v := range servers {
				entry, ok := v.(map[string]any)
				if !ok {
					t.Errorf("%s: server %q is not an object", f.file, name)
					continue
				}
				for key := range entry {
					if !slices.Contains(f.allowed, key) {
						t.Errorf("%s: server %q has key %q, which the client does not document (it has %v)", f.file, name, key, f.allowed)
					}
				}
				_, hasCmd := entry["command"]
				_, hasURL := entry[f.urlKey]
				if f.urlKey == "" {
					hasURL = false
				}
				if hasCmd == hasURL {
					t.Errorf("%s: server %q must have exactly one of command or %s", f.file, name, f.urlKey)
					continue
				}
				if f.typeKey != "" {
					want := "stdio"
					if hasURL {
						want = "http"
					}
					if entry[f.typeKey] != want {
						t.Errorf("%s: server %q has %s %v, want %q", f.file, name, f.typeKey, entry[f.typeKey], want)
					}
				}
				if typ, ok := entry["type"]; ok && typ != "stdio" && typ != "http" {
					t.Errorf("%s: server %q has type %v; deskhand serves stdio and http", f.file, name, typ)
				}
				// Claude Code refuses some names (computer-use is
				// reserved); the one the README registers works in every
				// client.
				if want := "deskhand"; name != want && name != want+"-remote" {
					t.Errorf("%s: server %q, want %q (or %q for a remote one)", f.file, name, want, want+"-remote")
				}
				if hasCmd {
					local = true
					checkLocalEntry(t, f.file, name, entry, flags)
				} else {
					checkRemoteEntry(t, f, name, entry, doc)
				}
			}
			if !local {
				t.Errorf("%s has no local (stdio) entry", f.file)
			}
		})
	}
	t.Run("claude-code.sh", func(t *testing.T) { checkClaudeCodeCommands(t, filepath.Join(dir, "claude-code.sh"), flags) })
}

// checkLocalEntry checks that an entry runs `npx -y deskhand serve` with
// flags `deskhand serve` has.
func checkLocalEntry(t *testing.T, file, name string, entry map[string]any, flags map[string]bool) {
	t.Helper()
	cmd, _ := entry["command"].(string)
	var args []string
	if raw, ok := entry["args"].([]any); ok {
		for _, a := range raw {
			s, ok := a.(string)
			if !ok {
				t.Errorf("%s: server %q has a non-string argument %v", file, name, a)
			}
			args = append(args, s)
		}
	} else if entry["args"] != nil {
		t.Errorf("%s: server %q args is not an array", file, name)
	}
	if env, ok := entry["env"]; ok {
		m, ok := env.(map[string]any)
		for _, v := range m {
			if _, isString := v.(string); !isString {
				ok = false
			}
		}
		if !ok {
			t.Errorf("%s: server %q env is not an object of strings", file, name)
		}
	}
	checkDeskhandCommand(t, file+": "+name, append([]string{cmd}, args...), flags)
}

func checkDeskhandCommand(t *testing.T, where string, argv []string, flags map[string]bool) {
	t.Helper()
	if len(argv) < 4 || argv[0] != "npx" || argv[1] != "-y" || argv[2] != "deskhand" || argv[3] != "serve" {
		t.Errorf("%s runs %q, want npx -y deskhand serve ...", where, argv)
		return
	}
	for _, a := range argv[4:] {
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
			if !flags[name] {
				t.Errorf("%s passes %s, which `deskhand serve` does not have", where, a)
			}
		}
	}
}

var tokenRef = regexp.MustCompile(`\$\{(env:|input:)?([A-Za-z0-9_-]+)\}`)

func checkRemoteEntry(t *testing.T, f clientFormat, name string, entry, doc map[string]any) {
	t.Helper()
	raw, _ := entry[f.urlKey].(string)
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path != "/mcp" {
		t.Errorf("%s: server %q URL %q, want https://HOST[:PORT]/mcp", f.file, name, raw)
	}
	if f.file == "codex.toml" {
		if entry["bearer_token_env_var"] != "DESKHAND_HTTP_TOKEN" {
			t.Errorf("%s: server %q bearer_token_env_var %v, want DESKHAND_HTTP_TOKEN", f.file, name, entry["bearer_token_env_var"])
		}
		return
	}
	headers, _ := entry["headers"].(map[string]any)
	auth, _ := headers["Authorization"].(string)
	m := tokenRef.FindStringSubmatch(auth)
	if !strings.HasPrefix(auth, "Bearer ") || m == nil {
		t.Errorf("%s: server %q Authorization header %q, want Bearer and a ${...} reference, not a token", f.file, name, auth)
		return
	}
	if m[1] == "input:" {
		var declared bool
		inputs, _ := doc["inputs"].([]any)
		for _, in := range inputs {
			in, _ := in.(map[string]any)
			if in["id"] == m[2] {
				declared = in["type"] == "promptString" && in["password"] == true && in["description"] != nil
			}
		}
		if !declared {
			t.Errorf("%s: ${input:%s} has no promptString input with password true and a description", f.file, m[2])
		}
	} else if m[2] != "DESKHAND_HTTP_TOKEN" {
		t.Errorf("%s: server %q reads the token from %s, want DESKHAND_HTTP_TOKEN", f.file, name, m[2])
	}
}

// checkClaudeCodeCommands checks each `claude mcp add` line: options
// before the server name, then -- and the command for a local server, or
// --transport http, a URL and an Authorization header for a remote one.
func checkClaudeCodeCommands(t *testing.T, path string, flags map[string]bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		words := shellWords(t, line)
		if len(words) < 4 || words[0] != "claude" || words[1] != "mcp" || words[2] != "add" {
			t.Errorf("%q is not a `claude mcp add` command", line)
			continue
		}
		rest := words[3:]
		opts := map[string]string{}
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "--" {
			if len(rest) < 2 {
				t.Errorf("%q: option %s has no value", line, rest[0])
				break
			}
			opts[rest[0]] = rest[1]
			rest = rest[2:]
		}
		if len(rest) < 2 || rest[0] != "deskhand" {
			t.Errorf("%q: want the server name deskhand after the options", line)
			continue
		}
		switch opts["--transport"] {
		case "":
			if rest[1] != "--" {
				t.Errorf("%q: a local server's command follows --", line)
				continue
			}
			checkDeskhandCommand(t, line, rest[2:], flags)
		case "http":
			u, err := url.Parse(rest[1])
			if err != nil || u.Scheme != "https" || u.Path != "/mcp" || len(rest) != 2 {
				t.Errorf("%q: want one https://HOST[:PORT]/mcp URL after the name", line)
			}
			if h := opts["--header"]; h != "Authorization: Bearer $DESKHAND_HTTP_TOKEN" {
				t.Errorf("%q: --header %q, want the token from $DESKHAND_HTTP_TOKEN", line, h)
			}
		default:
			t.Errorf("%q: --transport %s; deskhand serves stdio and http", line, opts["--transport"])
		}
	}
	if n == 0 {
		t.Errorf("%s has no commands", path)
	}
}

// shellWords splits a line as sh would for plain words and double-quoted
// strings (all these snippets use).
func shellWords(t *testing.T, line string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
			inWord = true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Errorf("%q has an unterminated quote", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// serveFlags are the flags `deskhand help serve` documents, from the
// real binary (bin/deskhand, built by make build).
func serveFlags(t *testing.T) map[string]bool {
	t.Helper()
	bin := filepath.Join(repoRoot(t), "bin", "deskhand")
	if _, err := os.Stat(bin); err != nil {
		need(t, "no %s: run make build", bin)
	}
	return serveFlagsOf(t, bin)
}

// serveFlagsOf is serveFlags of another deskhand binary.
func serveFlagsOf(t *testing.T, bin string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(bin, "help", "serve").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if !flags["virtual-display"] {
		t.Fatalf("`%s help serve` lists no -virtual-display flag:\n%s", bin, out)
	}
	return flags
}
