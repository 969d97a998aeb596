package supervisor

// Serving MCP over Streamable HTTP (serve --http): the listener, the
// checks every request passes before the go-sdk's handler sees it (Host,
// Origin, bearer token, body size and deadline), and one MCP server per
// HTTP session, up to --http-max-sessions, so that consent, the lock and
// the turn's cleanup hold per session as they do for one stdio client.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/gates"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// HTTP serving defaults.
const (
	// MCPPath is where the MCP endpoint is served.
	MCPPath = "/mcp"
	// DefaultHTTPMaxBody bounds request bodies: MCP requests are small
	// (images only ever travel in responses).
	DefaultHTTPMaxBody = 1 << 20
	// DefaultHTTPSessionTimeout closes HTTP sessions idle this long.
	DefaultHTTPSessionTimeout = 30 * time.Minute
	// DefaultHTTPReadTimeout bounds how long a client may take to send a
	// request's body, and how long a connection may sit idle between
	// requests.
	DefaultHTTPReadTimeout = 30 * time.Second
	// DefaultHTTPMaxSessions bounds the HTTP sessions alive at once.
	DefaultHTTPMaxSessions = 16
	// headerTimeout bounds how long a client may take to send a
	// request's headers.
	headerTimeout = 10 * time.Second
	// HTTPTokenFile is the name of the generated token file in the config
	// directory.
	HTTPTokenFile = "http-token"
	// minTokenLen is the shortest token accepted from a file or the
	// environment.
	minTokenLen = 16
	// statelessVersion is the first MCP protocol version without
	// sessions (SEP-2575): requests that carry it are served statelessly.
	statelessVersion = "2026-07-28"
	metadataPath     = "/.well-known/oauth-protected-resource"
)

// HTTPOptions configure serving MCP over Streamable HTTP instead of stdio
// (serve's --http flags); Check validates them.
type HTTPOptions struct {
	// Addr is [HOST]:PORT to listen on; "" serves stdio instead.
	Addr      string
	TokenFile string
	// AllowOrigins and AllowHosts are accepted besides this server's own.
	AllowOrigins   []string
	AllowHosts     []string
	MaxBody        int64
	SessionTimeout time.Duration
	// ReadTimeout bounds each request body's arrival and each idle
	// connection; MaxSessions the live HTTP sessions.
	ReadTimeout time.Duration
	MaxSessions int
	TLSCert     string
	TLSKey      string
	// AuthServers, Scopes and Resource go into the protected-resource
	// metadata (RFC 9728).
	AuthServers []string
	Scopes      []string
	Resource    string
	// AllowPlaintext allows a non-loopback Addr without TLS, for a TLS
	// proxy in front.
	AllowPlaintext bool

	// Set by Check.
	listen    string // host:port
	tlsConfig *tls.Config
	token     string
	tokenFrom string
}

// Check validates the options before anything starts, and loads the TLS
// certificate and the token (creating the token file on first start).
func (f *HTTPOptions) Check() error {
	if f.Addr == "" {
		for _, set := range []bool{f.TokenFile != "", len(f.AllowOrigins) > 0, len(f.AllowHosts) > 0, f.TLSCert != "", f.TLSKey != "", len(f.AuthServers) > 0, f.AllowPlaintext} {
			if set {
				return errors.New("the --http-*, --tls-cert and --tls-key flags need --http ADDR")
			}
		}
		return nil
	}
	listen, err := listenAddr(f.Addr)
	if err != nil {
		return err
	}
	f.listen = listen
	if (f.TLSCert == "") != (f.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both, or neither for plain HTTP")
	}
	host, _, _ := net.SplitHostPort(listen)
	if !isLoopbackHost(host) && f.TLSCert == "" && !f.AllowPlaintext {
		return fmt.Errorf("--http %s listens beyond this machine without TLS, and the bearer token would cross the network in the clear: "+
			"pass --tls-cert and --tls-key, or --http-allow-plaintext when a TLS proxy in front (an ingress, a service mesh) encrypts the traffic", f.Addr)
	}
	if f.MaxBody < 1024 {
		return fmt.Errorf("--http-max-body %d: use at least 1024 bytes", f.MaxBody)
	}
	if f.ReadTimeout < time.Second {
		return fmt.Errorf("--http-read-timeout %v: use at least 1s", f.ReadTimeout)
	}
	if f.MaxSessions < 1 {
		return fmt.Errorf("--http-max-sessions %d: use at least 1", f.MaxSessions)
	}
	for _, o := range f.AllowOrigins {
		if _, err := parseOrigin(o); err != nil {
			return fmt.Errorf("--http-allow-origin %q: %w", o, err)
		}
	}
	for _, s := range f.AuthServers {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("--http-auth-server %q: give the issuer URL, such as https://auth.example.com", s)
		}
	}
	if f.Resource != "" {
		if u, err := url.Parse(f.Resource); err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("--http-resource %q: give the URL clients use, such as https://desktop-3.example.com/mcp", f.Resource)
		}
	}
	if f.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(f.TLSCert, f.TLSKey)
		if err != nil {
			return fmt.Errorf("loading --tls-cert and --tls-key: %w", err)
		}
		f.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	f.token, f.tokenFrom, err = httpToken(f)
	return err
}

