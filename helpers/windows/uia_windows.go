package main

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// UI Automation over raw COM vtable calls, so the helper needs no COM
// library. The vtable slots are those of UIAutomationClient.h. This code
// compiles in CI but has not run: Wine 8 has no CUIAutomation
// (CoCreateInstance fails with REGDB_E_CLASSNOTREG), so the helper then
// leaves "a11y" out of its capabilities.

var (
	ole32    = windows.NewLazySystemDLL("ole32.dll")
	oleaut32 = windows.NewLazySystemDLL("oleaut32.dll")

	pCoInitializeEx       = ole32.NewProc("CoInitializeEx")
	pCoCreateInstance     = ole32.NewProc("CoCreateInstance")
	pSysAllocString       = oleaut32.NewProc("SysAllocString")
	pSysFreeString        = oleaut32.NewProc("SysFreeString")
	pSafeArrayGetUBound   = oleaut32.NewProc("SafeArrayGetUBound")
	pSafeArrayAccessData  = oleaut32.NewProc("SafeArrayAccessData")
	pSafeArrayUnaccessDat = oleaut32.NewProc("SafeArrayUnaccessData")
	pSafeArrayDestroy     = oleaut32.NewProc("SafeArrayDestroy")
)

var (
	clsidCUIAutomation = windows.GUID{Data1: 0xff48dba4, Data2: 0x60ef, Data3: 0x4201, Data4: [8]byte{0xaa, 0x87, 0x54, 0x10, 0x3e, 0xef, 0x59, 0x4e}}
	iidIUIAutomation   = windows.GUID{Data1: 0x30cbe57d, Data2: 0xd9d0, Data3: 0x452a, Data4: [8]byte{0xab, 0x13, 0x7a, 0xc5, 0xac, 0x48, 0x25, 0xee}}
)

// Pattern ids and their interfaces' ids.
var patterns = []struct {
	name string
	id   uintptr
	iid  windows.GUID
}{
	{"invoke", 10000, windows.GUID{Data1: 0xfb377fbe, Data2: 0x8ea6, Data3: 0x46d5, Data4: [8]byte{0x9c, 0x73, 0x64, 0x99, 0x64, 0x2d, 0x30, 0x59}}},
	{"value", 10002, windows.GUID{Data1: 0xa94cd8b1, Data2: 0x0844, Data3: 0x4cd6, Data4: [8]byte{0x9d, 0x2d, 0x64, 0x05, 0x37, 0xab, 0x39, 0xe9}}},
	{"range_value", 10003, windows.GUID{Data1: 0x59213f4f, Data2: 0x7346, Data3: 0x49e5, Data4: [8]byte{0xb1, 0x20, 0x80, 0x55, 0x59, 0x87, 0xa1, 0x48}}},
	{"scroll", 10004, windows.GUID{Data1: 0x88f4d42a, Data2: 0xe881, Data3: 0x459d, Data4: [8]byte{0xa7, 0x7c, 0x73, 0xbb, 0xbb, 0x7e, 0x02, 0xdc}}},
	{"expand_collapse", 10005, windows.GUID{Data1: 0x619be086, Data2: 0x1f4e, Data3: 0x4ee4, Data4: [8]byte{0xba, 0xfa, 0x21, 0x01, 0x28, 0x73, 0x87, 0x30}}},
	{"toggle", 10015, windows.GUID{Data1: 0x94cf8058, Data2: 0x9b8d, Data3: 0x4ab9, Data4: [8]byte{0x8b, 0xfd, 0x4c, 0xd0, 0xa3, 0x3c, 0x8c, 0x70}}},
	{"scroll_item", 10017, windows.GUID{Data1: 0xb488300f, Data2: 0xd015, Data3: 0x4f19, Data4: [8]byte{0x9c, 0x29, 0xbb, 0x59, 0x5e, 0x36, 0x45, 0xef}}},
}

// controlTypes are UIA's control type ids 50000 onwards, in order.
var controlTypes = []string{"Button", "Calendar", "CheckBox", "ComboBox", "Edit", "Hyperlink", "Image",
	"ListItem", "List", "Menu", "MenuBar", "MenuItem", "ProgressBar", "RadioButton", "ScrollBar", "Slider",
	"Spinner", "StatusBar", "Tab", "TabItem", "Text", "ToolBar", "ToolTip", "Tree", "TreeItem", "Custom",
	"Group", "Thumb", "DataGrid", "DataItem", "Document", "SplitButton", "Window", "Pane", "Header",
	"HeaderItem", "Table", "TitleBar", "Separator", "SemanticZoom", "AppBar"}

