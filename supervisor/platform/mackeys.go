package platform

// MacKey is a key of a Mac keyboard whose virtual key code does not depend
// on the keyboard layout (Return, the arrows, F-keys, the modifiers).
type MacKey struct {
	// Keysym is the X keysym deskhand's key names resolve to (XK_Return).
	Keysym uint32
	// Code is the macOS virtual key code (kVK_Return, HIToolbox Events.h).
	Code uint16
	// Modifier is set for modifier keys.
	Modifier Modifier
}

// MacKeys lists the layout-independent keys by X keysym. Characters are
// not here: their key depends on the layout, so deskhand types them as
// Unicode events instead.
var MacKeys = []MacKey{
	{0xff0d, 0x24, 0},       // Return
	{0xff8d, 0x4c, 0},       // KP_Enter
	{0xff09, 0x30, 0},       // Tab
	{0xfe20, 0x30, 0},       // ISO_Left_Tab (shift+Tab)
	{0x0020, 0x31, 0},       // space
	{0xff08, 0x33, 0},       // BackSpace: the Mac "delete" key
	{0xff1b, 0x35, 0},       // Escape
	{0xffff, 0x75, 0},       // Delete: the Mac "forward delete" key
	{0xff6a, 0x72, 0},       // Help
	{0xff50, 0x73, 0},       // Home
	{0xff57, 0x77, 0},       // End
	{0xff55, 0x74, 0},       // Prior (Page Up)
	{0xff56, 0x79, 0},       // Next (Page Down)
	{0xff51, 0x7b, 0},       // Left
	{0xff53, 0x7c, 0},       // Right
	{0xff54, 0x7d, 0},       // Down
	{0xff52, 0x7e, 0},       // Up
	{0xffbe, 0x7a, 0},       // F1
	{0xffbf, 0x78, 0},       // F2
	{0xffc0, 0x63, 0},       // F3
	{0xffc1, 0x76, 0},       // F4
	{0xffc2, 0x60, 0},       // F5
	{0xffc3, 0x61, 0},       // F6
	{0xffc4, 0x62, 0},       // F7
	{0xffc5, 0x64, 0},       // F8
	{0xffc6, 0x65, 0},       // F9
	{0xffc7, 0x6d, 0},       // F10
	{0xffc8, 0x67, 0},       // F11
	{0xffc9, 0x6f, 0},       // F12
	{0xffca, 0x69, 0},       // F13
	{0xffcb, 0x6b, 0},       // F14
	{0xffcc, 0x71, 0},       // F15
	{0xffcd, 0x6a, 0},       // F16
	{0xffce, 0x40, 0},       // F17
	{0xffcf, 0x4f, 0},       // F18
	{0xffd0, 0x50, 0},       // F19
	{0xffd1, 0x5a, 0},       // F20
	{0xffe5, 0x39, 0},       // Caps_Lock (toggles; never held as a modifier)
	{0xffe1, 0x38, Shift},   // Shift_L
	{0xffe2, 0x3c, Shift},   // Shift_R
	{0xffe3, 0x3b, Control}, // Control_L
	{0xffe4, 0x3e, Control}, // Control_R
	{0xffe9, 0x3a, Option},  // Alt_L: Option
	{0xffea, 0x3d, Option},  // Alt_R
	{0xffe7, 0x3a, Option},  // Meta_L: Option, as XQuartz maps it
	{0xffeb, 0x37, Command}, // Super_L: Command
	{0xffec, 0x36, Command}, // Super_R
	{0xfe03, 0x3d, Option},  // ISO_Level3_Shift (AltGr): right Option
	{0xff7e, 0x3d, Option},  // Mode_switch
	{0x0000ffb0, 0x52, 0},   // KP_0
	{0x0000ffb1, 0x53, 0},   // KP_1
	{0x0000ffb2, 0x54, 0},   // KP_2
	{0x0000ffb3, 0x55, 0},   // KP_3
	{0x0000ffb4, 0x56, 0},   // KP_4
	{0x0000ffb5, 0x57, 0},   // KP_5
	{0x0000ffb6, 0x58, 0},   // KP_6
	{0x0000ffb7, 0x59, 0},   // KP_7
	{0x0000ffb8, 0x5b, 0},   // KP_8
	{0x0000ffb9, 0x5c, 0},   // KP_9
	{0x0000ffae, 0x41, 0},   // KP_Decimal
	{0x0000ffab, 0x45, 0},   // KP_Add
	{0x0000ffad, 0x4e, 0},   // KP_Subtract
	{0x0000ffaa, 0x43, 0},   // KP_Multiply
	{0x0000ffaf, 0x4b, 0},   // KP_Divide
	{0x0000ffbd, 0x51, 0},   // KP_Equal
}

// macANSI maps the characters of the US (ANSI) layout to the virtual key
// codes of their keys (kVK_ANSI_*).
var macANSI = map[rune]uint16{
	'a': 0x00, 's': 0x01, 'd': 0x02, 'f': 0x03, 'h': 0x04, 'g': 0x05, 'z': 0x06, 'x': 0x07,
	'c': 0x08, 'v': 0x09, 'b': 0x0b, 'q': 0x0c, 'w': 0x0d, 'e': 0x0e, 'r': 0x0f, 'y': 0x10,
	't': 0x11, '1': 0x12, '2': 0x13, '3': 0x14, '4': 0x15, '6': 0x16, '5': 0x17, '=': 0x18,
	'9': 0x19, '7': 0x1a, '-': 0x1b, '8': 0x1c, '0': 0x1d, ']': 0x1e, 'o': 0x1f, 'u': 0x20,
	'[': 0x21, 'i': 0x22, 'p': 0x23, 'l': 0x25, 'j': 0x26, '\'': 0x27, 'k': 0x28, ';': 0x29,
	'\\': 0x2a, ',': 0x2b, '/': 0x2c, 'n': 0x2d, 'm': 0x2e, '.': 0x2f, '`': 0x32,
}
