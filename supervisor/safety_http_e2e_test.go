//go:build unix

package supervisor_test

// End-to-end tests of the safety rules of `deskhand serve --http`: the
// user's Escape ends control in every HTTP session, and clients that send
// slowly or not at all cannot hold the server's connections.
//
//	go test ./supervisor -run 'SafetyEscapeHTTP|HTTPSlowClients' -v

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/internal/notifytest"
)

// TestSafetyEscapeHTTP: over HTTP, the user's Escape (xdotool, as a
// remote-desktop user sends it) withdraws the approvals of every session,
// not only of the one whose turn it ended: session A, which had the turn,
// a sessionless client, and a session C that starts after the Escape,
// none of which can show the dialog, type nothing more into the zenity
// entry; zenity prints only what A typed before. A session that can show
// the dialog is asked again, pre-approval or not.
func TestSafetyEscapeHTTP(t *testing.T) {
	desktoptest.Require(t, "xdotool")
	bus := notifytest.Start(t)
	d := newDesktop(t, desktoptest.Options{Width: 1024, Height: 768})
	// The user presses Escape in xmessage: zenity would close on it.
	sink := keyTarget(t, d)
	entry, out, code := shellApp(t, d, `--entry --title "escape over http" --text "Name:" --width 400`)
	h := serveHTTPEnv(t, d, []string{"DBUS_SESSION_BUS_ADDRESS=" + bus.Address()}, "--allow", "zenity", "--hide-unapproved=false")

	a := h.connect(nil, "2025-11-25")
	sessionless := h.connect(nil, "")
	a.access([]string{"zenity"})
	sessionless.access([]string{"zenity"})
	a.ok("type", map[string]any{"text": "before"})

	d.Focus(t, sink.ID)
	userEscape(t, d, bus, 1)
	d.Focus(t, entry.ID)

	after := map[string]string{}
	afterA := a.call("type", map[string]any{"text": "AAA"})
	after["A's type"] = resultText(afterA)
	afterS := sessionless.call("type", map[string]any{"text": "SSS"})
	after["the sessionless client's type"] = resultText(afterS)
	// A ends its session, so that C would not meet A's lock.
	a.cs.Close()
	waitFor(t, "the lock to go once A's session ended", 20*time.Second, func() bool {
		return lockOwner(t, d) == nil
	})
	c := h.connect(nil, "2025-11-25")
	afterC := c.call("request_access", map[string]any{"apps": []string{"zenity"}, "reason": "a new session after Escape"})
	after["C's request_access"] = resultText(afterC)
	typedC := c.call("type", map[string]any{"text": "CCC"})
	after["C's type"] = resultText(typedC)

	// The user ends the entry: zenity prints what it holds.
	if got := entryText(t, d, code, out); got != "before" {
		t.Errorf("zenity printed %q after the user's Escape; want %q, what A typed before it", got, "before")
	}
	for what, res := range map[string]bool{"A's type": afterA.IsError, "the sessionless client's type": afterS.IsError, "C's request_access": afterC.IsError, "C's type": typedC.IsError} {
		if !res || !strings.Contains(after[what], "Escape") && !strings.Contains(after[what], "request_access") {
			t.Errorf("%s after the user's Escape: error %v, %q", what, res, after[what])
		}
	}
	if !strings.Contains(after["C's request_access"], "pressed Escape") || !strings.Contains(after["C's request_access"], "restart") {
		t.Errorf("C's request_access does not say the user pressed Escape and the server must restart: %q", after["C's request_access"])
	}

	// A client that can show the dialog gets it, pre-approval or not.
	u := &user{answer: acceptBut()}
	dlg := h.connect(u.options(), "2025-11-25")
	reapprove(t, dlg, u, "zenity")
	dlg.ok("screenshot", nil)
}

// TestSafetyEscapeOtherServer: the user's Escape ends control of every
// deskhand on the display, not only of the one whose turn it ended: a
// session of a deskhand serving HTTP, approved but idle while a stdio
// deskhand had the turn, types nothing more into the zenity entry, and a
// new session of it is refused its pre-approval.
func TestSafetyEscapeOtherServer(t *testing.T) {
	desktoptest.Require(t, "xdotool")
	bus := notifytest.Start(t)
	d := newDesktop(t, desktoptest.Options{Width: 1024, Height: 768})
	sink := keyTarget(t, d)
	entry, out, code := shellApp(t, d, `--entry --title "escape, two servers" --text "Name:" --width 400`)
	one := escapeServer(t, d, bus, nil, "--allow", "zenity", "--hide-unapproved=false")
	h := serveHTTPEnv(t, d, []string{"DBUS_SESSION_BUS_ADDRESS=" + bus.Address()}, "--allow", "zenity", "--hide-unapproved=false")
	b := h.connect(nil, "2025-11-25")
	b.access([]string{"zenity"})
	one.access([]string{"zenity"})
	one.ok("type", map[string]any{"text": "one"})

	d.Focus(t, sink.ID)
	userEscape(t, d, bus, 1)
	d.Focus(t, entry.ID)
	waitFor(t, "the lock to go once the stdio server's turn ended", 20*time.Second, func() bool {
		return lockOwner(t, d) == nil
	})
	// C starts before anything else of this server runs.
	c := h.connect(nil, "2025-11-25")
	asked := c.call("request_access", map[string]any{"apps": []string{"zenity"}, "reason": "a new session after Escape"})
	typed := b.call("type", map[string]any{"text": "BBB"})

	if got := entryText(t, d, code, out); got != "one" {
		t.Errorf("zenity printed %q after the user's Escape; want %q, what the stdio server typed before it", got, "one")
	}
	if msg := resultText(typed); !typed.IsError || !strings.Contains(msg, "pressed Escape") {
		t.Errorf("the HTTP session's type after the user's Escape: error %v, %q", typed.IsError, msg)
	}
	if msg := resultText(asked); !asked.IsError || !strings.Contains(msg, "pressed Escape") {
		t.Errorf("a new HTTP session's request_access after the user's Escape: error %v, %q", asked.IsError, msg)
	}
}

