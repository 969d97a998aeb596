package main

import (
	"encoding/json"
	"slices"
)

func (s *server) displays(json.RawMessage) (any, *rpcError) {
	d, err := s.desk.Displays()
	if err != nil {
		return nil, asRPC(err, codeDisplayUnavailable)
	}
	return map[string]any{"displays": d}, nil
}

func (s *server) windows(params json.RawMessage) (any, *rpcError) {
	var p struct {
		IncludeHidden *bool `json:"include_hidden"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	list, focused, err := s.desk.Windows(p.IncludeHidden != nil && *p.IncludeHidden)
	if err != nil {
		return nil, asRPC(err, codeInternal)
	}
	if list == nil {
		list = []window{} // the protocol's list is an array, even empty
	}
	var frontmost *app
	for _, w := range list {
		if focused != nil && w.ID == *focused {
			frontmost = &w.App
		}
	}
	return map[string]any{"windows": list, "focused": focused, "frontmost": frontmost}, nil
}

func (s *server) windowAt(params json.RawMessage) (any, *rpcError) {
	var p struct {
		X *int `json:"x"`
		Y *int `json:"y"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.X == nil || p.Y == nil {
		return nil, newError(codeInvalidParams, "window_at needs integer x and y")
	}
	list, _, err := s.desk.Windows(false)
	if err != nil {
		return nil, asRPC(err, codeInternal)
	}
	for _, w := range list { // top first
		if w.Bounds.contains(*p.X, *p.Y) {
			return map[string]any{"window": w, "app": w.App}, nil
		}
	}
	return map[string]any{"window": nil, "app": nil}, nil
}

// selection checks the clipboard methods' selection: Windows has only the
// clipboard.
func selection(name *string) *rpcError {
	switch {
	case name == nil || *name == "clipboard":
		return nil
	case *name == "primary" || *name == "cut_buffer":
		return newError(codeUnsupported, "Windows has no %s selection", *name)
	}
	return newError(codeInvalidParams, "selection must be clipboard, primary or cut_buffer")
}

func (s *server) clipboardRead(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Selection *string `json:"selection"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := selection(p.Selection); err != nil {
		return nil, err
	}
	text, err := s.desk.ClipboardRead()
	if err != nil {
		return nil, asRPC(err, codeClipboardUnavailable)
	}
	return map[string]any{"text": text}, nil
}

func (s *server) clipboardWrite(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Text      *string `json:"text"`
		Selection *string `json:"selection"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Text == nil {
		return nil, newError(codeInvalidParams, "clipboard_write needs text, a string")
	}
	if err := selection(p.Selection); err != nil {
		return nil, err
	}
	if err := s.desk.ClipboardWrite(*p.Text); err != nil {
		return nil, asRPC(err, codeClipboardUnavailable)
	}
	return map[string]any{"ok": true}, nil
}

// windowIDs reads {"windows": [WindowId]} and checks every id exists
// before any window is touched.
func (s *server) windowIDs(params json.RawMessage) ([]uint32, *rpcError) {
	var p struct {
		Windows *[]uint32 `json:"windows"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Windows == nil {
		return nil, newError(codeInvalidParams, "needs windows, a list of window ids")
	}
	if len(*p.Windows) == 0 {
		return []uint32{}, nil
	}
	all, _, err := s.desk.Windows(true)
	if err != nil {
		return nil, asRPC(err, codeInternal)
	}
	for _, id := range *p.Windows {
		if !slices.ContainsFunc(all, func(w window) bool { return w.ID == id }) {
			return nil, newError(codeNoSuchWindow, "no window with id %d", id)
		}
	}
	return *p.Windows, nil
}

func (s *server) hide(params json.RawMessage) (any, *rpcError) {
	ids, rpcErr := s.windowIDs(params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	hidden, err := s.desk.Hide(ids)
	if err != nil {
		return nil, asRPC(err, codeInternal)
	}
	return map[string]any{"hidden": nonNil(hidden)}, nil
}

func (s *server) restore(params json.RawMessage) (any, *rpcError) {
	ids, rpcErr := s.windowIDs(params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	restored, err := s.desk.Restore(ids)
	if err != nil {
		return nil, asRPC(err, codeInternal)
	}
	return map[string]any{"restored": nonNil(restored)}, nil
}

func nonNil(ids []uint32) []uint32 {
	if ids == nil {
		return []uint32{}
	}
	return ids
}