// HRESULTs that mean the element is gone or refused.
const (
	uiaElementNotAvailable = 0x80040201
	uiaElementNotEnabled   = 0x80040200
	uiaInvalidOperation    = 0x80131509
	uiaNoClickablePoint    = 0x80040202
)

// com is a COM interface pointer.
type com uintptr

// call invokes vtable slot i with the object as first argument and turns a
// failed HRESULT into an error.
func (c com) call(i int, args ...uintptr) error {
	vtbl := *(*[64]uintptr)(pointer(*(*uintptr)(pointer(uintptr(c)))))
	hr, _, _ := syscall.SyscallN(vtbl[i], append([]uintptr{uintptr(c)}, args...)...)
	switch uint32(hr) {
	case 0, 1: // S_OK, S_FALSE
		return nil
	case uiaElementNotAvailable:
		return ErrStale
	case uiaElementNotEnabled, uiaInvalidOperation, uiaNoClickablePoint:
		return fmt.Errorf("%w (HRESULT %#x)", ErrRefused, uint32(hr))
	}
	return fmt.Errorf("HRESULT %#x", uint32(hr))
}

func (c com) release() {
	if c != 0 {
		c.call(2)
	}
}

// IUIAutomation, IUIAutomationTreeWalker and IUIAutomationElement slots.
const (
	uiaElementFromHandle    = 6
	uiaGetControlViewWalker = 14
	walkerFirstChild        = 4
	walkerNextSibling       = 6
	elSetFocus              = 3
	elGetRuntimeID          = 4
	elGetCurrentPatternAs   = 14
	elProcessID             = 20
	elControlType           = 21
	elName                  = 23
	elHasKeyboardFocus      = 26
	elIsEnabled             = 28
	elHelpText              = 31
	elIsOffscreen           = 38
	elBoundingRectangle     = 43
)

type uia struct {
	auto   com
	walker com
	err    error
}

func newAutomation() automation {
	u := &uia{}
	const coinitApartmentThreaded = 2
	pCoInitializeEx.Call(0, coinitApartmentThreaded)
	const clsctxInprocServer = 1
	hr, _, _ := pCoCreateInstance.Call(uintptr(unsafe.Pointer(&clsidCUIAutomation)), 0, clsctxInprocServer,
		uintptr(unsafe.Pointer(&iidIUIAutomation)), uintptr(unsafe.Pointer(&u.auto)))
	if hr != 0 {
		u.err = fmt.Errorf("creating CUIAutomation: HRESULT %#x", uint32(hr))
		return u
	}
	if err := u.auto.call(uiaGetControlViewWalker, uintptr(unsafe.Pointer(&u.walker))); err != nil {
		u.err = fmt.Errorf("getting the control view walker: %w", err)
	}
	return u
}

func (u *uia) Available() error { return u.err }

func (u *uia) Window(hwnd uint32) (element, error) {
	var e com
	if err := u.auto.call(uiaElementFromHandle, uintptr(hwnd), uintptr(unsafe.Pointer(&e))); err != nil {
		return nil, fmt.Errorf("ElementFromHandle(%#x): %w", hwnd, err)
	}
	return e, nil
}

func (u *uia) Children(e element) ([]element, error) {
	var kids []element
	var c com
	if err := u.walker.call(walkerFirstChild, uintptr(e.(com)), uintptr(unsafe.Pointer(&c))); err != nil {
		return nil, err
	}
	for c != 0 && len(kids) < 100000 {
		kids = append(kids, c)
		var next com
		if err := u.walker.call(walkerNextSibling, uintptr(c), uintptr(unsafe.Pointer(&next))); err != nil {
			break
		}
		c = next
	}
	return kids, nil
}

func (u *uia) Release(e element) { e.(com).release() }

func bstr(e com, slot int) (string, error) {
	var b uintptr
	if err := e.call(slot, uintptr(unsafe.Pointer(&b))); err != nil {
		return "", err
	}
	if b == 0 {
		return "", nil
	}
	defer pSysFreeString.Call(b)
	return windows.UTF16PtrToString((*uint16)(pointer(b))), nil
}

func boolProp(e com, slot int) bool {
	var v int32
	return e.call(slot, uintptr(unsafe.Pointer(&v))) == nil && v != 0
}

