//! Application identity on Linux (PROTOCOL.md "App"): the executable behind
//! a pid, the desktop entry that launched a window, and the best human name.
//!
//! Desktop entries are found in the XDG data dirs' `applications`
//! folders. The index is built once and rebuilt only when one of those
//! folders changes, so listing windows does not rescan the disk each time.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::types::App;

/// What a window says about the program that owns it; the input of
/// [`Apps::resolve`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Clues {
    /// `_NET_WM_PID`, or the X-Resource client pid.
    pub pid: Option<u32>,
    /// Whether `pid` names a process on this machine (so /proc may be read).
    pub pid_is_local: bool,
    /// WM_CLASS instance (first string).
    pub instance: Option<String>,
    /// WM_CLASS class (second string).
    pub class: Option<String>,
    /// `_GTK_APPLICATION_ID`, which GTK applications set to their
    /// desktop-entry id.
    pub gtk_application_id: Option<String>,
}

/// One parsed `.desktop` file: the fields that identify and launch an
/// application. The helper is the one place desktop entries are read
/// (PROTOCOL.md `apps`): the supervisor resolves open_application's names
/// and launches from this same index, so a launched window's identity and
/// the launch gate's agree.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DesktopEntry {
    /// The desktop-file id without `.desktop` (path below `applications/`
    /// with `/` turned into `-`).
    pub id: String,
    /// The file it was read from.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generic_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_wm_class: Option<String>,
    /// `Exec` split into arguments (quoting and escapes undone, field
    /// codes kept for the launcher to expand).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exec: Vec<String>,
    /// Base name of the program in `Exec` (after any `env VAR=...` prefix).
    #[serde(skip)]
    pub exec_program: Option<String>,
    /// Base name of the program in `TryExec`.
    #[serde(skip)]
    pub try_exec_program: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The `Path` key: the working directory to launch in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<String>,
    pub terminal: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    pub no_display: bool,
}

/// Programs that launch other programs; an `Exec` naming one of these says
/// nothing about which application a window belongs to.
const LAUNCHERS: &[&str] = &[
    "env", "sh", "bash", "dash", "zsh", "flatpak", "snap", "gio", "xdg-open", "java", "perl",
    "ruby", "node", "wine", "sudo", "pkexec", "gksu", "kdesu",
];

fn is_launcher(program: &str) -> bool {
    LAUNCHERS.contains(&program) || program.starts_with("python")
}

/// The `applications` folders to search, most important first: the user's
/// data home, then the system data dirs (XDG Base Directory spec).
pub fn applications_dirs(
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
    xdg_data_dirs: Option<OsString>,
) -> Vec<PathBuf> {
    let mut bases = Vec::new();
    // A relative XDG_DATA_HOME is invalid (XDG Base Directory spec) and
    // ignored, like an unset one.
    match xdg_data_home.filter(|v| Path::new(v).is_absolute()) {
        Some(dir) => bases.push(PathBuf::from(dir)),
        None => {
            if let Some(home) = home.filter(|v| !v.is_empty()) {
                bases.push(PathBuf::from(home).join(".local/share"));
            }
        }
    }
    let system = xdg_data_dirs
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("/usr/local/share:/usr/share"));
    bases.extend(std::env::split_paths(&system).filter(|p| p.is_absolute()));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for base in bases {
        let dir = base.join("applications");
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// [`applications_dirs`] from this process's environment.
pub fn applications_dirs_from_env() -> Vec<PathBuf> {
    applications_dirs(
        std::env::var_os("XDG_DATA_HOME"),
        std::env::var_os("HOME"),
        std::env::var_os("XDG_DATA_DIRS"),
    )
}

/// Parses the `[Desktop Entry]` group of a desktop file. Returns None for
/// files that are not applications or are marked `Hidden` (deleted).
pub fn parse_desktop_entry(id: &str, text: &str) -> Option<DesktopEntry> {
    let mut in_main_group = false;
    let mut seen_main_group = false;
    let mut fields: HashMap<&str, &str> = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            if seen_main_group && in_main_group {
                break; // the main group is over; later groups are actions
            }
            in_main_group = line == "[Desktop Entry]";
            seen_main_group |= in_main_group;
            continue;
        }
        if !in_main_group {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            // Localized keys (Name[de]) are skipped: the unlocalized name is
            // stable whatever the user's language.
            fields.entry(key.trim()).or_insert(value.trim());
        }
    }
    if !seen_main_group {
        return None;
    }
    let flag = |key: &str| fields.get(key).is_some_and(|v| *v == "true");
    if flag("Hidden") {
        return None;
    }
    if fields.get("Type").is_some_and(|t| *t != "Application") {
        return None;
    }
    let text_field = |key: &str| {
        fields
            .get(key)
            .map(|v| unescape_string(v))
            .filter(|v| !v.is_empty())
    };
    Some(DesktopEntry {
        id: id.to_string(),
        name: text_field("Name"),
        generic_name: text_field("GenericName"),
        startup_wm_class: text_field("StartupWMClass"),
        exec: fields.get("Exec").map(|v| exec_args(v)).unwrap_or_default(),
        exec_program: fields.get("Exec").and_then(|v| exec_program(v)),
        try_exec_program: fields.get("TryExec").and_then(|v| {
            let v = unescape_string(v);
            base_name(&v).map(str::to_string)
        }),
        icon: text_field("Icon"),
        work_dir: text_field("Path"),
        terminal: flag("Terminal"),
        keywords: text_field("Keywords")
            .map(|k| {
                k.split(';')
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        no_display: flag("NoDisplay"),
        file: String::new(),
    })
}

/// Whether a `TryExec` program exists: an absolute path must be an
/// executable file, a bare name one on `PATH`. An entry whose `TryExec`
/// is missing is not installed (Desktop Entry spec) and is left out.
fn try_exec_installed(text: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(program) = try_exec_value(text) else {
        return true;
    };
    let executable = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return executable(Path::new(&program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(&program))))
}

