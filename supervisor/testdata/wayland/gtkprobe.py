#!/usr/bin/python3
"""A GTK 3 window for the Wayland tests (sway's and KWin's): it records
what the user did to it in a file, so a test sees input arrive through the
app itself.

Usage: gtkprobe.py MODE OUT [fullscreen], MODE one of:
  button  one button filling the window; each click appends "clicked"
  scroll  a tall list in a scrolled window; each scroll appends the offset
  drag    a drawing area; a press-drag-release appends "drag X0 Y0 X1 Y1"
          (in the window's coordinates)
  entry   a text entry; every change rewrites OUT with the entry's text,
          each key press appends "press HARDWARE_KEYCODE KEYVAL_NAME" to
          OUT.keys (what the compositor's layout made of the key), and
          OUT.focus appears once the window has the keyboard
With fullscreen the window covers the screen, so its widgets sit at known
screen points without asking the compositor where the window went, and
window coordinates are screen coordinates.
"""
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, Gtk  # noqa: E402

mode, out = sys.argv[1], sys.argv[2]
fullscreen = sys.argv[3:] == ["fullscreen"]


def record(line):
    with open(out, "a") as f:
        f.write(line + "\n")


def rewrite(text):
    # Whole or not at all: the test reads OUT while the entry changes.
    with open(out + ".tmp", "w") as f:
        f.write(text)
    os.replace(out + ".tmp", out)


win = Gtk.Window(title="deskhand probe " + mode)
win.connect("destroy", Gtk.main_quit)
if mode == "button":
    b = Gtk.Button(label="Press me")
    b.connect("clicked", lambda _: record("clicked"))
    win.add(b)
elif mode == "scroll":
    sw = Gtk.ScrolledWindow()
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
    for i in range(400):
        box.pack_start(Gtk.Label(label="row %d" % i), False, False, 0)
    sw.add(box)
    sw.get_vadjustment().connect(
        "value-changed", lambda a: record("scrolled %d" % a.get_value()))
    win.add(sw)
elif mode == "drag":
    area = Gtk.DrawingArea()
    area.add_events(0xFFFFFF)
    start = {}

    def press(_, e):
        start["p"] = (int(e.x), int(e.y))

    def release(_, e):
        x0, y0 = start.get("p", (-1, -1))
        record("drag %d %d %d %d" % (x0, y0, int(e.x), int(e.y)))

    area.connect("button-press-event", press)
    area.connect("button-release-event", release)
    win.add(area)
elif mode == "entry":
    entry = Gtk.Entry()
    entry.connect("changed", lambda e: rewrite(e.get_text()))
    win.add(entry)

    def record_focus(*_):
        with open(out + ".focus", "w") as f:
            f.write("focused\n")
        return False

    def record_key(_, e):
        with open(out + ".keys", "a") as f:
            f.write("press %d %s\n" % (e.hardware_keycode, Gdk.keyval_name(e.keyval)))
        return False

    win.connect("focus-in-event", record_focus)
    win.connect("key-press-event", record_key)
else:
    sys.exit("unknown mode " + mode)
if fullscreen:
    win.fullscreen()
win.show_all()
Gtk.main()
