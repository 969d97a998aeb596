//go:build !windows

package main

import (
	"image"
)

// On other systems the helper builds (so its platform-neutral logic is
// tested everywhere) but has no desktop.
type noDesktop struct{}

func newDesktop() desktop { return noDesktop{} }

func newAutomation() automation { return nil }

var errNotWindows = newError(codeDisplayUnavailable, "the Windows helper runs only on Windows")

func (noDesktop) Displays() ([]display, error)            { return nil, errNotWindows }
func (noDesktop) Grab(rect) (*image.RGBA, error)          { return nil, errNotWindows }
func (noDesktop) Windows(bool) ([]window, *uint32, error) { return nil, nil, errNotWindows }
func (noDesktop) Hide([]uint32) ([]uint32, error)         { return nil, errNotWindows }
func (noDesktop) Restore([]uint32) ([]uint32, error)      { return nil, errNotWindows }
func (noDesktop) ClipboardRead() (string, error)          { return "", errNotWindows }
func (noDesktop) ClipboardWrite(string) error             { return errNotWindows }
