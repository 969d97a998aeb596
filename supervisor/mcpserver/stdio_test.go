package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestScreen(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`
	okDeep := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"` + strings.Repeat("[", 200) + `"}}`
	tests := []struct {
		line   string
		code   int64  // 0: accepted
		id     string // the refusal's id, JSON
		method string // of an accepted request
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "", "ping"},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}`, 0, "", "tools/list"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", "notifications/initialized"},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, 0, "", ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`, 0, "", ""},
		{`{"jsonrpc":"2.0","id":3,"error":"no"}`, 0, "", ""},
		{okDeep, 0, "", "x"},
		{`nope`, jsonrpc.CodeParseError, "null", ""},
		{`{"jsonrpc":"2.0",}`, jsonrpc.CodeParseError, "null", ""},
		{`[]`, jsonrpc.CodeInvalidRequest, "null", ""},
		{`[1,2]`, jsonrpc.CodeInvalidRequest, "null", ""},
		{`true`, jsonrpc.CodeInvalidRequest, "null", ""},
		{`{"jsonrpc":"2.1","id":"q","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"q"`, ""},
		{`{"JSONRPC":"2.0","id":2,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "2", ""},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null", ""},
		{`{"jsonrpc":"2.0","id":1e300,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null", ""},
		{"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"p\xc3\"}", jsonrpc.CodeParseError, "4", ""},
		{deep, jsonrpc.CodeInvalidRequest, "1", ""},
		{`{"jsonrpc":"2.0","id":5}`, jsonrpc.CodeInvalidRequest, "5", ""},
		{`{"jsonrpc":"2.0","id":6,"method":null}`, jsonrpc.CodeInvalidRequest, "6", ""},
	}
	for _, tt := range tests {
		msg, ref := screen([]byte(tt.line))
		if tt.code == 0 {
			if ref != nil {
				t.Errorf("screen(%.80q) refused it: %v", tt.line, ref)
				continue
			}
			if req, ok := msg.(*jsonrpc.Request); ok && req.Method != tt.method {
				t.Errorf("screen(%.80q) method = %q, want %q", tt.line, req.Method, tt.method)
			}
			continue
		}
		if ref == nil {
			t.Errorf("screen(%.80q) = %#v, want refusal %d", tt.line, msg, tt.code)
			continue
		}
		id := "null"
		if ref.id != nil {
			b, _ := json.Marshal(ref.id.Raw())
			id = string(b)
		}
		if ref.code != tt.code || id != tt.id {
			t.Errorf("screen(%.80q) = code %d id %s (%s), want code %d id %s", tt.line, ref.code, id, ref.message, tt.code, tt.id)
		}
	}
}

func TestReadLine(t *testing.T) {
	in := "short\r\n" + strings.Repeat("x", 200) + "\n\nlast"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	type got struct {
		line    string
		tooLong bool
		eof     bool
	}
	want := []got{{"short", false, false}, {"", true, false}, {"", false, false}, {"last", false, true}}
	for i, w := range want {
		line, tooLong, err := readLine(br, 100)
		g := got{string(line), tooLong, err == io.EOF}
		if g != w {
			t.Errorf("line %d = %+v, want %+v", i, g, w)
		}
	}
}

// TestStdioKeepsServing feeds a bad line and a good one through the
// transport: the bad one is answered with an error, the good one reaches
// Read, and the two output frames stay whole lines.
func TestStdioKeepsServing(t *testing.T) {
	pr, pw := io.Pipe()
	or, ow := io.Pipe()
	conn, err := (&StdioTransport{Reader: pr, Writer: ow}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go io.WriteString(pw, "\ufeff[1]\n\ufeff\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n")
	out := bufio.NewScanner(or)
	if !out.Scan() || !strings.Contains(out.Text(), `"code":-32600`) || !strings.Contains(out.Text(), `"id":null`) {
		t.Fatalf("first output frame = %q, want an Invalid Request error with a null id", out.Text())
	}
	msg, err := conn.Read(context.Background())
	if err != nil {
		t.Fatalf("Read after a bad line: %v", err)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "ping" {
		t.Fatalf("Read = %#v, want the ping", msg)
	}
	resp, _ := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`))
	go conn.Write(context.Background(), resp)
	if !out.Scan() || out.Text() != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("second output frame = %q", out.Text())
	}
	pw.Close()
	if _, err := conn.Read(context.Background()); err != io.EOF {
		t.Fatalf("Read at end of input = %v, want EOF", err)
	}
}

// BenchmarkScreen compares screening a typical tool call with the SDK's
// own decode of it, which screening replaces.
func BenchmarkScreen(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"computer_batch","arguments":{"actions":[{"action":"left_click","coordinate":[100,200]},{"action":"type","text":"` + strings.Repeat("hello world ", 40) + `"},{"action":"key","text":"Return"},{"action":"screenshot"}]}}}`)
	b.Run("screen", func(b *testing.B) {
		for b.Loop() {
			if _, ref := screen(line); ref != nil {
				b.Fatal(ref)
			}
		}
	})
	b.Run("sdk-decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}
