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
//! [`TempPostgres::start_tls`] is a cluster that also listens on 127.0.0.1 and accepts TCP
//! connections only over TLS, with certificates from a throwaway certificate authority made
//! by the `openssl` tool ([`TlsFiles`]).
//!
//! Panicking is how it reports.

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
    /// The TCP port and certificates of a TLS cluster.
    tls: Option<(u16, TlsFiles)>,
}

/// The certificate files of a TLS cluster ([`TempPostgres::start_tls`]), all PEM.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate authority that signed the server's and the client's certificates.
    pub ca: PathBuf,
    /// Another certificate authority, which signed nothing the server shows.
    pub other_ca: PathBuf,
    /// A client certificate for the user `certuser` (who may log in only with it), and its key.
    pub client_cert: PathBuf,
    /// The client certificate's private key.
    pub client_key: PathBuf,
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
            tls: None,
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

    /// The URL of database `db` on this server (its unix socket).
    pub fn url_for(&self, db: &str) -> String {
        let port = match &self.tls {
            Some((port, _)) => format!(":{port}"),
            None => String::new(),
        };
        format!(
            "postgres://postgres@{}{port}/{db}",
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

    /// Makes and starts a cluster that also listens on 127.0.0.1, where it takes only TLS
    /// connections: its certificate names `localhost` (not `127.0.0.1`), signed by
    /// [`TlsFiles::ca`]. The user `certuser` logs in there only with [`TlsFiles::client_cert`],
    /// and owns the database `certdb`.
    /// Lives until dropped.
    pub fn start_tls() -> Self {
        let mut pg = Self::init();
        pg.stop_on_drop = true;
        let files = pg.make_certificates();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        fs::write(
            pg.data().join("pg_hba.conf"),
            "local all all trust\n\
             hostssl all certuser 127.0.0.1/32 cert\n\
             hostssl all all 127.0.0.1/32 trust\n",
        )
        .expect("writing pg_hba.conf");
        pg.tls = Some((port, files));
        pg.start_server();
        let mut client =
            postgres::Client::connect(&pg.url(), postgres::NoTls).expect("connect to PostgreSQL");
        for sql in [
            "CREATE USER certuser",
            "CREATE DATABASE certdb OWNER certuser",
        ] {
            client
                .batch_execute(sql)
                .expect("create the certificate user");
        }
        pg
    }

    /// The certificates of a [`Self::start_tls`] cluster.
    pub fn tls_files(&self) -> &TlsFiles {
        &self.tls.as_ref().expect("a TLS cluster (start_tls)").1
    }

    /// The URL of database `db` over TCP to `host` (`localhost` or `127.0.0.1`) on a
    /// [`Self::start_tls`] cluster, with `query` appended (`sslmode=...`).
    pub fn tcp_url(&self, host: &str, user: &str, db: &str, query: &str) -> String {
        let port = self.tls.as_ref().expect("a TLS cluster (start_tls)").0;
        format!("postgres://{user}@{host}:{port}/{db}?{query}")
    }

    /// A certificate authority, the server's certificate for `localhost`, another authority
    /// and a client certificate for `certuser`, made with `openssl` in the cluster directory.
    fn make_certificates(&self) -> TlsFiles {
        let dir = self.dir.path().join("tls");
        fs::create_dir_all(&dir).expect("a directory for certificates");
        let path = |name: &str| dir.join(name).display().to_string();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("running openssl (Debian's openssl package): {e}"));
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        for ca in ["ca", "other-ca"] {
            openssl(&[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=gavel test {ca}"),
                "-keyout",
                &path(&format!("{ca}.key")),
                "-out",
                &path(&format!("{ca}.pem")),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ]);
        }
        for (name, cn, ext) in [
            (
                "server",
                "localhost",
                "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
            ),
            ("client", "certuser", "extendedKeyUsage=clientAuth\n"),
        ] {
            openssl(&[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-subj",
                &format!("/CN={cn}"),
                "-keyout",
                &path(&format!("{name}.key")),
                "-out",
                &path(&format!("{name}.csr")),
            ]);
            fs::write(dir.join(format!("{name}.ext")), ext).expect("writing an extension file");
            openssl(&[
                "x509",
                "-req",
                "-in",
                &path(&format!("{name}.csr")),
                "-CA",
                &path("ca.pem"),
                "-CAkey",
                &path("ca.key"),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &path(&format!("{name}.ext")),
                "-out",
                &path(&format!("{name}.pem")),
            ]);
        }
        if self.run_as.is_some() {
            let (uid, gid) = (id("-u"), id("-g"));
            for entry in fs::read_dir(&dir).expect("the certificates").flatten() {
                std::os::unix::fs::chown(entry.path(), Some(uid), Some(gid))
                    .expect("giving the certificates to the postgres user");
            }
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).expect("chown tls dir");
        }
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir.join("server.key"), fs::Permissions::from_mode(0o600))
            .expect("the server key is private");
        TlsFiles {
            ca: dir.join("ca.pem"),
            other_ca: dir.join("other-ca.pem"),
            client_cert: dir.join("client.pem"),
            client_key: dir.join("client.key"),
        }
    }

    /// Starts the server (again, after [`Self::stop`]).
    pub fn start_server(&self) {
        let listen = match &self.tls {
            Some((port, _)) => {
                let tls = self.dir.path().join("tls");
                format!(
                    "-c listen_addresses=127.0.0.1 -p {port} -c ssl=on -c ssl_cert_file={} \
                     -c ssl_key_file={} -c ssl_ca_file={}",
                    tls.join("server.pem").display(),
                    tls.join("server.key").display(),
                    tls.join("ca.pem").display()
                )
            }
            None => "-c listen_addresses= -p 5432".to_owned(),
        };
        let options = format!(
            "-k {} {listen} -c fsync=off -c full_page_writes=off -c max_connections=300",
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
            .unwrap_or_else(|e| match &self.run_as {
                Some(user) => panic!("running {tool} as {user} through `runuser`: {e}"),
                None => panic!("running {tool}: {e}"),
            });
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
