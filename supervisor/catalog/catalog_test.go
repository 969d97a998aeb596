package catalog

import (
	"strings"
	"testing"

	"github.com/deskhand/deskhand/bridge"
)

func TestTierParseAndString(t *testing.T) {
	for _, tier := range []Tier{TierNone, TierRead, TierClick, TierFull} {
		got, err := ParseTier(strings.ToUpper(tier.String()))
		if err != nil || got != tier {
			t.Errorf("ParseTier(%q) = %v, %v, want %v", tier.String(), got, err, tier)
		}
	}
	if _, err := ParseTier("admin"); err == nil || !strings.Contains(err.Error(), "read, click or full") {
		t.Errorf("ParseTier(%q) error = %v, want one naming the tiers", "admin", err)
	}
	if !(TierNone < TierRead && TierRead < TierClick && TierClick < TierFull) {
		t.Error("tiers are not ordered none < read < click < full")
	}
	var tier Tier
	if err := tier.UnmarshalText([]byte("click")); err != nil || tier != TierClick {
		t.Errorf("UnmarshalText(click) = %v, %v", tier, err)
	}
}

func TestEmbeddedCatalogParses(t *testing.T) {
	c, err := Parse(appsJSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.apps) < 150 {
		t.Errorf("catalog has %d apps, want the full lists (>= 150)", len(c.apps))
	}
}

