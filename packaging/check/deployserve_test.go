package check

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDeployCommandsServe runs the exact command lines of the container
// image (CMD) and of the Kubernetes pods (args, with $(POD_NAME) and
// $(POD_NAMESPACE) filled in as the kubelet does) with the binaries the
// image copies, on this machine: no container engine runs here, so this
// is the closest check that those arguments start a working server. Each
// must serve MCP over HTTPS to a client with the token and the desktop's
// name, and refuse one without the token (401) or that names another
// desktop in Host (403).
func TestDeployCommandsServe(t *testing.T) {
	requireDesktopTools(t)
	bin := filepath.Join(dist(t), "bin", "linux-x64", "deskhand")
	if !serveFlagsOf(t, bin)["http"] {
		t.Skipf("%s has no --http yet (Streamable HTTP lands separately): nothing to serve the deploy commands with", bin)
	}

	var cmd []string
	for _, i := range parseContainerfile(t, filepath.Join(repoRoot(t), "deploy", "Containerfile")) {
		if i.cmd == "CMD" {
			if err := json.Unmarshal([]byte(i.args), &cmd); err != nil {
				t.Fatal(err)
			}
		}
	}
	var podArgs []string
	for _, ss := range readManifestObjects(t).statefulSets {
		podArgs = ss.Spec.Template.Spec.Containers[0].Args
	}
	const pod, namespace = "deskhand-0", "desktops"
	cases := []struct {
		name, host, otherHost string
		args                  []string
	}{
		{"Containerfile CMD", "localhost", "deskhand-0.deskhand.desktops.svc", cmd},
		{"StatefulSet args", pod + ".deskhand." + namespace + ".svc.cluster.local", "deskhand-1.deskhand." + namespace + ".svc.cluster.local", podArgs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tlsDir := t.TempDir()
			pool := writeCert(t, tlsDir, c.host, c.otherHost)
			port := freePort(t)
			args := make([]string, len(c.args))
			for i, a := range c.args {
				a = strings.ReplaceAll(a, "$(POD_NAME)", pod)
				a = strings.ReplaceAll(a, "$(POD_NAMESPACE)", namespace)
				a = strings.ReplaceAll(a, "/etc/deskhand/tls", tlsDir)
				a = strings.ReplaceAll(a, ":8443", ":"+port)
				args[i] = a
			}
			// Smaller than the manifest's 1920x1080, to spare a shared
			// machine; the flag itself is the manifest's.
			for i := range args {
				if i > 0 && args[i-1] == "--virtual-display" {
					args[i] = "1280x800"
				}
			}
			args = append(args, "--allow", "xterm", "--state-dir", "none")
			token := randomHex(t, 32)
			srv := exec.Command(bin, args...)
			srv.Env = append(isolatedEnv(t), "DESKHAND_HTTP_TOKEN="+token)
			var logs lockedBuffer
			srv.Stdout, srv.Stderr = &logs, &logs
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				srv.Process.Signal(os.Interrupt)
				srv.Wait()
				if t.Failed() {
					t.Logf("deskhand %v:\n%s", args, logs.String())
				}
			})

			client := func(token string) *http.Client {
				return &http.Client{Transport: &bearer{token: token, base: &http.Transport{
					TLSClientConfig: &tls.Config{RootCAs: pool},
					// The desktop's DNS name leads to this machine.
					DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
						_, p, _ := net.SplitHostPort(addr)
						return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort("127.0.0.1", p))
					},
				}}}
			}
			url := func(host string) string { return "https://" + net.JoinHostPort(host, port) + "/mcp" }
			waitListening(t, port, &logs)

			status := func(host, token string) int {
				body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
				req, _ := http.NewRequest("POST", url(host), body)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := client(token).Do(req)
				if err != nil {
					t.Fatalf("POST %s: %v", url(host), err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := status(c.host, ""); got != http.StatusUnauthorized {
				t.Errorf("a request without the token got %d, want 401", got)
			}
			if got := status(c.otherHost, token); got != http.StatusForbidden {
				t.Errorf("a request naming another desktop (%s) got %d, want 403", c.otherHost, got)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			mc := mcp.NewClient(&mcp.Implementation{Name: "deskhand-deploy-check", Version: "1"}, nil)
			cs, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url(c.host), HTTPClient: client(token)}, nil)
			if err != nil {
				t.Fatalf("connecting to %s: %v", url(c.host), err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "request_access", Arguments: map[string]any{"apps": []string{"xterm"}, "reason": "checking the deploy command"}})
			if err != nil || res.IsError {
				t.Fatalf("request_access: %v %s", err, resultText(res))
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("screenshot: %v %s", err, resultText(res))
			}
			var shot bool
			for _, content := range res.Content {
				_, isImage := content.(*mcp.ImageContent)
				shot = shot || isImage
			}
			if !shot {
				t.Errorf("screenshot over HTTPS returned no image: %s", resultText(res))
			}
		})
	}
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(req)
}

// writeCert writes a self-signed tls.crt and tls.key for the names into
// dir, as the operator's TLS Secret would hold them, and returns a pool
// that trusts it.
func writeCert(t *testing.T, dir string, names ...string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitListening waits, with a generous deadline, until deskhand accepts
// connections on port.
func waitListening(t *testing.T, port string, logs *lockedBuffer) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deskhand did not listen on port %s within a minute:\n%s", port, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