// listenAddr turns --http's ADDR into a host:port to listen on, the host
// defaulting to 127.0.0.1.
func listenAddr(addr string) (string, error) {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--http %q: %w; use [HOST]:PORT, such as :8765 or 0.0.0.0:8765", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("--http %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// isLoopbackHost reports whether host (no port) names this machine's
// loopback interface.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// parseOrigin normalizes an origin to scheme://host[:port].
func parseOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return "", errors.New("an origin is scheme://host[:port], such as https://app.example.com")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// httpToken finds the bearer token: the file --http-token-file names, else
// $DESKHAND_HTTP_TOKEN, else the default file; a missing file is created
// with a random token. It returns where the token came from, for the log.
func httpToken(f *HTTPOptions) (token, source string, err error) {
	path := f.TokenFile
	if path == "" {
		if env := os.Getenv("DESKHAND_HTTP_TOKEN"); env != "" {
			env = strings.TrimSpace(env)
			if len(env) < minTokenLen {
				return "", "", fmt.Errorf("DESKHAND_HTTP_TOKEN is %d characters long; use at least %d random characters (or unset it to have a token generated)", len(env), minTokenLen)
			}
			return env, "$DESKHAND_HTTP_TOKEN", nil
		}
		dir, err := consent.DefaultConfigDir()
		if err != nil {
			return "", "", err
		}
		path = filepath.Join(dir, HTTPTokenFile)
	}
	token, err = readToken(path)
	if errors.Is(err, fs.ErrNotExist) {
		token, err = createToken(path)
	}
	if err != nil {
		return "", "", err
	}
	return token, path, nil
}

func readToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the HTTP token file %s is readable by other users (mode %04o): run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the HTTP token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if len(token) < minTokenLen {
		return "", fmt.Errorf("the HTTP token file %s holds %d characters; put at least %d random characters in it, or delete it to have one generated", path, len(token), minTokenLen)
	}
	return token, nil
}

func createToken(path string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating the HTTP token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("creating the directory of the HTTP token file: %w", err)
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readToken(path) // another deskhand created it first
	}
	if err != nil {
		return "", fmt.Errorf("creating the HTTP token file: %w", err)
	}
	_, err = file.WriteString(token + "\n")
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("writing the HTTP token file: %w", err)
	}
	return token, nil
}

// httpServe is what serveHTTP needs from serve.
type httpServe struct {
	flags   *HTTPOptions
	base    mcpserver.Options // without consent and safety
	consent ConsentOptions
	// stateless is the consent manager of the stateless server.
	stateless *consent.Manager
	helper    *bridge.Client
	safety    *safety
	logger    *slog.Logger
	notify    *atomic.Pointer[func(string)]
	teach     *teachSwitch
}

// httpServer serves one listener.
type httpServer struct {
	httpServe
	token      [sha256.Size]byte
	tokenFrom  string
	boundHost  string
	tls        bool
	stateless  *mcpserver.Server
	statefulH  http.Handler
	statelessH http.Handler

	mu   sync.Mutex
	live map[*mcpserver.Server]bool
}