// rawRequest sends the head of a POST to the MCP endpoint of h on a new
// connection, and the first byte of a body of the declared length: the
// rest never comes.
func rawRequest(t *testing.T, h *httpE2E, length int, header string) (net.Conn, *bufio.Reader) {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(h.url, "http://"), "/mcp")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n{", addr, header, length); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// answer reads the response on c and its body.
func answer(t *testing.T, what string, c net.Conn, r *bufio.Reader) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// closedByServer reports whether the server closed c (its next read
// ends), waiting for it at most 30 seconds.
func closedByServer(c net.Conn, r *bufio.Reader) error {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := r.ReadByte(); err != io.EOF {
		return fmt.Errorf("the connection is still open (read: %v)", err)
	}
	return nil
}

// TestHTTPSlowClients: clients that send slowly or not at all cannot
// hold the server. Many unauthenticated requests whose body never comes
// are each answered 401 at once and closed, and the server's open file
// descriptors (/proc/PID/fd) come back to what they were while the
// clients still hold their ends; a body with the token that does not
// arrive within --http-read-timeout gets 408; an idle keep-alive
// connection is closed after it; and a session beyond --http-max-sessions
// is refused with an error that names the flag.
func TestHTTPSlowClients(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{Width: 1024, Height: 768})
	h := serveHTTPOn(t, d, "--http-read-timeout", "2s", "--http-max-sessions", "2")
	fds := func() int {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", h.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	// The control, which also starts what the server starts on its first
	// session.
	first := h.connect(nil, "2025-11-25")
	before := fds()

	const slow = 200
	type conn struct {
		c net.Conn
		r *bufio.Reader
	}
	var conns []conn
	for range slow {
		c, r := rawRequest(t, h, 100000, "")
		conns = append(conns, conn{c, r})
	}
	for i, c := range conns {
		what := fmt.Sprintf("slow unauthenticated request %d", i)
		resp, body := answer(t, what, c.c, c.r)
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("%s = %d (close %v) %q; want 401 and the connection closed", what, resp.StatusCode, resp.Close, body)
		}
		if err := closedByServer(c.c, c.r); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	waitFor(t, "the server's file descriptors to come back while the slow clients hold their ends", 20*time.Second, func() bool { return fds() <= before+5 })

	// With the token, the body must still come in time.
	c, r := rawRequest(t, h, 100, "Authorization: Bearer "+h.token+"\r\n")
	if resp, body := answer(t, "a slow body with the token", c, r); resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "--http-read-timeout") {
		t.Errorf("a body with the token that never arrives = %d %q; want 408 naming --http-read-timeout", resp.StatusCode, body)
	}

	// An idle keep-alive connection is closed.
	c, r = rawRequest(t, h, 2, "Authorization: Bearer "+h.token+"\r\n")
	if _, err := c.Write([]byte("}")); err != nil {
		t.Fatal(err)
	}
	if resp, body := answer(t, "a request with the token", c, r); resp.Close || resp.StatusCode >= 500 {
		t.Fatalf("a complete request with the token = %d (close %v) %q; want an answer on a kept connection", resp.StatusCode, resp.Close, body)
	}
	if err := closedByServer(c, r); err != nil {
		t.Errorf("an idle keep-alive connection: %v", err)
	}

	// Two sessions are live (first and second); a third is refused.
	second := h.connect(nil, "2025-11-25")
	second.ok("list_granted_applications", nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "one-too-many", Version: "1"}, nil)
	connect := func() (*mcp.ClientSession, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tr := &mcp.StreamableClientTransport{Endpoint: h.url, HTTPClient: &http.Client{Transport: bearer{h.token, http.DefaultTransport}}}
		return client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	}
	if cs, err := connect(); err == nil || !strings.Contains(err.Error(), "--http-max-sessions 2") {
		if cs != nil {
			cs.Close()
		}
		t.Fatalf("a third session with --http-max-sessions 2: %v; want an error naming the flag", err)
	}
	first.ok("list_granted_applications", nil)
	// Once a session ends, a new one is welcome.
	first.cs.Close()
	var third *mcp.ClientSession
	waitFor(t, "a new session once one ended", 20*time.Second, func() bool {
		cs, err := connect()
		third = cs
		return err == nil
	})
	third.Close()
}

// entryText ends the zenity entry as the user would (Return) and returns
// what it printed.
func entryText(t *testing.T, d *desktoptest.Desktop, code, out string) string {
	t.Helper()
	d.Run(t, "xdotool", "key", "Return")
	if status := waitExit(t, code); status != 0 {
		t.Fatalf("zenity --entry exited %d", status)
	}
	printed, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(printed))
}