/// The unescaped `TryExec` of the main group, if any.
fn try_exec_value(text: &str) -> Option<String> {
    let mut in_main_group = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            if in_main_group {
                return None;
            }
            in_main_group = line == "[Desktop Entry]";
            continue;
        }
        if in_main_group {
            if let Some((key, value)) = line.split_once('=') {
                if key.trim() == "TryExec" {
                    return Some(unescape_string(value.trim())).filter(|v| !v.is_empty());
                }
            }
        }
    }
    None
}

/// Undoes the escapes of the desktop-entry `string` type.
fn unescape_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Splits an `Exec` value into arguments: whitespace separates them and
/// double quotes group them, with `\"`, `` \` ``, `\$` and `\\` escaped
/// inside quotes (Desktop Entry spec, "The Exec key").
fn exec_args(exec: &str) -> Vec<String> {
    let exec = unescape_string(exec);
    let mut args = Vec::new();
    let mut current = String::new();
    let mut in_arg = false;
    let mut quoted = false;
    let mut chars = exec.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                in_arg = true;
            }
            '\\' if quoted => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            c if c.is_whitespace() && !quoted => {
                if in_arg {
                    args.push(std::mem::take(&mut current));
                    in_arg = false;
                }
            }
            c => {
                current.push(c);
                in_arg = true;
            }
        }
    }
    if in_arg {
        args.push(current);
    }
    args
}

/// The base name of the program an `Exec` line runs, looking through an
/// `env VAR=value ...` prefix.
fn exec_program(exec: &str) -> Option<String> {
    let args = exec_args(exec);
    let mut rest = args.iter().map(String::as_str);
    let mut program = rest.next()?;
    if base_name(program) == Some("env") {
        program = loop {
            let arg = rest.next()?;
            if matches!(arg, "-u" | "--unset" | "-C" | "--chdir") {
                rest.next(); // the option's value
            } else if !arg.starts_with('-') && !arg.contains('=') {
                break arg;
            }
        };
    }
    base_name(program).map(str::to_string)
}

fn base_name(path: &str) -> Option<&str> {
    path.rsplit('/').next().filter(|s| !s.is_empty())
}

/// All application desktop entries in a list of `applications` folders,
/// with the first folder winning when an id appears more than once.
#[derive(Clone, Debug, Default)]
pub struct DesktopIndex {
    entries: Vec<DesktopEntry>,
}

