//! Which MariaDB build a version names (`server = { mariadb = "11.8.9" }`): this machine's
//! server when it is that version, else one scripts/unpack-mariadb.sh unpacked into its cache,
//! so a sweep file names versions and never one machine's paths.

use std::path::{Path, PathBuf};

/// The cache scripts/unpack-mariadb.sh (and unpack-mysql.sh) unpack into by default.
pub fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("sweepbench"))
}

/// A version's numbers ("11.8.9" → [11, 8, 9]); None when it is not digits and dots.
pub fn numbers(v: &str) -> Option<Vec<u32>> {
    let parts: Option<Vec<u32>> = v.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| (1..=3).contains(&p.len()))
}

/// Whether `have` is the version `want` names: the same, or `want` a prefix of it by whole
/// numbers ("11.8" names 11.8.9, not 11.80.1).
fn names(want: &[u32], have: &[u32]) -> bool {
    have.len() >= want.len() && have[..want.len()] == *want
}

/// The version a server binary reports (`mariadbd --version`: "… Ver 10.11.19-MariaDB-0+deb12u1 …").
pub fn reported(server: &Path) -> Option<String> {
    let out = std::process::Command::new(server)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_reported(&text)
}

/// "… Ver 10.11.19-MariaDB-0+deb12u1 for …" → "10.11.19".
fn parse_reported(text: &str) -> Option<String> {
    let after = text.split_whitespace().skip_while(|w| *w != "Ver").nth(1)?;
    let v: String = after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    numbers(&v).map(|_| v)
}

/// A build found for a version: its basedir and its full version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub basedir: PathBuf,
    pub version: String,
}

/// The builds there are: this machine's server and every `mariadb-<version>/usr` in `cache`
/// holding a server.
fn candidates(system: Option<Found>, cache: Option<&Path>) -> Vec<Found> {
    let mut all: Vec<Found> = system.into_iter().collect();
    let entries = cache.and_then(|c| std::fs::read_dir(c).ok());
    for e in entries.into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(v) = name
            .strip_prefix("mariadb-")
            .filter(|v| numbers(v).is_some())
        else {
            continue;
        };
        let basedir = e.path().join("usr");
        if basedir.join("sbin/mariadbd").is_file() {
            all.push(Found {
                basedir,
                version: v.to_string(),
            });
        }
    }
    all
}

/// The build `want` names among `all`: an exact version first (this machine's before an
/// unpacked copy), else the newest whose version starts with it.
fn choose(want: &str, all: &[Found]) -> Option<Found> {
    let w = numbers(want)?;
    if let Some(f) = all.iter().find(|f| f.version == want) {
        return Some(f.clone());
    }
    // The first of the newest: this machine's before a copy of the same version.
    let mut best: Option<&Found> = None;
    for f in all
        .iter()
        .filter(|f| numbers(&f.version).is_some_and(|h| names(&w, &h)))
    {
        if best.is_none_or(|b| numbers(&f.version) > numbers(&b.version)) {
            best = Some(f);
        }
    }
    best.cloned()
}

/// The basedir of MariaDB `want` ("11.8.9", or "11.8" for the newest 11.8 there is), or why
/// there is none with the one command that unpacks it.
pub fn resolve(want: &str) -> Result<Found, String> {
    if numbers(want).is_none() {
        return Err(format!(
            "'{want}' is not a MariaDB version: give digits and dots, like \"11.8.9\" or \"10.11\""
        ));
    }
    let system = super::managed::find_server(None)
        .ok()
        .filter(|p| p.file_name().is_some_and(|n| n == "mariadbd"))
        .and_then(|p| {
            // /usr/sbin/mariadbd's basedir is /usr.
            let basedir = p.parent()?.parent()?.to_path_buf();
            Some(Found {
                version: reported(&p)?,
                basedir,
            })
        });
    let cache = cache_dir();
    let all = candidates(system.clone(), cache.as_deref());
    if let Some(f) = choose(want, &all) {
        return Ok(f);
    }
    let here = match &system {
        Some(f) => format!("this machine's server is {}", f.version),
        None => "this machine has no MariaDB server".to_string(),
    };
    let looked = cache.map_or_else(
        || "no cache directory (neither XDG_CACHE_HOME nor HOME is set)".to_string(),
        |c| format!("nothing unpacked for it in {}", c.display()),
    );
    let version = if numbers(want).is_some_and(|n| n.len() == 3) {
        want.to_string()
    } else {
        format!("{want}.<patch>")
    };
    Err(format!(
        "MariaDB {want} is not here ({here}; {looked}): unpack it with scripts/unpack-mariadb.sh {version} (nothing is installed)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(dir: &str, v: &str) -> Found {
        Found {
            basedir: PathBuf::from(dir),
            version: v.into(),
        }
    }

    #[test]
    fn the_reported_version_is_read_from_mariadbd() {
        assert_eq!(
            parse_reported("/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n"),
            Some("10.11.19".into())
        );
        assert_eq!(
            parse_reported("mysqld  Ver 9.4.0 for Linux"),
            Some("9.4.0".into())
        );
        assert_eq!(parse_reported("no version here"), None);
    }

    /// Exact versions win, this machine's first; a prefix takes the newest by numbers, not by
    /// text (11.8.10 after 11.8.9), and never a longer number (11.8 is not 11.80).
    #[test]
    fn a_version_names_the_build_it_should() {
        let all = [
            found("/usr", "10.11.19"),
            found("/c/mariadb-10.11.19/usr", "10.11.19"),
            found("/c/mariadb-10.11.18/usr", "10.11.18"),
            found("/c/mariadb-11.8.9/usr", "11.8.9"),
            found("/c/mariadb-11.8.10/usr", "11.8.10"),
            found("/c/mariadb-11.80.1/usr", "11.80.1"),
        ];
        let dir = |w: &str| choose(w, &all).map(|f| f.basedir);
        assert_eq!(dir("10.11.19"), Some(PathBuf::from("/usr")));
        assert_eq!(
            dir("10.11.18"),
            Some(PathBuf::from("/c/mariadb-10.11.18/usr"))
        );
        assert_eq!(dir("10.11"), Some(PathBuf::from("/usr")));
        assert_eq!(dir("11.8"), Some(PathBuf::from("/c/mariadb-11.8.10/usr")));
        assert_eq!(dir("11"), Some(PathBuf::from("/c/mariadb-11.80.1/usr")));
        assert_eq!(dir("10.5"), None);
        assert_eq!(dir("x"), None);
    }

    /// Only directories holding a server count: a partial unpack is not a build.
    #[test]
    fn the_cache_lists_only_whole_unpacks() {
        let c = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(c.path().join("mariadb-11.8.9/usr/sbin")).unwrap();
        std::fs::write(c.path().join("mariadb-11.8.9/usr/sbin/mariadbd"), "").unwrap();
        std::fs::create_dir_all(c.path().join("mariadb-10.5.23.partial/usr/sbin")).unwrap();
        std::fs::create_dir_all(c.path().join("mariadb-10.6.1/usr")).unwrap();
        std::fs::create_dir_all(c.path().join("mysql-9.4.0")).unwrap();
        let all = candidates(Some(found("/usr", "10.11.19")), Some(c.path()));
        let versions: Vec<&str> = all.iter().map(|f| f.version.as_str()).collect();
        assert_eq!(versions, ["10.11.19", "11.8.9"]);
        assert_eq!(all[1].basedir, c.path().join("mariadb-11.8.9/usr"));
    }
}