// The Linux identities the issue names, as real X clients report them.
func TestClassifyLinux(t *testing.T) {
	tests := []struct {
		name     string
		app      bridge.App
		category string
		tier     Tier
		sens     string
	}{
		// Browsers → read.
		{"Firefox", bridge.App{Instance: "Navigator", Class: "firefox", Exe: "/usr/lib/firefox/firefox", DesktopID: "firefox"}, "browser", TierRead, ""},
		{"Firefox ESR", bridge.App{Instance: "Navigator", Class: "firefox-esr", Exe: "/usr/lib/firefox-esr/firefox-esr", DesktopID: "firefox-esr"}, "browser", TierRead, ""},
		{"Firefox flatpak", bridge.App{Class: "firefox", DesktopID: "org.mozilla.firefox"}, "browser", TierRead, ""},
		{"Chromium", bridge.App{Instance: "chromium", Class: "Chromium", Exe: "/usr/lib/chromium/chromium"}, "browser", TierRead, ""},
		{"Chrome", bridge.App{Instance: "google-chrome", Class: "Google-chrome", Exe: "/opt/google/chrome/chrome", DesktopID: "google-chrome"}, "browser", TierRead, ""},
		{"Brave", bridge.App{Instance: "brave-browser", Class: "Brave-browser", Exe: "/opt/brave.com/brave/brave"}, "browser", TierRead, ""},
		{"Vivaldi", bridge.App{Instance: "vivaldi-stable", Class: "Vivaldi-stable", Exe: "/opt/vivaldi/vivaldi-bin"}, "browser", TierRead, ""},
		{"Opera", bridge.App{Instance: "opera", Class: "Opera", Exe: "/usr/lib/x86_64-linux-gnu/opera/opera"}, "browser", TierRead, ""},
		{"Edge", bridge.App{Instance: "microsoft-edge", Class: "Microsoft-edge", Exe: "/opt/microsoft/msedge/msedge"}, "browser", TierRead, ""},
		{"Epiphany", bridge.App{Instance: "epiphany", Class: "Epiphany", DesktopID: "org.gnome.Epiphany"}, "browser", TierRead, ""},
		// Terminals → click, shell warning.
		{"GNOME Terminal", bridge.App{Instance: "gnome-terminal-server", Class: "Gnome-terminal", Exe: "/usr/libexec/gnome-terminal-server", DesktopID: "org.gnome.Terminal"}, "terminal", TierClick, SensitiveShell},
		{"Konsole", bridge.App{Instance: "konsole", Class: "konsole", Exe: "/usr/bin/konsole", DesktopID: "org.kde.konsole"}, "terminal", TierClick, SensitiveShell},
		{"xterm", bridge.App{Instance: "xterm", Class: "XTerm", Exe: "/usr/bin/xterm", DesktopID: "debian-xterm"}, "terminal", TierClick, SensitiveShell},
		{"xterm bare", bridge.App{Instance: "xterm", Class: "XTerm"}, "terminal", TierClick, SensitiveShell},
		{"Alacritty", bridge.App{Instance: "Alacritty", Class: "Alacritty", Exe: "/usr/bin/alacritty"}, "terminal", TierClick, SensitiveShell},
		{"kitty", bridge.App{Instance: "kitty", Class: "kitty", Exe: "/usr/bin/kitty"}, "terminal", TierClick, SensitiveShell},
		{"WezTerm", bridge.App{Instance: "org.wezfurlong.wezterm", Class: "org.wezfurlong.wezterm", Exe: "/usr/bin/wezterm-gui"}, "terminal", TierClick, SensitiveShell},
		{"Tilix", bridge.App{Instance: "tilix", Class: "Tilix", Exe: "/usr/bin/tilix", DesktopID: "com.gexperts.Tilix"}, "terminal", TierClick, SensitiveShell},
		{"foot", bridge.App{Exe: "/usr/bin/foot"}, "terminal", TierClick, SensitiveShell},
		{"urxvt", bridge.App{Instance: "urxvt", Class: "URxvt", Exe: "/usr/bin/rxvt-unicode"}, "terminal", TierClick, SensitiveShell},
		// IDEs → click.
		{"VS Code", bridge.App{Instance: "code", Class: "Code", Exe: "/usr/share/code/code", DesktopID: "code"}, "ide", TierClick, ""},
		{"Codium", bridge.App{Instance: "vscodium", Class: "VSCodium", Exe: "/usr/share/codium/codium"}, "ide", TierClick, ""},
		{"Cursor", bridge.App{Instance: "cursor", Class: "Cursor", Exe: "/tmp/.mount_Cursor/cursor"}, "ide", TierClick, ""},
		{"IntelliJ", bridge.App{Instance: "jetbrains-idea-ce", Class: "jetbrains-idea-ce", Exe: "/opt/idea/jbr/bin/java"}, "ide", TierClick, ""},
		{"PyCharm", bridge.App{Instance: "jetbrains-pycharm", Class: "jetbrains-pycharm", DesktopID: "jetbrains-pycharm"}, "ide", TierClick, ""},
		{"CLion flatpak", bridge.App{DesktopID: "com.jetbrains.CLion"}, "ide", TierClick, ""},
		{"Sublime Text", bridge.App{Instance: "sublime_text", Class: "Sublime_text", Exe: "/opt/sublime_text/sublime_text"}, "ide", TierClick, ""},
		{"Emacs", bridge.App{Instance: "emacs", Class: "Emacs", Exe: "/usr/bin/emacs-gtk"}, "ide", TierClick, ""},
		{"gVim", bridge.App{Instance: "gvim", Class: "Gvim", Exe: "/usr/bin/vim.gtk3"}, "ide", TierClick, ""},
		{"Kate", bridge.App{Instance: "kate", Class: "kate", DesktopID: "org.kde.kate"}, "ide", TierClick, ""},
		// Trading, finance, crypto wallets → read.
		{"Electrum", bridge.App{Instance: "electrum", Class: "Electrum", Exe: "/usr/bin/electrum"}, "trading", TierRead, ""},
		{"Ledger Live", bridge.App{Class: "Ledger Live", Exe: "/opt/ledger-live/ledger-live-desktop"}, "trading", TierRead, ""},
		{"GnuCash", bridge.App{Instance: "gnucash", Class: "Gnucash", DesktopID: "gnucash"}, "trading", TierRead, ""},
		// Media and reading → policy-denied.
		{"Spotify", bridge.App{Instance: "spotify", Class: "Spotify", Exe: "/usr/share/spotify/spotify"}, "media", TierNone, ""},
		// Warned, full tier.
		{"Nautilus", bridge.App{Instance: "org.gnome.Nautilus", Class: "org.gnome.Nautilus", Exe: "/usr/bin/nautilus"}, "file_manager", TierFull, SensitiveFileManager},
		{"Thunar", bridge.App{Instance: "thunar", Class: "Thunar"}, "file_manager", TierFull, SensitiveFileManager},
		{"GNOME Settings", bridge.App{Instance: "gnome-control-center", Class: "Gnome-control-center", DesktopID: "org.gnome.Settings"}, "system_settings", TierFull, SensitiveSystemSettings},
		// Unknown apps: full, no warning.
		{"zenity", bridge.App{Name: "Zenity", Instance: "zenity", Class: "Zenity", Exe: "/usr/bin/zenity"}, "", TierFull, ""},
		{"gnome music", bridge.App{Name: "Music", Instance: "gnome-music", Class: "Gnome-music", DesktopID: "org.gnome.Music"}, "", TierFull, ""},
		{"window named like a browser", bridge.App{Name: "Firefox", Instance: "myapp", Class: "MyApp"}, "", TierFull, ""},
	}
	for _, tt := range tests {
		e := Classify(IdentityOf(tt.app))
		if e.Category != tt.category || e.DefaultTier != tt.tier || e.Sensitive != tt.sens || e.PolicyDenied != (tt.category == "media" || tt.category == "reading") {
			t.Errorf("%s: Classify(%+v) = %+v, want category %q tier %v sensitive %q", tt.name, tt.app, e, tt.category, tt.tier, tt.sens)
		}
	}
}