impl DesktopIndex {
    /// Reads every `*.desktop` file below the given folders. Missing or
    /// unreadable folders and files are skipped.
    pub fn load(dirs: &[PathBuf]) -> DesktopIndex {
        let mut seen: HashSet<String> = HashSet::new();
        let mut entries = Vec::new();
        for dir in dirs {
            let mut files = Vec::new();
            collect_desktop_files(dir, dir, 0, &mut files);
            files.sort();
            for (id, path) in files {
                // A higher-priority file with the same id shadows this one,
                // even when that file is Hidden (a user "deleting" an entry).
                if !seen.insert(id.clone()) {
                    continue;
                }
                let Ok(text) = fs::read_to_string(&path) else {
                    continue;
                };
                if !try_exec_installed(&text) {
                    continue;
                }
                if let Some(mut entry) = parse_desktop_entry(&id, &text) {
                    entry.file = path.to_string_lossy().into_owned();
                    entries.push(entry);
                }
            }
        }
        DesktopIndex { entries }
    }

    pub fn entries(&self) -> &[DesktopEntry] {
        &self.entries
    }

    /// The entry that best matches the clues, by decreasing confidence:
    /// the GTK application id; StartupWMClass equal to the WM_CLASS class,
    /// then instance, then either ignoring case; the desktop id equal to
    /// the lowercased class or instance (or its last reverse-DNS part);
    /// and last the `Exec`/`TryExec` program equal to the executable's
    /// base name. Among equals, a displayed entry beats a `NoDisplay` one.
    pub fn resolve(&self, clues: &Clues, exe: Option<&str>) -> Option<&DesktopEntry> {
        let class = clues.class.as_deref().filter(|s| !s.is_empty());
        let instance = clues.instance.as_deref().filter(|s| !s.is_empty());
        let exe_name = exe.and_then(base_name);
        let lowered: Vec<String> = [class, instance]
            .into_iter()
            .flatten()
            .map(str::to_lowercase)
            .collect();

        let rank = |e: &DesktopEntry| -> Option<u8> {
            if let Some(gtk) = clues.gtk_application_id.as_deref() {
                if e.id == gtk {
                    return Some(0);
                }
            }
            if let Some(wm) = e.startup_wm_class.as_deref() {
                if Some(wm) == class {
                    return Some(1);
                }
                if Some(wm) == instance {
                    return Some(2);
                }
                if [class, instance]
                    .into_iter()
                    .flatten()
                    .any(|c| c.eq_ignore_ascii_case(wm))
                {
                    return Some(3);
                }
            }
            let id_lower = e.id.to_lowercase();
            if lowered.contains(&id_lower) {
                return Some(4);
            }
            if let Some((_, last)) = id_lower.rsplit_once('.') {
                if lowered.iter().any(|c| c == last) {
                    return Some(5);
                }
            }
            if let Some(exe_name) = exe_name {
                let program_matches = |p: &Option<String>| {
                    p.as_deref()
                        .is_some_and(|p| p == exe_name && !is_launcher(p))
                };
                if program_matches(&e.exec_program) || program_matches(&e.try_exec_program) {
                    return Some(6);
                }
            }
            None
        };

        self.entries
            .iter()
            .enumerate()
            .filter_map(|(order, e)| rank(e).map(|r| ((r, e.no_display, order), e)))
            .min_by_key(|(key, _)| *key)
            .map(|(_, e)| e)
    }
}

/// Collects (desktop id, path) for the `.desktop` files below `dir`.
fn collect_desktop_files(root: &Path, dir: &Path, depth: u32, out: &mut Vec<(String, PathBuf)>) {
    if depth > 4 {
        return;
    }
    let Ok(read) = fs::read_dir(dir) else {
        return;
    };
    for item in read.flatten() {
        let path = item.path();
        let Ok(kind) = item.file_type() else {
            continue;
        };
        let is_dir = kind.is_dir() || (kind.is_symlink() && path.is_dir());
        if is_dir {
            collect_desktop_files(root, &path, depth + 1, out);
            continue;
        }
        if path.extension() != Some(OsStr::new("desktop")) {
            continue;
        }
        let Ok(relative) = path
            .with_extension("")
            .strip_prefix(root)
            .map(Path::to_path_buf)
        else {
            continue;
        };
        let Some(relative) = relative.to_str() else {
            continue;
        };
        out.push((relative.replace('/', "-"), path));
    }
}

/// The executable of a local process, from `/proc/<pid>/exe`. None when the
/// process is gone or belongs to a user we may not inspect.
pub fn exe_of(pid: u32) -> Option<String> {
    let target = fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let target = target.to_str()?;
    // A binary replaced on disk (package upgrade) reads "path (deleted)".
    Some(
        target
            .strip_suffix(" (deleted)")
            .unwrap_or(target)
            .to_string(),
    )
}

