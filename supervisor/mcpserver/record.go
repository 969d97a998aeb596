package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/supervisor/record"
)

// stdioSession names the one session of a stdio server in the record.
var stdioSession = fmt.Sprintf("stdio-%d", os.Getpid())

// recordCalls writes every tools/call to the action record, whatever tool
// answers it (the computer tools, consent, teaching), with the decisions
// the gates noted on the way.
func recordCalls(l *record.Log, log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" {
				return next(ctx, method, req)
			}
			start := time.Now()
			session := stdioSession // stdio's one session has no id: the process names it
			if call.Session != nil && call.Session.ID() != "" {
				session = call.Session.ID()
			}
			c := record.NewCall(record.Entry{Time: start.UTC(), Session: session, Tool: call.Params.Name, Args: call.Params.Arguments})
			res, err := next(record.With(ctx, c), method, req)
			e := c.Finish()
			e.DurationMS = float64(time.Since(start).Microseconds()) / 1000
			switch r, _ := res.(*mcp.CallToolResult); {
			case err != nil:
				e.Result, e.Error = "protocol_error", err.Error()
			case r != nil && r.IsError:
				e.Result, e.Error = "error", toolText(r)
			default:
				e.Result = "ok"
			}
			if werr := l.Write(e); werr != nil {
				log.Warn("writing the action record", "err", werr)
			}
			return res, err
		}
	}
}

// toolText joins a result's text parts.
func toolText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