// The macOS bundle ids seed 001 counts, so the macOS helper needs no
// policy code of its own.
func TestClassifyMacOS(t *testing.T) {
	tests := map[string]string{
		"com.apple.Safari": "browser", "com.google.Chrome": "browser", "org.mozilla.firefox": "browser",
		"company.thebrowser.Browser": "browser", "com.microsoft.edgemac": "browser", "com.operasoftware.Opera": "browser",
		"com.brave.Browser": "browser", "com.vivaldi.Vivaldi": "browser",
		"com.apple.Terminal": "terminal", "com.googlecode.iterm2": "terminal", "com.mitchellh.ghostty": "terminal",
		"com.microsoft.VSCode": "ide", "com.todesktop.230313mzl4w4u92": "ide", "com.jetbrains.intellij": "ide",
		"com.jetbrains.pycharm.ce": "ide", "com.apple.dt.Xcode": "ide",
		"com.binance.BinanceDesktop": "trading", "com.webull.desktop.v1": "trading", "com.interactivebrokers.tws": "trading",
		"com.kraken.desktop": "trading", "com.ledger.live": "trading",
		"com.spotify.client": "media", "com.apple.Music": "media", "com.apple.TV": "media", "com.amazon.Kindle": "reading",
		"com.apple.iBooksX": "reading", "com.apple.finder": "file_manager", "com.apple.systempreferences": "system_settings",
	}
	for bundle, cat := range tests {
		if e := Classify(Identity{BundleID: bundle, Name: "whatever"}); e.Category != cat {
			t.Errorf("Classify(bundle %q) category = %q, want %q", bundle, e.Category, cat)
		}
	}
}