/// The best human name of an app: the desktop entry's Name, else the
/// WM_CLASS class, else the executable's base name.
pub fn best_name(entry: Option<&DesktopEntry>, clues: &Clues, exe: Option<&str>) -> String {
    entry
        .and_then(|e| e.name.clone())
        .or_else(|| clues.class.clone().filter(|c| !c.is_empty()))
        .or_else(|| exe.and_then(base_name).map(str::to_string))
        .or_else(|| clues.instance.clone().filter(|c| !c.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Modification times of the folders an index was built from: when one
/// changes, an application was installed or removed.
type Signature = Vec<(PathBuf, Option<SystemTime>)>;

fn signature(dirs: &[PathBuf]) -> Signature {
    dirs.iter()
        .map(|d| (d.clone(), fs::metadata(d).and_then(|m| m.modified()).ok()))
        .collect()
}

/// Resolves window clues to an [`App`], caching the desktop index and the
/// per-program answers.
#[derive(Debug)]
pub struct Apps {
    dirs: Vec<PathBuf>,
    index: Option<(Signature, DesktopIndex)>,
    /// (clues minus pid, exe) -> index into the desktop entries.
    matches: HashMap<(Clues, Option<String>), Option<usize>>,
}

impl Apps {
    /// A resolver over the XDG data dirs of this process's environment.
    pub fn from_env() -> Apps {
        Apps::with_dirs(applications_dirs_from_env())
    }

    /// A resolver over explicit `applications` folders.
    pub fn with_dirs(dirs: Vec<PathBuf>) -> Apps {
        Apps {
            dirs,
            index: None,
            matches: HashMap::new(),
        }
    }

    /// Rebuilds the desktop index if it was never built or a folder
    /// changed since. Call once per listing, not once per window.
    pub fn refresh(&mut self) {
        let current = signature(&self.dirs);
        if self.index.as_ref().is_some_and(|(sig, _)| *sig == current) {
            return;
        }
        self.index = Some((current, DesktopIndex::load(&self.dirs)));
        self.matches.clear();
    }

    /// Every application entry of the index, rebuilt first if a folder
    /// changed (PROTOCOL.md `apps`).
    pub fn entries(&mut self) -> &[DesktopEntry] {
        self.refresh();
        self.index
            .as_ref()
            .map_or(&[], |(_, index)| index.entries())
    }

    /// The identity of the program behind a window.
    pub fn resolve(&mut self, clues: &Clues) -> App {
        if self.index.is_none() {
            self.refresh();
        }
        let exe = match clues.pid {
            Some(pid) if clues.pid_is_local => exe_of(pid),
            _ => None,
        };
        let key = (
            Clues {
                pid: None,
                pid_is_local: false,
                ..clues.clone()
            },
            exe.clone(),
        );
        let index = &self.index.as_ref().expect("refreshed above").1;
        let position = *self.matches.entry(key).or_insert_with(|| {
            index.resolve(clues, exe.as_deref()).map(|found| {
                index
                    .entries
                    .iter()
                    .position(|e| std::ptr::eq(e, found))
                    .expect("entry comes from this index")
            })
        });
        let entry = position.map(|i| &index.entries[i]);
        App {
            pid: clues.pid,
            name: best_name(entry, clues, exe.as_deref()),
            instance: clues.instance.clone(),
            class: clues.class.clone(),
            exe,
            desktop_id: entry.map(|e| e.id.clone()),
            bundle_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "deskhand-apps-{tag}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn write(&self, relative: &str, text: &str) {
            let path = self.0.join(relative);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn clues(instance: &str, class: &str) -> Clues {
        Clues {
            instance: Some(instance.into()),
            class: Some(class.into()),
            ..Clues::default()
        }
    }

    #[test]
    fn applications_dirs_follow_xdg_order_and_defaults() {
        let dirs = applications_dirs(
            Some("/data/home".into()),
            Some("/home/u".into()),
            Some("/a:relative:/b:/a".into()),
        );
        let want: Vec<PathBuf> = ["/data/home", "/a", "/b"]
            .iter()
            .map(|d| Path::new(d).join("applications"))
            .collect();
        assert_eq!(dirs, want);

        let dirs = applications_dirs(
            Some("relative/data".into()),
            Some("/home/u".into()),
            Some("".into()),
        );
        let want: Vec<PathBuf> = ["/home/u/.local/share", "/usr/local/share", "/usr/share"]
            .iter()
            .map(|d| Path::new(d).join("applications"))
            .collect();
        assert_eq!(dirs, want);
    }

    #[test]
    fn parse_reads_main_group_only() {
        let text = "# comment\n[Desktop Entry]\nType=Application\nName=Text\\sEditor\n\
                    Name[de]=Texteditor\nExec=env GTK_THEME=x /opt/ed/bin/editor --new %U\n\
                    TryExec=/opt/ed/bin/editor\nStartupWMClass=Editor\nNoDisplay=true\n\n\
                    [Desktop Action new]\nName=New\nExec=other\n";
        let entry = parse_desktop_entry("org.example.Editor", text).unwrap();
        assert_eq!(
            entry,
            DesktopEntry {
                id: "org.example.Editor".into(),
                name: Some("Text Editor".into()),
                startup_wm_class: Some("Editor".into()),
                exec_program: Some("editor".into()),
                try_exec_program: Some("editor".into()),
                exec: vec![
                    "env".into(),
                    "GTK_THEME=x".into(),
                    "/opt/ed/bin/editor".into(),
                    "--new".into(),
                    "%U".into()
                ],
                no_display: true,
                ..DesktopEntry::default()
            }
        );
    }

    #[test]
    fn parse_rejects_hidden_links_and_groupless_files() {
        assert_eq!(
            parse_desktop_entry("a", "[Desktop Entry]\nName=A\nHidden=true\n"),
            None
        );
        assert_eq!(
            parse_desktop_entry("a", "[Desktop Entry]\nType=Link\nName=A\nURL=x\n"),
            None
        );
        assert_eq!(parse_desktop_entry("a", "Name=A\nExec=a\n"), None);
    }

    #[test]
    fn exec_program_handles_quotes_and_env() {
        let cases = [
            ("xterm", Some("xterm")),
            ("\"/opt/My App/bin/app\" --x %f", Some("app")),
            ("env A=1 B=2 /usr/bin/foo %U", Some("foo")),
            ("env -u X bar", Some("bar")),
            ("env -i A=1", None),
            ("   ", None),
        ];
        for (exec, want) in cases {
            assert_eq!(
                exec_program(exec).as_deref(),
                want,
                "exec_program({exec:?})"
            );
        }
    }

    #[test]
    fn index_ids_priority_and_shadowing() {
        let home = TempDir::new("home");
        let system = TempDir::new("system");
        home.write(
            "shadowed.desktop",
            "[Desktop Entry]\nName=Gone\nHidden=true\n",
        );
        system.write(
            "shadowed.desktop",
            "[Desktop Entry]\nName=Shadowed\nExec=s\n",
        );
        system.write(
            "kde/konsole.desktop",
            "[Desktop Entry]\nName=Konsole\nExec=konsole\n",
        );
        home.write("dup.desktop", "[Desktop Entry]\nName=Home Dup\nExec=d\n");
        system.write("dup.desktop", "[Desktop Entry]\nName=System Dup\nExec=d\n");
        system.write("notes.txt", "[Desktop Entry]\nName=Not a desktop file\n");

        let index = DesktopIndex::load(&[home.0.clone(), system.0.clone()]);
        let mut found: Vec<(String, Option<String>)> = index
            .entries()
            .iter()
            .map(|e| (e.id.clone(), e.name.clone()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            vec![
                ("dup".into(), Some("Home Dup".into())),
                ("kde-konsole".into(), Some("Konsole".into())),
            ]
        );
    }

    #[test]
    fn resolve_ranks_matches() {
        let dir = TempDir::new("resolve");
        dir.write(
            "debian-xterm.desktop",
            "[Desktop Entry]\nName=XTerm\nExec=xterm\nStartupWMClass=XTerm\n",
        );
        dir.write(
            "debian-uxterm.desktop",
            "[Desktop Entry]\nName=UXTerm\nExec=uxterm\nStartupWMClass=UXTerm\n",
        );
        dir.write(
            "firefox.desktop",
            "[Desktop Entry]\nName=Firefox\nExec=firefox %u\n",
        );
        dir.write(
            "org.gnome.Nautilus.desktop",
            "[Desktop Entry]\nName=Files\nExec=nautilus --new-window\n",
        );
        dir.write(
            "org.gnome.TextEditor.desktop",
            "[Desktop Entry]\nName=Text Editor\nExec=gnome-text-editor\n",
        );
        dir.write(
            "python3.11.desktop",
            "[Desktop Entry]\nName=Python\nExec=/usr/bin/python3.11\nNoDisplay=true\n",
        );
        dir.write(
            "hidden-term.desktop",
            "[Desktop Entry]\nName=Hidden Term\nExec=term\nNoDisplay=true\n",
        );
        dir.write("term.desktop", "[Desktop Entry]\nName=Term\nExec=term\n");
        let index = DesktopIndex::load(std::slice::from_ref(&dir.0));
        let id = |c: &Clues, exe: Option<&str>| index.resolve(c, exe).map(|e| e.id.clone());

        // StartupWMClass on the class wins over the Exec match.
        assert_eq!(
            id(&clues("xterm", "XTerm"), Some("/usr/bin/uxterm")).as_deref(),
            Some("debian-xterm")
        );
        // A renamed class (xterm -class DeskTest) still resolves by executable.
        assert_eq!(
            id(&clues("xterm", "DeskTest"), Some("/usr/bin/xterm")).as_deref(),
            Some("debian-xterm")
        );
        // Case-insensitive StartupWMClass on the instance.
        assert_eq!(
            id(&clues("uxterm", "Other"), None).as_deref(),
            Some("debian-uxterm")
        );
        // File stem equals the lowercased class.
        assert_eq!(
            id(&clues("Navigator", "Firefox"), None).as_deref(),
            Some("firefox")
        );
        // Reverse-DNS id whose last part is the class.
        assert_eq!(
            id(&clues("nautilus", "Nautilus"), None).as_deref(),
            Some("org.gnome.Nautilus")
        );
        // GTK application id beats everything.
        let gtk = Clues {
            gtk_application_id: Some("org.gnome.TextEditor".into()),
            ..clues("firefox", "Firefox")
        };
        assert_eq!(id(&gtk, None).as_deref(), Some("org.gnome.TextEditor"));
        // Interpreters do not identify an app by Exec.
        assert_eq!(
            id(&clues("script", "Script"), Some("/usr/bin/python3.11")),
            None
        );
        // A displayed entry beats a NoDisplay one of equal rank.
        assert_eq!(
            id(&clues("x", "X"), Some("/usr/bin/term")).as_deref(),
            Some("term")
        );
        assert_eq!(id(&Clues::default(), None), None);
    }

    #[test]
    fn best_name_falls_back_in_order() {
        let entry = DesktopEntry {
            id: "e".into(),
            name: Some("Entry".into()),
            startup_wm_class: None,
            exec_program: None,
            try_exec_program: None,
            no_display: false,
            ..DesktopEntry::default()
        };
        let c = clues("inst", "Class");
        assert_eq!(best_name(Some(&entry), &c, Some("/bin/prog")), "Entry");
        assert_eq!(best_name(None, &c, Some("/bin/prog")), "Class");
        assert_eq!(
            best_name(None, &Clues::default(), Some("/bin/prog")),
            "prog"
        );
        assert_eq!(best_name(None, &Clues::default(), None), "unknown");
    }

    #[test]
    fn apps_resolve_reads_exe_and_rebuilds_on_change() {
        let dir = TempDir::new("apps");
        let mut apps = Apps::with_dirs(vec![dir.0.clone()]);
        let me = std::process::id();
        let own_exe = fs::read_link("/proc/self/exe").unwrap();
        let own_name = own_exe.file_name().unwrap().to_str().unwrap().to_string();
        let c = Clues {
            pid: Some(me),
            pid_is_local: true,
            ..Clues::default()
        };
        let app = apps.resolve(&c);
        assert_eq!(app.exe.as_deref(), own_exe.to_str());
        assert_eq!(app.desktop_id, None);
        assert_eq!(app.name, own_name);

        // Installing a desktop entry changes the folder, so the next
        // refresh picks it up.
        std::thread::sleep(std::time::Duration::from_millis(20));
        dir.write(
            "selftest.desktop",
            &format!(
                "[Desktop Entry]\nName=Self Test\nExec={}\n",
                own_exe.display()
            ),
        );
        apps.refresh();
        let app = apps.resolve(&c);
        assert_eq!(app.desktop_id.as_deref(), Some("selftest"));
        assert_eq!(app.name, "Self Test");
        assert_eq!(app.pid, Some(me));

        // A pid from another machine is never looked up in /proc.
        let remote = Clues {
            pid_is_local: false,
            ..c
        };
        assert_eq!(apps.resolve(&remote).exe, None);
    }
}