func (u *uia) Info(e element) (elementInfo, error) {
	el := e.(com)
	var info elementInfo
	var pid, ct int32
	if err := el.call(elProcessID, uintptr(unsafe.Pointer(&pid))); err != nil {
		return info, err // the first read tells a gone element
	}
	info.PID = int(pid)
	var sa uintptr
	if err := el.call(elGetRuntimeID, uintptr(unsafe.Pointer(&sa))); err != nil {
		return info, err
	}
	info.RuntimeID = safeArrayInts(sa)
	if el.call(elControlType, uintptr(unsafe.Pointer(&ct))) == nil && ct >= 50000 && int(ct-50000) < len(controlTypes) {
		info.ControlType = controlTypes[ct-50000]
	}
	info.Name, _ = bstr(el, elName)
	info.Description, _ = bstr(el, elHelpText)
	info.Enabled = boolProp(el, elIsEnabled)
	info.Focused = boolProp(el, elHasKeyboardFocus)
	info.Offscreen = boolProp(el, elIsOffscreen)
	var r winRect
	if el.call(elBoundingRectangle, uintptr(unsafe.Pointer(&r))) == nil {
		b := r.rect()
		info.Bounds = &b
	}
	for _, p := range patterns {
		pat, err := u.pattern(el, p.name)
		if err != nil || pat == 0 {
			continue
		}
		info.Patterns = append(info.Patterns, p.name)
		switch p.name {
		case "toggle":
			var st int32
			if pat.call(4, uintptr(unsafe.Pointer(&st))) == nil {
				v := int(st)
				info.Toggle = &v
			}
		case "expand_collapse":
			var st int32
			if pat.call(5, uintptr(unsafe.Pointer(&st))) == nil {
				v := int(st)
				info.Expanded = &v
			}
		case "value":
			if v, err := bstr(pat, 4); err == nil {
				info.Value = &v
			}
			info.ReadOnly = boolProp(pat, 5)
		case "range_value":
			var cur, hi, lo, small float64
			pat.call(4, uintptr(unsafe.Pointer(&cur)))
			pat.call(6, uintptr(unsafe.Pointer(&hi)))
			pat.call(7, uintptr(unsafe.Pointer(&lo)))
			info.Range = &valueRange{Min: lo, Max: hi, Current: cur}
			if pat.call(9, uintptr(unsafe.Pointer(&small))) == nil && small > 0 {
				info.Range.Step = &small
			}
		}
		pat.release()
	}
	return info, nil
}

// pattern returns the element's pattern interface, or 0 when it has none.
func (u *uia) pattern(el com, name string) (com, error) {
	for _, p := range patterns {
		if p.name == name {
			var pat com
			err := el.call(elGetCurrentPatternAs, p.id, uintptr(unsafe.Pointer(&p.iid)), uintptr(unsafe.Pointer(&pat)))
			return pat, err
		}
	}
	return 0, errors.New("unknown pattern " + name)
}

func (u *uia) Do(e element, op patternOp, arg any) error {
	el := e.(com)
	if op == opFocus {
		return el.call(elSetFocus)
	}
	type method struct {
		pattern string
		slot    int
	}
	m, ok := map[patternOp]method{
		opInvoke: {"invoke", 3}, opToggle: {"toggle", 3}, opSetValue: {"value", 3}, opSetRange: {"range_value", 3},
		opExpand: {"expand_collapse", 3}, opCollapse: {"expand_collapse", 4}, opScroll: {"scroll", 3},
		opScrollIntoView: {"scroll_item", 3},
	}[op]
	if !ok {
		return fmt.Errorf("unknown op %s", op)
	}
	pat, err := u.pattern(el, m.pattern)
	if err != nil {
		return err
	}
	if pat == 0 {
		return errNoPattern
	}
	defer pat.release()
	switch v := arg.(type) {
	case string:
		s, err := windows.UTF16PtrFromString(v)
		if err != nil {
			return fmt.Errorf("%w: the text holds a NUL", ErrRefused)
		}
		b, _, _ := pSysAllocString.Call(uintptr(unsafe.Pointer(s)))
		defer pSysFreeString.Call(b)
		return pat.call(m.slot, b)
	case float64:
		// Go's stdcall also loads the first four arguments into XMM0-3,
		// where the x64 convention passes a double.
		return pat.call(m.slot, uintptr(*(*uint64)(unsafe.Pointer(&v))))
	case [2]int:
		return pat.call(m.slot, uintptr(v[0]), uintptr(v[1]))
	}
	return pat.call(m.slot)
}

// safeArrayInts copies a one-dimensional SAFEARRAY of int32 and frees it.
func safeArrayInts(sa uintptr) []int32 {
	if sa == 0 {
		return nil
	}
	defer pSafeArrayDestroy.Call(sa)
	var upper int32
	if hr, _, _ := pSafeArrayGetUBound.Call(sa, 1, uintptr(unsafe.Pointer(&upper))); hr != 0 {
		return nil
	}
	var data uintptr
	if hr, _, _ := pSafeArrayAccessData.Call(sa, uintptr(unsafe.Pointer(&data))); hr != 0 {
		return nil
	}
	defer pSafeArrayUnaccessDat.Call(sa)
	return append([]int32(nil), unsafe.Slice((*int32)(pointer(data)), upper+1)...)
}