func TestFind(t *testing.T) {
	tests := []struct{ query, name, category string }{
		{"firefox", "Firefox", "browser"},
		{"Google Chrome", "Google Chrome", "browser"},
		{"org.gnome.Terminal", "GNOME Terminal", "terminal"},
		{"XTerm", "XTerm", "terminal"},
		{"debian-xterm.desktop", "XTerm", "terminal"},
		{"PyCharm", "JetBrains IDE", "ide"},
		{"com.apple.Safari", "Safari", "browser"},
		{"Netflix", "Netflix", "media"},
		{"vs code", "Visual Studio Code", "ide"},
	}
	for _, tt := range tests {
		e, id, ok := Find(tt.query)
		if !ok || e.Name != tt.name || e.Category != tt.category {
			t.Errorf("Find(%q) = %+v, %v, want %q in %q", tt.query, e, ok, tt.name, tt.category)
			continue
		}
		if back := Classify(id); back != e {
			t.Errorf("Find(%q) identity %+v classifies to %+v, want %+v", tt.query, id, back, e)
		}
	}
	if e, _, ok := Find("zenity"); ok {
		t.Errorf("Find(zenity) = %+v, want not found", e)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"unknown field", `{"categories": {}, "apps": [], "extra": 1}`, "unknown field"},
		{"unknown category", `{"categories": {"browser": {"tier": "read"}}, "apps": [{"name": "X", "category": "game", "exe": ["x"]}]}`, "unknown category"},
		{"no identifier", `{"categories": {"browser": {"tier": "read"}}, "apps": [{"name": "X", "category": "browser"}]}`, "no identifier"},
		{"bad tier", `{"categories": {"browser": {"tier": "admin"}}, "apps": []}`, "unknown tier"},
		{"no tier", `{"categories": {"browser": {}}, "apps": []}`, "needs a tier"},
		{"bad label", `{"categories": {"browser": {"tier": "read", "sensitive": "scary"}}, "apps": []}`, "sensitive label"},
		{"duplicate id", `{"categories": {"browser": {"tier": "read"}}, "apps": [{"name": "A", "category": "browser", "exe": ["x"]}, {"name": "B", "category": "browser", "exe": ["X"]}]}`, "already belongs"},
		{"duplicate name", `{"categories": {"browser": {"tier": "read"}}, "apps": [{"name": "A", "category": "browser", "exe": ["x"]}, {"name": "a", "category": "browser", "exe": ["y"]}]}`, "already belongs"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestWildcardAndOrder(t *testing.T) {
	c, err := Parse([]byte(`{"categories": {"ide": {"tier": "click"}, "browser": {"tier": "read"}, "other": {"tier": "full"}},
		"apps": [{"name": "JB", "category": "ide", "wm_class": ["jetbrains-*"]},
		         {"name": "Exact", "category": "browser", "wm_class": ["jetbrains-browser"], "exe": ["jb"]},
		         {"name": "Free", "category": "other", "exe": ["free"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   Identity
		want string
	}{
		{Identity{Class: "JetBrains-Rider"}, "JB"},
		{Identity{Class: "jetbrains"}, ""},
		// The earlier entry wins when a wildcard and an exact id match.
		{Identity{Class: "jetbrains-browser"}, "JB"},
		// A stronger identifier wins over a weaker one.
		{Identity{Class: "other", Exe: "jb"}, "Exact"},
		// ... except that the executable wins when it is more
		// restrictive: a window chooses its WM_CLASS, not its program.
		{Identity{Class: "jetbrains-x", Exe: "jb"}, "Exact"},
		{Identity{Class: "jetbrains-x", Exe: "free"}, "JB"},
		// Names only count without platform identifiers.
		{Identity{Name: "exact"}, "Exact"},
		{Identity{Name: "exact", Exe: "unknown"}, ""},
	} {
		if got := c.Classify(tt.id).Name; got != tt.want {
			t.Errorf("Classify(%+v) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// TestClassifyInterpreters: REPL windows and any window whose program is
// an interpreter or a shell get the click tier and the shell warning,
// whatever WM_CLASS they give themselves.
func TestClassifyInterpreters(t *testing.T) {
	tests := []struct {
		name     string
		app      bridge.App
		category string
	}{
		{"IDLE", bridge.App{Instance: "idle", Class: "Idle", Exe: "/usr/bin/python3.11", DesktopID: "idle-python3.11"}, "repl"},
		{"IDLE by class", bridge.App{Instance: "idle", Class: "Idle"}, "repl"},
		{"Jupyter QtConsole", bridge.App{Instance: "jupyter-qtconsole", Class: "jupyter-qtconsole", Exe: "/usr/bin/python3.11"}, "repl"},
		{"TkCon", bridge.App{Instance: "tkcon", Class: "TkCon", Exe: "/usr/bin/wish8.6"}, "repl"},
		{"Octave", bridge.App{Instance: "octave-gui", Class: "octave-gui", Exe: "/usr/bin/octave-gui"}, "repl"},
		{"tkinter app", bridge.App{Instance: "myrepl", Class: "Tk", Exe: "/usr/bin/python3.11"}, "interpreter"},
		{"pyenv python", bridge.App{Instance: "tool", Class: "Tool", Exe: "/root/.pyenv/versions/3.12.1/bin/python3.12"}, "interpreter"},
		{"wish script", bridge.App{Instance: "tclrepl", Class: "Tclrepl", Exe: "/usr/bin/wish8.6"}, "interpreter"},
		{"perl Tk", bridge.App{Instance: "ptkdb", Class: "Ptkdb", Exe: "/usr/bin/perl"}, "interpreter"},
		{"ruby", bridge.App{Class: "Shoes", Exe: "/usr/bin/ruby3.1"}, "interpreter"},
		{"node", bridge.App{Class: "Nodegui", Exe: "/usr/bin/node"}, "interpreter"},
		{"lua", bridge.App{Class: "Love", Exe: "/usr/bin/lua5.4"}, "interpreter"},
		{"bash", bridge.App{Class: "Yad", Exe: "/usr/bin/bash"}, "interpreter"},
		// A Python window that calls itself a full-tier app is still an
		// interpreter: its program decides against its WM_CLASS.
		{"python as Nautilus", bridge.App{Instance: "org.gnome.Nautilus", Class: "org.gnome.Nautilus", Exe: "/usr/bin/python3.11", DesktopID: "org.gnome.Nautilus"}, "interpreter"},
		{"python as zenity", bridge.App{Instance: "zenity", Class: "Zenity", Exe: "/usr/bin/python3"}, "interpreter"},
		// IDEs with a language console carry the warning too.
		{"Spyder", bridge.App{Instance: "spyder", Class: "Spyder", Exe: "/usr/bin/python3.11"}, "ide"},
		{"Thonny", bridge.App{Instance: "thonny", Class: "Thonny", Exe: "/usr/bin/python3.11"}, "ide"},
	}
	for _, tt := range tests {
		e := Classify(IdentityOf(tt.app))
		if e.Category != tt.category || e.DefaultTier != TierClick || e.Sensitive != SensitiveShell {
			t.Errorf("%s: Classify(%+v) = %+v, want category %q, click tier, shell warning", tt.name, tt.app, e, tt.category)
		}
		if e.Generic != (tt.category == "interpreter") {
			t.Errorf("%s: Generic = %v", tt.name, e.Generic)
		}
	}
	// Runtimes neither raise nor lower what the app is known as.
	for _, tt := range []struct {
		app  bridge.App
		want string
	}{
		{bridge.App{Instance: "jetbrains-idea-ce", Class: "jetbrains-idea-ce", Exe: "/opt/idea/jbr/bin/java"}, "ide"},
		{bridge.App{Instance: "org.gnome.Nautilus", Class: "org.gnome.Nautilus", Exe: "/usr/bin/nautilus"}, "file_manager"},
		{bridge.App{Instance: "foo", Class: "Foo", Exe: "/usr/bin/java"}, "runtime"},
	} {
		if e := Classify(IdentityOf(tt.app)); e.Category != tt.want {
			t.Errorf("Classify(%+v) = %+v, want category %q", tt.app, e, tt.want)
		}
	}
	if e, _, ok := Find("python3"); !ok || !e.Generic || e.Sensitive != SensitiveShell {
		t.Errorf("Find(python3) = %+v, %v; want the generic interpreter entry", e, ok)
	}
	if e, _, ok := Find("idle3"); !ok || e.Name != "IDLE" {
		t.Errorf("Find(idle3) = %+v, %v; want IDLE", e, ok)
	}
}

// TestClassifyWindows: Windows executables, whole paths as the helper
// reports them, match the catalog without their ".exe", and packaged apps
// match by App User Model ID.
func TestClassifyWindows(t *testing.T) {
	tests := []struct {
		name     string
		app      bridge.App
		category string
		tier     Tier
		denied   bool
	}{
		{"cmd", bridge.App{Exe: `C:\Windows\System32\cmd.exe`}, "terminal", TierClick, false},
		{"cmd upper case", bridge.App{Exe: `C:\WINDOWS\SYSTEM32\CMD.EXE`}, "terminal", TierClick, false},
		{"console host under Wine", bridge.App{Exe: `C:\windows\system32\conhost.exe`, Class: "ConsoleWindowClass"}, "terminal", TierClick, false},
		{"Windows PowerShell", bridge.App{Exe: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`}, "terminal", TierClick, false},
		{"PowerShell 7", bridge.App{Exe: `C:\Program Files\PowerShell\7\pwsh.exe`}, "terminal", TierClick, false},
		{"Windows Terminal", bridge.App{Exe: `C:\Program Files\WindowsApps\Microsoft.WindowsTerminal_1.21.3231.0_x64__8wekyb3d8bbwe\WindowsTerminal.exe`, AUMID: "Microsoft.WindowsTerminal_8wekyb3d8bbwe!App"}, "terminal", TierClick, false},
		{"Windows Terminal by AUMID", bridge.App{AUMID: "Microsoft.WindowsTerminal_8wekyb3d8bbwe!App"}, "terminal", TierClick, false},
		{"VS Code", bridge.App{Exe: `C:\Users\u\AppData\Local\Programs\Microsoft VS Code\Code.exe`, Class: "Chrome_WidgetWin_1"}, "ide", TierClick, false},
		{"IntelliJ", bridge.App{Exe: `C:\Program Files\JetBrains\IntelliJ IDEA 2025.1\bin\idea64.exe`}, "ide", TierClick, false},
		{"Visual Studio", bridge.App{Exe: `C:\Program Files\Microsoft Visual Studio\2022\Community\Common7\IDE\devenv.exe`}, "ide", TierClick, false},
		{"Chrome", bridge.App{Exe: `C:\Program Files\Google\Chrome\Application\chrome.exe`, Class: "Chrome_WidgetWin_1"}, "browser", TierRead, false},
		{"Edge", bridge.App{Exe: `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`}, "browser", TierRead, false},
		{"Firefox", bridge.App{Exe: `C:\Program Files\Mozilla Firefox\firefox.exe`, Class: "MozillaWindowClass"}, "browser", TierRead, false},
		{"Interactive Brokers", bridge.App{Exe: `C:\Jts\tws.exe`}, "trading", TierRead, false},
		{"Netflix", bridge.App{AUMID: "4DF9E0F8.Netflix_mcm4njqhnhss8!Netflix.App"}, "media", TierNone, true},
		{"Spotify", bridge.App{Exe: `C:\Users\u\AppData\Roaming\Spotify\Spotify.exe`}, "media", TierNone, true},
		{"Registry Editor", bridge.App{Exe: `C:\Windows\regedit.exe`}, "system_settings", TierFull, false},
		{"Python script", bridge.App{Exe: `C:\Python312\pythonw.exe`}, "interpreter", TierClick, false},
		{"Notepad", bridge.App{Exe: `C:\Windows\System32\notepad.exe`, Class: "Notepad"}, "", TierFull, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Classify(IdentityOf(tt.app))
			if e.Category != tt.category || e.PolicyDenied != tt.denied || (!tt.denied && e.DefaultTier != tt.tier) {
				t.Errorf("Classify(%+v) = %+v, want category %q, tier %v, denied %v", tt.app, e, tt.category, tt.tier, tt.denied)
			}
		})
	}
}
