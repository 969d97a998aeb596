#!/usr/bin/python3
"""A GTK 3 window for the GNOME (mutter) tests. Mutter gives no client a
window list, so the test finds the window by colour in a screenshot:

  a 320x200 area of a colour nothing else draws, rgb(23, 201, 137), below
  it a button of another such colour, rgb(201, 23, 180), and below that a
  text entry of a third, rgb(37, 89, 211).

Usage: probe.py OUT. It appends "area W H" each time the area's size is
allocated, "clicked" each time the button is clicked, "entry focused" when
the entry takes the keyboard focus and "text T" each time its text changes
to T.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, Gtk  # noqa: E402

out = sys.argv[1]


def record(line):
    with open(out, "a") as f:
        f.write(line + "\n")


css = Gtk.CssProvider()
# Every state the same flat colour, so hover and press keep it findable.
css.load_from_data(b"""
#probe-area { background-color: rgb(23, 201, 137); color: rgb(23, 201, 137); }
#probe-entry, #probe-entry:focus {
  background-image: none; background-color: rgb(37, 89, 211);
  border: none; box-shadow: none; color: white;
}
#probe-button, #probe-button:hover, #probe-button:active {
  background-image: none; background-color: rgb(201, 23, 180);
  border: none; box-shadow: none; color: rgb(201, 23, 180);
}
""")
Gtk.StyleContext.add_provider_for_screen(
    Gdk.Screen.get_default(), css, Gtk.STYLE_PROVIDER_PRIORITY_USER)

win = Gtk.Window(title="deskhand mutter probe")
win.connect("destroy", Gtk.main_quit)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
# A label draws its CSS background (no cairo binding needed).
area = Gtk.Label(label="")
area.set_name("probe-area")
area.set_size_request(320, 200)
area.connect("size-allocate", lambda _, a: record("area %d %d" % (a.width, a.height)))
button = Gtk.Button(label="Press me")
button.set_name("probe-button")
button.set_size_request(320, 80)
button.connect("clicked", lambda _: record("clicked"))
entry = Gtk.Entry()
entry.set_name("probe-entry")
entry.set_size_request(320, 60)
entry.connect("focus-in-event", lambda *_: record("entry focused"))
entry.connect("changed", lambda e: record("text " + e.get_text()))
box.pack_start(area, False, False, 0)
box.pack_start(button, False, False, 0)
box.pack_start(entry, False, False, 0)
win.add(box)
win.set_resizable(False)
win.show_all()
entry.grab_focus()
Gtk.main()
