package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The go-sdk marshals a tool result, then marshals the JSON-RPC envelope
// around it, and encoding/json re-scans a marshaller's output at each
// layer: a 280 KB screenshot was base64-encoded once and scanned four
// times on its way out, costing more than its JPEG encode. Over our stdio
// transport the image therefore leaves the handler as a short placeholder,
// the SDK marshals only that, and the transport writes the frame itself
// with the image's base64 in the placeholder's place.

// spliceKeepWrites is how many frames a placeholder outlives when no frame
// carries it (a call whose answer the SDK dropped).
const spliceKeepWrites = 16

type splicedImage struct {
	bytes []byte
	// text is bytes' base64 when the helper sent it so: copied as it is,
	// it spares encoding the image again.
	text  []byte
	write uint64 // the write count when it was registered
}

// imageSplicer hands out placeholders for images and puts the images back
// into the frames that carry the placeholders.
type imageSplicer struct {
	prefix string // unique per splicer, in the base64 alphabet

	mu     sync.Mutex
	next   uint64
	writes uint64
	images map[string]splicedImage // base64 placeholder -> image
}

func newImageSplicer() *imageSplicer {
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	return &imageSplicer{prefix: "deskhandImage" + hex.EncodeToString(nonce[:]), images: map[string]splicedImage{}}
}

// placeholder returns the bytes to put in an ImageContent instead of img:
// their base64 form, the text the SDK writes, names img. b64, when not
// nil, is img's standard base64 encoding, which the frame then carries.
func (s *imageSplicer) placeholder(img, b64 []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	// prefix is 25 characters; 11 digits make the text a multiple of 4
	// long, so that it is exactly the base64 of the bytes it decodes to.
	text := fmt.Sprintf("%s%011d", s.prefix, s.next)
	s.next++
	s.images[text] = splicedImage{bytes: img, text: b64, write: s.writes}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		panic(fmt.Sprintf("image placeholder %q is not base64: %v", text, err))
	}
	return raw
}

// frame returns the stdio frame for msg with the images its placeholders
// name spliced in, or nil when msg carries no placeholder (the caller
// then encodes msg as usual).
func (s *imageSplicer) frame(msg jsonrpc.Message) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	for text, img := range s.images {
		if s.writes-img.write > spliceKeepWrites {
			delete(s.images, text)
		}
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(s.images) == 0 {
		return nil, nil
	}
	marker := append([]byte{'"'}, s.prefix...)
	if !bytes.Contains(resp.Result, marker) {
		return nil, nil
	}
	// The envelope EncodeMessage would write, without re-scanning the
	// result: the SDK made it with json.Marshal, so it is valid, compact
	// JSON with no raw newline.
	head, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Result: []byte("0")})
	if err != nil {
		return nil, fmt.Errorf("encoding a response: %w", err)
	}
	at := bytes.LastIndex(head, []byte(`"result":0`))
	if at < 0 {
		return nil, fmt.Errorf("encoding a response: no result in %s", head)
	}
	size := len(head) + len(resp.Result)
	for text, img := range s.images {
		if bytes.Contains(resp.Result, []byte(text)) {
			size += img.encodedLen()
		}
	}
	out := make([]byte, 0, size+1)
	out = append(out, head[:at+len(`"result":`)]...)
	rest := resp.Result
	for {
		i := bytes.Index(rest, marker)
		if i < 0 {
			break
		}
		end := bytes.IndexByte(rest[i+1:], '"')
		if end < 0 {
			break
		}
		text := string(rest[i+1 : i+1+end])
		img, ok := s.images[text]
		out = append(out, rest[:i+1]...)
		if ok {
			out = img.appendBase64(out)
			delete(s.images, text)
		} else {
			out = append(out, text...)
		}
		out = append(out, '"')
		rest = rest[i+1+end+1:]
	}
	out = append(out, rest...)
	out = append(out, head[at+len(`"result":0`):]...)
	return out, nil
}

func (img splicedImage) encodedLen() int {
	if img.text != nil {
		return len(img.text)
	}
	return base64.StdEncoding.EncodedLen(len(img.bytes))
}

func (img splicedImage) appendBase64(out []byte) []byte {
	if img.text != nil {
		return append(out, img.text...)
	}
	return base64.StdEncoding.AppendEncode(out, img.bytes)
}
