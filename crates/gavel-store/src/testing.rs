//! A real PostgreSQL server for tests: a throwaway cluster in a temporary directory.
//!
//! [`TempPostgres::start`] makes a cluster with Debian's `initdb` (as the unprivileged
//! `postgres` user when the tests run as root: the server refuses to run as root), starts it
//! with `pg_ctl` listening only on a unix socket in the same directory, and stops it (`-m
//! immediate`) and deletes everything when dropped. [`TempPostgres::shared`] is one cluster for
//! a whole test binary, stopped by a watchdog when the binary exits however it exits; each test
//! takes a fresh database of its own in it ([`TempPostgres::fresh_database`]).
//!
//! A missing PostgreSQL is a failure that says how to install it, never a skipped test:
//! `.ci/run` installs the `postgresql` package when `initdb` is missing.
//!
//! This is test support compiled into the library so other crates' tests can use it;
//! panicking is how it reports.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// A running throwaway PostgreSQL cluster.
#[derive(Debug)]
pub struct TempPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// Run the server's tools as this user (`postgres` when the tests run as root).
    run_as: Option<String>,
    /// Whether dropping this value stops the server (a shared cluster has a watchdog instead).
    stop_on_drop: bool,
}

/// Where Debian keeps the server's binaries, newest version first; or wherever `initdb` is on
/// the `PATH`.
fn find_bin() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return bin;
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("initdb").exists() && dir.join("pg_ctl").exists() {
                return dir;
            }
        }
    }
    panic!(
        "PostgreSQL's initdb was not found (in /usr/lib/postgresql/*/bin or on PATH); \
         install Debian's `postgresql` package (`.ci/run` does)"
    );
}

impl TempPostgres {
    /// Makes and starts a cluster that lives until this value is dropped.
    pub fn start() -> Self {
        let mut pg = Self::init();
        pg.stop_on_drop = true;
        pg.start_server();
        pg
    }

    /// One cluster for this whole test binary, started on first use and stopped when the
    /// binary exits.
    pub fn shared() -> &'static TempPostgres {
        static SHARED: OnceLock<TempPostgres> = OnceLock::new();
        SHARED.get_or_init(|| {
            let pg = Self::init();
            pg.start_server();
            pg.watch(std::process::id());
            pg
        })
    }

    fn init() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("gavel-pg-")
            .tempdir()
            .expect("a temporary directory for PostgreSQL");
        let root = fs::metadata(dir.path())
            .map(|m| m.uid() == 0)
            .unwrap_or(false);
        let run_as = root.then(|| "postgres".to_owned());
        if root {
            let uid = id("-u");
            let gid = id("-g");
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("giving the cluster directory to the postgres user");
        }
        let pg = Self {
            dir,
            bin: find_bin(),
            run_as,
            stop_on_drop: false,
        };
        pg.tool(
            "initdb",
            &[
                "-D",
                &pg.data().display().to_string(),
                "--auth=trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
        );
        pg
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The directory holding the server's unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The URL of database `db` on this server.
    pub fn url_for(&self, db: &str) -> String {
        format!(
            "postgres://postgres@{}/{db}",
            encode_path(&self.socket_dir().display().to_string())
        )
    }

    /// The URL of the cluster's default database.
    pub fn url(&self) -> String {
        self.url_for("postgres")
    }

    /// Creates a new empty database and answers its URL.
    pub fn fresh_database(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut client =
            postgres::Client::connect(&self.url(), postgres::NoTls).expect("connect to PostgreSQL");
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create a test database");
        self.url_for(&name)
    }

    /// Starts the server (again, after [`Self::stop`]).
    pub fn start_server(&self) {
        let options = format!(
            "-k {} -c listen_addresses= -p 5432 -c fsync=off -c full_page_writes=off \
             -c max_connections=300",
            self.socket_dir().display()
        );
        self.tool(
            "pg_ctl",
            &[
                "-D",
                &self.data().display().to_string(),
                "-w",
                "-t",
                "60",
                "-l",
                &self.dir.path().join("server.log").display().to_string(),
                "-o",
                &options,
                "start",
            ],
        );
    }

    /// Stops the server at once, dropping every connection (`pg_ctl stop -m immediate`).
    pub fn stop(&self) {
        self.tool(
            "pg_ctl",
            &[
                "-D",
                &self.data().display().to_string(),
                "-w",
                "-m",
                "immediate",
                "stop",
            ],
        );
    }

    /// The server's log so far, for a failing test's message.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    fn command(&self, tool: &str) -> Command {
        let program = self.bin.join(tool);
        match &self.run_as {
            Some(user) => {
                let mut cmd = Command::new("runuser");
                cmd.arg("-u").arg(user).arg("--").arg(program);
                cmd
            }
            None => Command::new(program),
        }
    }

    fn tool(&self, tool: &str, args: &[&str]) {
        let out = self
            .command(tool)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running {tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool} {args:?} failed: {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
    }

    /// Stops the server and deletes its directory once process `pid` has exited.
    #[expect(
        clippy::zombie_processes,
        reason = "the watchdog must outlive this process; init reaps it"
    )]
    fn watch(&self, pid: u32) {
        let pg_ctl = self.bin.join("pg_ctl");
        let runner = match &self.run_as {
            Some(user) => format!("runuser -u {user} -- "),
            None => String::new(),
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
             {runner}'{}' -D '{}' -m immediate stop >/dev/null 2>&1; rm -rf '{}'",
            pg_ctl.display(),
            self.data().display(),
            self.dir.path().display()
        );
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting the PostgreSQL watchdog");
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if self.stop_on_drop {
            let _ = self
                .command("pg_ctl")
                .args([
                    "-D",
                    &self.data().display().to_string(),
                    "-m",
                    "immediate",
                    "stop",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The numeric id of the `postgres` user (`-u`) or its group (`-g`).
fn id(flag: &str) -> u32 {
    let out = Command::new("id")
        .arg(flag)
        .arg("postgres")
        .output()
        .expect("running id");
    assert!(
        out.status.success(),
        "there is no `postgres` user; install Debian's `postgresql` package (`.ci/run` does)"
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a numeric id")
}

/// A socket directory as a URL host: percent-encoded.
fn encode_path(path: &str) -> String {
    path.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