// serveHTTP serves MCP over Streamable HTTP until ctx is done.
func serveHTTP(ctx context.Context, hs httpServe) error {
	f := hs.flags
	useTLS := f.tlsConfig != nil
	host, _, _ := net.SplitHostPort(f.listen)
	s := &httpServer{httpServe: hs, token: sha256.Sum256([]byte(f.token)), tokenFrom: f.tokenFrom, boundHost: host, tls: useTLS, live: map[*mcpserver.Server]bool{}}
	if err := s.build(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", f.listen, err)
	}
	srv := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: headerTimeout,
		// Bodies get --http-read-timeout from readBody; a server-wide
		// ReadTimeout would also cancel the long responses of tool calls
		// and the event streams.
		IdleTimeout: f.ReadTimeout,
		TLSConfig:   f.tlsConfig,
		ErrorLog:    slog.NewLogLogger(hs.logger.Handler(), slog.LevelDebug),
	}
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	notifyAll := func(msg string) { s.notifyAll(ctx, msg) }
	hs.notify.Store(&notifyAll)
	hs.logger.Info("serving MCP over Streamable HTTP", "url", scheme+"://"+ln.Addr().String()+MCPPath,
		"token", "send the bearer token from "+f.tokenFrom+" as Authorization: Bearer")
	errc := make(chan error, 1)
	go func() {
		if useTLS {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	// Streams a client keeps open would hold Shutdown forever.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	// Pending state-file writes finish before the process exits.
	s.mu.Lock()
	live := slices.Collect(maps.Keys(s.live))
	s.mu.Unlock()
	for _, m := range append(live, s.stateless) {
		m.Close()
	}
	hs.logger.Info("stopped serving HTTP")
	return nil
}

// build makes the stateless server and the two go-sdk handlers.
func (s *httpServer) build() error {
	o := s.base
	held := &sessionExecutor{Executor: s.base.Executor, turns: s.safety.turns}
	id := s.safety.gates.SessionID("")
	held.session.Store(&id)
	o.Executor = held
	o.Consent = s.httpServe.stateless
	o.OneView = true
	s.safety.options(&o, o.Consent.Session())
	o.Logger = s.logger.With("component", "mcp", "http_session", "stateless")
	stateless, err := mcpserver.New(o)
	if err != nil {
		return err
	}
	s.teach.attach(stateless)
	s.stateless = stateless
	common := mcp.StreamableHTTPOptions{
		Logger: s.logger.With("component", "http"),
		// The Host check in front covers this, with the allow-list.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        s.flags.MaxBody,
	}
	stateful := common
	stateful.SessionTimeout = s.flags.SessionTimeout
	s.statefulH = mcp.NewStreamableHTTPHandler(s.serverFor, &stateful)
	less := common
	less.Stateless = true
	s.statelessH = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return stateless.MCP() }, &less)
	return nil
}

// handler is the whole HTTP surface: every request passes the Host
// check; the MCP endpoint also the Origin check, the body cap and the
// token. The protected-resource metadata is public (RFC 9728), for
// browser-based clients too.
func (s *httpServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, s.checkOrigin(s.authorize(s.readBody(http.HandlerFunc(s.route)))))
	if len(s.flags.AuthServers) > 0 {
		meta := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
				Resource:               s.resourceURL(r),
				AuthorizationServers:   s.flags.AuthServers,
				ScopesSupported:        s.flags.Scopes,
				BearerMethodsSupported: []string{"header"},
				ResourceName:           "deskhand computer use",
			}).ServeHTTP(w, r)
		})
		mux.Handle(metadataPath, meta)
		mux.Handle(metadataPath+MCPPath, meta)
	}
	return s.deadline(s.checkHost(mux))
}

// deadline gives every request --http-read-timeout to arrive whole
// (readBody lifts it once the body is in): without it a client could
// hold a connection for ever by sending the body slowly.
func (s *httpServer) deadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.flags.ReadTimeout))
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request that is refused at once and closes its
// connection within drainTime: a body not read yet would otherwise be
// read to its end first, before the answer is sent or the connection
// given up, which a client sending slowly drags out for ever. What
// arrives meanwhile is read and dropped, so that closing the connection
// does not reset it under the answer.
func refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(drainTime))
}

// drainTime is how long a refused request's connection stays open.
const drainTime = time.Second

