package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/deskhand/deskhand/bridge"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// outcome is what an action produced: a sentence for the model, the same
// facts as data, and an image for screenshot and zoom.
type outcome struct {
	text  string
	data  map[string]any
	image *imageData
	// crops are images of what a batch's steps changed, each shown after
	// its caption and before image.
	crops []captioned
	// omitMessage leaves the text out of the structured data, when the
	// data already holds it (read_clipboard).
	omitMessage bool
}

type imageData struct {
	bytes []byte
	// base64 is bytes' standard base64 text when the helper sent it so;
	// the splicer copies it into the frame instead of encoding bytes.
	base64   []byte
	mimeType string
	// splice, when set, carries the image to the client in place of a
	// placeholder (see imageSplicer).
	splice *imageSplicer
}

// captioned is an image with the words that say what it shows.
type captioned struct {
	caption string
	image   *imageData
}

func (d *imageData) content() *mcp.ImageContent {
	data := d.bytes
	if d.splice != nil {
		data = d.splice.placeholder(data, d.base64)
	}
	return &mcp.ImageContent{Data: data, MIMEType: d.mimeType}
}

// imageOf is the image of a capture, for a result.
func (s *Server) imageOf(img *bridge.Capture) *imageData {
	return &imageData{bytes: img.Data, base64: img.Base64, mimeType: mimeType(img.Format), splice: s.splice.Load()}
}

// result turns an outcome into a tool result. Without an image the data is
// the structured content (with the text as its "message"); with one, the
// data goes into a second text block, as structured content would make
// some clients drop the image.
func (o *outcome) result() *mcp.CallToolResult {
	data := map[string]any{}
	for k, v := range o.data {
		data[k] = v
	}
	if !o.omitMessage {
		data["message"] = o.text
	}
	if o.image != nil || len(o.crops) > 0 {
		js, err := json.Marshal(data)
		if err != nil {
			js = []byte(fmt.Sprintf(`{"error": %q}`, err.Error()))
		}
		var content []mcp.Content
		for _, c := range o.crops {
			content = append(content, &mcp.TextContent{Text: c.caption}, c.image.content())
		}
		if o.image != nil {
			content = append(content, o.image.content())
		}
		return &mcp.CallToolResult{Content: append(content, &mcp.TextContent{Text: o.text}, &mcp.TextContent{Text: string(js)})}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: o.text}},
		StructuredContent: data,
	}
}

// errorResult is a tool error the model can read and act on.
func errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}},
		IsError: true,
	}
}

func mimeType(format string) string {
	if format == FormatPNG {
		return "image/png"
	}
	return "image/jpeg"
}
