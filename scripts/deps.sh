#!/usr/bin/env bash
# Installs (as root) or names (otherwise) the Debian packages deskhand's
# build and tests need. Called by `make deps`; safe to run repeatedly.
set -euo pipefail

packages=(
  # building the helper: the bundled libjpeg-turbo needs cmake and nasm
  cmake nasm pkg-config gcc
  # robotgo's X11 input (cgo); the input tests switch layouts (setxkbmap)
  # and check pointer and keyboard state (xinput)
  libx11-dev libxtst-dev x11-xkb-utils xinput
  # the display gate's round trip goes over XCB (cgo)
  libxcb1-dev
  # the key safety tests read and set XKB controls (StickyKeys, MouseKeys)
  xkbset
  # the Escape watcher reads XInput 2 raw key events (cgo); turn-end
  # notifications are tested on a private session bus (dbus-daemon)
  libxi-dev dbus
  # the shaped-window test program (testdata/shapedwin.c) links Xext
  libxext-dev
  # the real-desktop test harness and its reference tools
  xvfb openbox xterm zenity wmctrl xclip xdotool
  x11-apps x11-utils x11-xserver-utils imagemagick procps xfonts-base
  # a Tk REPL window (wish) for the interpreter-classification test
  tk
  # the teaching tooltip's text (the helper finds it through fontconfig or
  # its known path)
  fonts-dejavu-core fontconfig
  # the Wayland tests: headless sway, a terminal and a GTK 3 probe, and
  # the reference tools for screenshots, the clipboard and typing
  sway foot grim wl-clipboard wtype python3-gi gir1.2-gtk-3.0
  # the accessibility tests: AT-SPI (bus launcher, registry), gdbus, and
  # GTK 3 and GTK 4 apps with every common widget, Chromium (a web page) and
  # PyQt5 (a Qt 5 app)
  at-spi2-core libglib2.0-bin gtk-3-examples gtk-4-examples chromium python3-pyqt5
  # the GNOME tests: headless mutter with PipeWire (and its session
  # manager) for ScreenCast frames; the helper's pipewire crate binds
  # libpipewire through bindgen, which needs libclang
  mutter pipewire wireplumber libpipewire-0.3-dev libclang-dev
  # the KDE tests: headless KWin (kwin_wayland --virtual) and wayland-info,
  # which shows which globals KWin grants a client
  kwin-wayland wayland-utils
  # KWin input: the helper reads the compositor's keymap with libxkbcommon
  # (the xkbcommon crate links it) to find the key that types each character
  libxkbcommon-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "deskhand needs these Debian packages; install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >&2
