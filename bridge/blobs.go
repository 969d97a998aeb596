package bridge

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
)

// A capture result carries its image as one long base64 string. Go's
// encoding/json scans a value again at every layer that decodes it —
// jsonrpc2's message envelope twice, its result hand-off, and then ours —
// so a 180 KB image was scanned about ten times, costing more than the
// capture itself. The stream therefore lifts long strings out of each frame
// before jsonrpc2 sees it, leaving a short token in their place, and the
// client puts them back once, just before the final decode.

// liftMinBytes is the shortest string, quotes included, that is lifted out.
const liftMinBytes = 8 << 10

// keepFrames is how many frames a lifted string outlives when nobody
// claims it (a call that was cancelled before its answer came).
const keepFrames = 8

type lifted struct {
	literal []byte // the string literal, quotes included
	frame   uint64
}

// blobStore holds the strings lifted out of frames until the client
// restores them into the result that carried them.
type blobStore struct {
	prefix string // unique per stream, so a token cannot collide with data

	mu     sync.Mutex
	frame  uint64
	next   uint64
	blobs  map[string]lifted
	tokBuf []byte
}

func newBlobStore() *blobStore {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return &blobStore{prefix: "deskhand-blob-" + hex.EncodeToString(nonce[:]) + "-", blobs: map[string]lifted{}}
}

// lift returns body with every string literal of at least liftMinBytes
// replaced by a token literal, remembering the originals. A body that is
// not well-formed JSON is returned unchanged, for the decoder to reject.
func (b *blobStore) lift(body []byte) []byte {
	if len(body) < liftMinBytes {
		return body
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frame++
	for tok, l := range b.blobs {
		if b.frame-l.frame > keepFrames {
			delete(b.blobs, tok)
		}
	}
	var out []byte
	last := 0
	for i := 0; i < len(body); {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			break
		}
		start := i + q
		end := closingQuote(body, start+1)
		if end < 0 {
			return body
		}
		if end+1-start >= liftMinBytes {
			tok := b.prefix + strconv.FormatUint(b.next, 10)
			b.next++
			b.blobs[tok] = lifted{literal: body[start : end+1], frame: b.frame}
			if out == nil {
				out = make([]byte, 0, 4<<10)
			}
			out = append(out, body[last:start]...)
			out = append(out, '"')
			out = append(out, tok...)
			out = append(out, '"')
			last = end + 1
		}
		i = end + 1
	}
	if out == nil {
		return body
	}
	return append(out, body[last:]...)
}

// closingQuote returns the index of the quote that ends the string whose
// contents start at from, or -1 if the string never ends.
func closingQuote(body []byte, from int) int {
	for i := from; i < len(body); {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			return -1
		}
		end := i + q
		backslashes := 0
		for k := end - 1; k >= from && body[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return end
		}
		i = end + 1
	}
	return -1
}

// restore returns raw with the tokens it holds replaced by the strings
// they stand for, and forgets those strings.
func (b *blobStore) restore(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(b.prefix)) {
		return raw
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]byte, 0, len(raw))
	marker := append([]byte{'"'}, b.prefix...)
	for {
		at := bytes.Index(raw, marker)
		if at < 0 {
			break
		}
		end := bytes.IndexByte(raw[at+1:], '"')
		if end < 0 {
			break
		}
		tok := string(raw[at+1 : at+1+end])
		l, ok := b.blobs[tok]
		out = append(out, raw[:at]...)
		if ok {
			out = append(out, l.literal...)
			delete(b.blobs, tok)
		} else {
			out = append(out, raw[at:at+end+2]...)
		}
		raw = raw[at+end+2:]
	}
	return append(out, raw...)
}

// liftedResult receives a result as it came, its long strings still
// replaced by tokens, and those strings: a capture decodes its image from
// them in one pass instead of having encoding/json scan it first.
type liftedResult struct {
	raw   json.RawMessage
	blobs map[string][]byte // token -> string literal, quotes included
}

// claim takes the strings whose tokens raw holds out of the store, keyed
// by token.
func (b *blobStore) claim(raw []byte) map[string][]byte {
	if !bytes.Contains(raw, []byte(b.prefix)) {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string][]byte{}
	marker := append([]byte{'"'}, b.prefix...)
	for {
		at := bytes.Index(raw, marker)
		if at < 0 {
			return out
		}
		end := bytes.IndexByte(raw[at+1:], '"')
		if end < 0 {
			return out
		}
		tok := string(raw[at+1 : at+1+end])
		if l, ok := b.blobs[tok]; ok {
			out[tok] = l.literal
			delete(b.blobs, tok)
		}
		raw = raw[at+end+2:]
	}
}