// checkHost refuses requests whose Host is not a name of this server: a
// web page whose name an attacker made resolve to this machine (DNS
// rebinding) sends its own name.
func (s *httpServer) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(hostOnly(r.Host)) {
			s.logger.Warn("refused an HTTP request for another host name (DNS rebinding protection)", "host", r.Host, "remote", r.RemoteAddr)
			refuse(w, fmt.Sprintf("Forbidden: the Host header %q is not a name of this server; start deskhand with --http-allow-host %s to accept it", r.Host, hostOnly(r.Host)), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses browser requests from an origin that is not
// allowed; clients that are not browsers send no Origin.
func (s *httpServer) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !s.originAllowed(origin, r.Host) {
			s.logger.Warn("refused an HTTP request from a browser origin that is not allowed", "origin", origin, "remote", r.RemoteAddr)
			refuse(w, fmt.Sprintf("Forbidden: requests from origin %q are not allowed; start deskhand with --http-allow-origin %s to accept them", origin, origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *httpServer) hostAllowed(host string) bool {
	if isLoopbackHost(host) {
		return true
	}
	if ip := net.ParseIP(s.boundHost); ip == nil || !ip.IsUnspecified() {
		if strings.EqualFold(host, strings.Trim(s.boundHost, "[]")) {
			return true
		}
	}
	return slices.ContainsFunc(s.flags.AllowHosts, func(a string) bool { return a == "*" || strings.EqualFold(a, host) })
}

// originAllowed accepts the allow-listed origins and the server's own
// (an origin naming the host and port the request was sent to): deskhand
// serves no web pages, so no page of that origin can be an attacker's.
func (s *httpServer) originAllowed(origin, requestHost string) bool {
	o, err := parseOrigin(origin)
	if err != nil {
		return false // "null", or garbage
	}
	for _, a := range s.flags.AllowOrigins {
		if n, _ := parseOrigin(a); n == o {
			return true
		}
	}
	u, _ := url.Parse(o)
	return strings.EqualFold(u.Host, requestHost)
}

// readBody reads the whole body before the go-sdk sees the request, within
// --http-read-timeout and --http-max-body, then lifts the deadline for the
// response, which may stream for as long as a tool call or the session
// lasts.
func (s *httpServer) readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tooLarge := func(size string) {
			refuse(w, fmt.Sprintf("Request Entity Too Large: the body is %s bytes; deskhand accepts at most %d (--http-max-body)", size, s.flags.MaxBody), http.StatusRequestEntityTooLarge)
		}
		if r.ContentLength > s.flags.MaxBody {
			tooLarge(strconv.FormatInt(r.ContentLength, 10))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, s.flags.MaxBody+1))
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.logger.Warn("refused an HTTP request whose body did not arrive in time", "remote", r.RemoteAddr, "read_timeout", s.flags.ReadTimeout)
			refuse(w, fmt.Sprintf("Request Timeout: the body did not arrive within %v (--http-read-timeout)", s.flags.ReadTimeout), http.StatusRequestTimeout)
			return
		case err != nil:
			refuse(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
			return
		case int64(len(body)) > s.flags.MaxBody:
			tooLarge("more than " + strconv.FormatInt(s.flags.MaxBody, 10))
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// authorize requires the bearer token, compared in constant time.
func (s *httpServer) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, given, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(given)))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], s.token[:]) != 1 {
			challenge := `Bearer realm="deskhand"`
			if len(s.flags.AuthServers) > 0 {
				challenge += fmt.Sprintf(`, resource_metadata=%q`, s.metadataURL(r))
			}
			if !ok {
				challenge += `, error="invalid_request"`
			} else {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			s.logger.Warn("refused an HTTP request without the right bearer token", "remote", r.RemoteAddr, "had_token", ok)
			refuse(w, "Unauthorized: send deskhand's bearer token as Authorization: Bearer <token> (the server logs which file holds it when it starts)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *httpServer) scheme() string {
	if s.tls {
		return "https"
	}
	return "http"
}

func (s *httpServer) resourceURL(r *http.Request) string {
	if s.flags.Resource != "" {
		return s.flags.Resource
	}
	return s.scheme() + "://" + r.Host + MCPPath
}

func (s *httpServer) metadataURL(r *http.Request) string {
	u, err := url.Parse(s.resourceURL(r))
	if err != nil {
		return s.scheme() + "://" + r.Host + metadataPath + MCPPath
	}
	return u.Scheme + "://" + u.Host + metadataPath + u.Path
}

// route sends requests of the stateless protocol (2026-07-28 and later,
// which has no sessions) to the stateless handler, everything else to
// the handler with sessions.
func (s *httpServer) route(w http.ResponseWriter, r *http.Request) {
	v := r.Header.Get("Mcp-Protocol-Version")
	if r.Header.Get("Mcp-Session-Id") == "" && v >= statelessVersion {
		s.statelessH.ServeHTTP(w, r)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), memoKey{}, &serverMemo{}))
	s.statefulH.ServeHTTP(w, r)
}

// serverMemo holds the server made for one request: the go-sdk asks for
// it twice while creating a session.
type serverMemo struct{ srv *mcp.Server }

