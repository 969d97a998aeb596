package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListenAddr(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{":8765", "127.0.0.1:8765", ""},
		{"8765", "127.0.0.1:8765", ""},
		{"127.0.0.1:0", "127.0.0.1:0", ""},
		{"0.0.0.0:8765", "0.0.0.0:8765", ""},
		{"[::1]:8765", "[::1]:8765", ""},
		{"localhost:8765", "localhost:8765", ""},
		{"localhost", "", "[HOST]:PORT"},
		{"localhost:http", "", "not a number"},
		{":99999", "", "not a number"},
	} {
		got, err := listenAddr(c.in)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("listenAddr(%q) = %q, %v; want %q, error containing %q", c.in, got, err, c.want, c.err)
		}
	}
}

func TestHostAndOriginChecks(t *testing.T) {
	s := &httpServer{boundHost: "10.1.2.3", httpServe: httpServe{flags: &HTTPOptions{
		AllowHosts:   []string{"desktop-3.fleet.svc"},
		AllowOrigins: []string{"https://console.example.com"},
	}}}
	for _, c := range []struct {
		host string
		want bool
	}{
		{"localhost", true}, {"127.0.0.1", true}, {"127.9.9.9", true}, {"::1", true}, {"LOCALHOST.", true}, {"a.localhost", true},
		{"10.1.2.3", true}, {"desktop-3.fleet.svc", true}, {"DESKTOP-3.fleet.svc", true},
		{"evil.example.com", false}, {"10.1.2.4", false}, {"localhost.evil.com", false}, {"", false}, {"0.0.0.0", false},
	} {
		if got := s.hostAllowed(c.host); got != c.want {
			t.Errorf("hostAllowed(%q) = %v, want %v", c.host, got, c.want)
		}
	}
	wild := &httpServer{boundHost: "0.0.0.0", httpServe: httpServe{flags: &HTTPOptions{}}}
	if wild.hostAllowed("0.0.0.0") || wild.hostAllowed("10.1.2.3") {
		t.Errorf("a wildcard bind accepts any Host without --http-allow-host")
	}
	star := &httpServer{boundHost: "0.0.0.0", httpServe: httpServe{flags: &HTTPOptions{AllowHosts: []string{"*"}}}}
	if !star.hostAllowed("whatever.example") {
		t.Errorf("--http-allow-host * does not accept any Host")
	}
	for _, c := range []struct {
		origin, host string
		want         bool
	}{
		{"https://console.example.com", "127.0.0.1:8765", true},
		{"HTTPS://Console.Example.com/", "127.0.0.1:8765", true},
		{"http://127.0.0.1:8765", "127.0.0.1:8765", true},
		{"http://localhost:8765", "localhost:8765", true},
		{"http://localhost:8765", "127.0.0.1:8765", false},
		{"http://127.0.0.1:3000", "127.0.0.1:8765", false},
		{"https://console.example.com:444", "127.0.0.1:8765", false},
		{"null", "127.0.0.1:8765", false},
		{"http://127.0.0.1:8765/path", "127.0.0.1:8765", false},
		{"garbage", "127.0.0.1:8765", false},
	} {
		if got := s.originAllowed(c.origin, c.host); got != c.want {
			t.Errorf("originAllowed(%q, %q) = %v, want %v", c.origin, c.host, got, c.want)
		}
	}
}

func TestHTTPToken(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("DESKHAND_HTTP_TOKEN", "")
	tok, from, err := httpToken(&HTTPOptions{})
	if err != nil || len(tok) < 40 || !strings.HasSuffix(from, filepath.Join("deskhand", HTTPTokenFile)) {
		t.Fatalf("httpToken() = %d characters from %q, %v; want a generated token in the config directory", len(tok), from, err)
	}
	if fi, err := os.Stat(from); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	again, _, err := httpToken(&HTTPOptions{})
	if err != nil || again != tok {
		t.Errorf("a second start read %q, %v; want the same token", again, err)
	}
	t.Setenv("DESKHAND_HTTP_TOKEN", "from-the-environment-123")
	if env, from, err := httpToken(&HTTPOptions{}); err != nil || env != "from-the-environment-123" || from != "$DESKHAND_HTTP_TOKEN" {
		t.Errorf("httpToken() with the environment = %q from %q, %v", env, from, err)
	}
	// The flag wins over the environment; a file others can read is refused.
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("a-token-in-a-file-0123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := httpToken(&HTTPOptions{TokenFile: file}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("httpToken() with a 0644 file = %v; want a chmod 600 error", err)
	}
	os.Chmod(file, 0o600)
	if got, from, err := httpToken(&HTTPOptions{TokenFile: file}); err != nil || got != "a-token-in-a-file-0123" || from != file {
		t.Errorf("httpToken() with --http-token-file = %q from %q, %v", got, from, err)
	}
	if err := os.WriteFile(file, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := httpToken(&HTTPOptions{TokenFile: file}); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("httpToken() with a short token = %v; want an error", err)
	}
}
