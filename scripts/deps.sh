#!/usr/bin/env bash
# Installs (as root) or names (otherwise) the Debian packages deskhand
# needs, in two sets:
#
#   build  building deskhand and its helper, and running it on X11
#          (make deps, make build)
#   test   the build set and what the tests drive: the reference tools,
#          the GUI apps, the Wayland compositors, Chromium (make check-deps,
#          make test, make check)
#   mutter the test set and what the helper's GNOME backend (cargo feature
#          mutter) builds against and its tests drive (make mutter-test)
#
# Usage: scripts/deps.sh [build|test|mutter]        install or name the missing ones
#        scripts/deps.sh --list [build|test|mutter] print the set, one a line
#
# Safe to run repeatedly.
set -euo pipefail

build=(
  # building the helper: the bundled libjpeg-turbo needs cmake and nasm
  cmake nasm pkg-config gcc
  # robotgo's X11 input (cgo)
  libx11-dev libxtst-dev
  # the display gate's round trip goes over XCB (cgo)
  libxcb1-dev
  # the Escape watcher reads XInput 2 raw key events (cgo)
  libxi-dev
  # the helper's KWin input links libxkbcommon
  libxkbcommon-dev
  # the private virtual desktop deskhand starts when DISPLAY is unset
  # (--virtual-display)
  xvfb openbox
  # the teaching tooltip's text (the helper finds it through fontconfig or
  # its known path)
  fonts-dejavu-core fontconfig
)

test_only=(
  # the input tests switch layouts (setxkbmap) and check pointer and
  # keyboard state (xinput); the key safety tests read and set XKB
  # controls (StickyKeys, MouseKeys)
  x11-xkb-utils xinput xkbset
  # turn-end notifications are tested on a private session bus
  dbus
  # the real-desktop test harness and its reference tools
  xterm zenity wmctrl xclip xdotool
  x11-apps x11-utils x11-xserver-utils imagemagick procps xfonts-base
  # a Tk REPL window (wish) for the interpreter-classification test
  tk
  # a terminal whose preferences window is a program of its own (the
  # app-family test)
  gnome-terminal
  # the shaped-window test program (X Shape extension), built with gcc
  libxext-dev
  # the Wayland tests: headless sway, a terminal and a GTK 3 probe, and
  # the reference tools for screenshots, the clipboard and typing
  sway foot grim wl-clipboard wtype python3-gi gir1.2-gtk-3.0
  # the accessibility tests: AT-SPI (bus launcher, registry), gdbus, and
  # GTK 3 and GTK 4 apps with every common widget, Chromium (a web page) and
  # PyQt5 (a Qt 5 app)
  at-spi2-core libglib2.0-bin gtk-3-examples gtk-4-examples chromium python3-pyqt5
  # the KDE tests: headless KWin (kwin_wayland --virtual) and wayland-info,
  # which shows which globals KWin grants a client
  kwin-wayland wayland-utils
  # the Windows helper's tests run it under Wine (64-bit); mingw builds
  # the DLL shim Wine 8 lacks
  wine wine64 gcc-mingw-w64-x86-64
)

mutter_only=(
  # the GNOME backend's pipewire crate binds libpipewire through bindgen,
  # which needs libclang
  libpipewire-0.3-dev libclang-dev
  # its tests: headless mutter with PipeWire (and its session manager) for
  # ScreenCast frames
  mutter pipewire wireplumber
)

list=false
if [[ ${1:-} == --list ]]; then
  list=true
  shift
fi
case ${1:-build} in
  build) packages=("${build[@]}") ;;
  test) packages=("${build[@]}" "${test_only[@]}") ;;
  mutter) packages=("${build[@]}" "${test_only[@]}" "${mutter_only[@]}") ;;
  *)
    echo "usage: scripts/deps.sh [--list] [build|test|mutter]" >&2
    exit 2
    ;;
esac

if $list; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

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