type memoKey struct{}

// serverFor is the stateful handler's getServer: a new MCP server, with
// its own consent and gates, for each new session. A request of an
// existing session only needs the protocol versions, which every server
// shares.
func (s *httpServer) serverFor(r *http.Request) *mcp.Server {
	memo, _ := r.Context().Value(memoKey{}).(*serverMemo)
	if r.Header.Get("Mcp-Session-Id") != "" || memo == nil {
		return s.stateless.MCP()
	}
	if memo.srv == nil {
		srv, err := s.newSession()
		if err != nil {
			s.logger.Error("starting an HTTP session", "err", err)
			return nil
		}
		memo.srv = srv
	}
	return memo.srv
}

// newSession makes the MCP server of one HTTP session: its own consent
// grants and gates, sharing the lock, the turn controller and the
// desktop with every other session.
func (s *httpServer) newSession() (*mcp.Server, error) {
	mgr, err := newConsent(s.consent, s.helper, s.safety.plat, s.logger.With("component", "consent"))
	if err != nil {
		return nil, err
	}
	g, err := s.safety.forSession(mgr.Session())
	if err != nil {
		return nil, err
	}
	held := &sessionExecutor{Executor: s.base.Executor, turns: s.safety.turns}
	o := s.base
	o.Executor = held
	o.Consent = mgr
	s.safety.optionsWith(g, &o, mgr.Session())
	o.Logger = s.logger.With("component", "mcp")
	srv, err := mcpserver.New(o)
	if err != nil {
		return nil, err
	}
	s.teach.attach(srv)
	var once sync.Once
	var full error
	srv.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
				once.Do(func() { full = s.track(srv, ss, held, g) })
			}
			if full != nil {
				// The go-sdk closes a session whose initialize fails.
				return nil, full
			}
			return next(ctx, method, req)
		}
	})
	return srv.MCP(), nil
}

// track follows a session until it ends (DELETE, the idle timeout, the
// server stopping), then gives the computer back if the session held it.
// A session past --http-max-sessions is refused instead: each one holds
// memory and may hold streams for as long as --http-session-timeout.
func (s *httpServer) track(srv *mcpserver.Server, ss *mcp.ServerSession, held *sessionExecutor, g *gates.Gates) error {
	id := g.SessionID(ss.ID())
	held.session.Store(&id)
	s.mu.Lock()
	if len(s.live) >= s.flags.MaxSessions {
		s.mu.Unlock()
		s.logger.Warn("refused an HTTP session: too many sessions", "max_sessions", s.flags.MaxSessions)
		return fmt.Errorf("deskhand already serves %d HTTP sessions, as many as it may (--http-max-sessions %d): "+
			"end one (the client closes it, which sends DELETE), wait until an idle one ends (--http-session-timeout), "+
			"or start deskhand with a higher --http-max-sessions", len(s.live), s.flags.MaxSessions)
	}
	s.live[srv] = true
	s.mu.Unlock()
	s.logger.Info("HTTP session began", "session", id)
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.live, srv)
		s.mu.Unlock()
		if active, ok := s.safety.turns.Active(); ok && active == id {
			s.safety.turns.End(cleanup.ReasonDisconnect)
			s.logger.Info("HTTP session ended; gave the computer back", "session", id)
			return
		}
		s.logger.Info("HTTP session ended", "session", id)
	}()
	return nil
}

// notifyAll sends msg to every HTTP session as a log notification.
func (s *httpServer) notifyAll(ctx context.Context, msg string) {
	s.mu.Lock()
	srvs := slices.Collect(maps.Keys(s.live))
	s.mu.Unlock()
	for _, srv := range srvs {
		srv.Notify(ctx, "info", msg)
	}
}

// sessionExecutor is the executor of one HTTP session. All sessions drive
// one desktop: ReleaseAll, which a session's server calls when one of its
// calls fails or it ends, lets go of the buttons and keys only when no
// other session's turn is current, so that a session refused by the lock
// cannot cut short the drag of the one holding it. Everything else is the
// shared executor's.
type sessionExecutor struct {
	mcpserver.Executor
	turns   *cleanup.Controller
	session atomic.Pointer[string] // the lock and turn id, once known
}

func (e *sessionExecutor) ReleaseAll(ctx context.Context) error {
	if active, ok := e.turns.Active(); ok {
		if id := e.session.Load(); id == nil || *id != active {
			return nil
		}
	}
	return e.Executor.ReleaseAll(ctx)
}
