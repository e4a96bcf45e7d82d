//! A throwaway PostgreSQL cluster for tests: Debian's `postgresql` binaries
//! (`initdb`, `postgres`) on a temporary directory, listening on a free
//! 127.0.0.1 port with trust authentication, one per test process.
//!
//! Each test takes a database of its own ([`fresh_database`]), so tests in
//! one process never see each other's rows. The server is a child of a
//! thread that lives as long as the process, with a parent-death signal:
//! when the test process ends, however it ends, the server shuts down
//! (fast) instead of outliving the run. `initdb` runs once per machine into
//! a template directory that later clusters copy, which costs a tenth of a
//! fresh `initdb`.
//!
//! As root (CI), the server runs as the `postgres` user the Debian package
//! creates, since PostgreSQL refuses to run as root.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A running throwaway cluster.
#[derive(Debug)]
pub struct Cluster {
    port: u16,
    dir: PathBuf,
}

/// The user every test connects as (the cluster's superuser).
const USER: &str = "helm";

impl Cluster {
    /// The process's cluster, started on first use.
    pub fn shared() -> anyhow::Result<&'static Cluster> {
        static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| Cluster::start().map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(|e| anyhow::anyhow!("the test PostgreSQL cluster did not start: {e}"))
    }

    /// A connection URL for database `db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// The directory holding the cluster's data and log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn start() -> anyhow::Result<Cluster> {
        let bin = binaries()?;
        let owner = server_user()?;
        let root = std::env::temp_dir().join(format!("helm-pg-{}", std::process::id()));
        clean_stale(&std::env::temp_dir());
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root)?;
        let data = root.join("data");
        let template = template(&bin, owner)?;
        copy_dir(&template, &data)?;
        chown_tree(&root, owner)?;
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700))?;
        // A free port may be taken by another process before the server
        // binds it (tests of several processes start clusters at once):
        // then the server stops at once, and another port is tried.
        let mut attempts = 0;
        loop {
            attempts += 1;
            let port = free_port()?;
            launch(&bin, owner, &root, &data, port)?;
            let cluster = Cluster {
                port,
                dir: root.clone(),
            };
            match cluster.wait_ready(&bin) {
                Err(e) if attempts < 5 && e.to_string().contains(PORT_TAKEN) => continue,
                Err(e) => return Err(e),
                Ok(()) => return Ok(cluster),
            }
        }
    }

    /// Waits until the server accepts connections (it listens before it
    /// has finished starting, and refuses until then).
    fn wait_ready(&self, bin: &Path) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-U", USER])
                .arg(format!("--port={}", self.port))
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(());
            }
            let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
            if log.contains(PORT_TAKEN) {
                bail!(
                    "port {} was taken before PostgreSQL bound it:\n{log}",
                    self.port
                );
            }
            if Instant::now() > deadline {
                bail!(
                    "PostgreSQL did not listen on port {} within 30 s:\n{log}",
                    self.port
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// What the server logs when its port was taken first.
const PORT_TAKEN: &str = "Address already in use";

/// Starts the server on `port`, tied to this process; its log is
/// `<root>/server.log`.
fn launch(
    bin: &Path,
    owner: Option<(u32, u32)>,
    root: &Path,
    data: &Path,
    port: u16,
) -> anyhow::Result<()> {
    let log = std::fs::File::create(root.join("server.log"))?;
    if let Some((uid, _)) = owner {
        std::os::unix::fs::chown(root.join("server.log"), Some(uid), None)?;
    }
    // setpriv (util-linux) sets the parent-death signal, after taking the
    // server user's ids when root, and execs the server.
    let mut command = Command::new("setpriv");
    if let Some((uid, gid)) = owner {
        command.args([format!("--reuid={uid}"), format!("--regid={gid}")]);
        command.arg("--clear-groups");
    }
    command
        .args(["--pdeathsig", "INT", "--"])
        .arg(bin.join("postgres"))
        .arg("-D")
        .arg(data)
        .args(["-c", "listen_addresses=127.0.0.1"])
        .args(["-c", &format!("port={port}")])
        .arg("-c")
        .arg(format!("unix_socket_directories={}", root.display()))
        // A test cluster: durability is not what is under test.
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off", "-c", "max_connections=200"])
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    spawn_tied_to_process(command)
}

/// A new empty database on the shared cluster, for one test; its URL.
pub async fn fresh_database() -> anyhow::Result<String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let cluster = Cluster::shared()?;
    let name = format!(
        "t{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let (client, connection) =
        tokio_postgres::connect(&cluster.url("postgres"), tokio_postgres::NoTls).await?;
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .with_context(|| format!("creating database {name}"))?;
    drop(client);
    let _ = driver.await;
    Ok(cluster.url(&name))
}

/// The directory of Debian's PostgreSQL server binaries (the newest major
/// version installed), or `HELM_PG_BIN`.
fn binaries() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("HELM_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .context("no PostgreSQL server here: install Debian's `postgresql` package")?
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((major, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .context("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
}

/// The uid and gid the server runs as: none (this user) unless root.
fn server_user() -> anyhow::Result<Option<(u32, u32)>> {
    if !rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"postgres"))
                .then(|| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))?
        })
        .map(Some)
        .context("running as root, and there is no `postgres` user to run the server as")
}

/// An `initdb`'d data directory to copy, made once per machine (per server
/// version and owner) and replaced atomically, so concurrent test processes
/// never see half of one.
fn template(bin: &Path, owner: Option<(u32, u32)>) -> anyhow::Result<PathBuf> {
    let version = bin
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("pg");
    let uid = owner.map_or_else(|| rustix::process::geteuid().as_raw(), |(uid, _)| uid);
    let template = std::env::temp_dir().join(format!("helm-pg-template-{version}-{uid}"));
    if template.join("PG_VERSION").exists() {
        return Ok(template);
    }
    let building = std::env::temp_dir().join(format!("helm-pg-initdb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&building)?;
    chown_tree(&building, owner)?;
    let mut initdb = Command::new(bin.join("initdb"));
    initdb
        .arg("-D")
        .arg(building.join("data"))
        .args(["-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"])
        .args(["--locale=C.UTF-8", "--no-instructions"]);
    if let Some((uid, gid)) = owner {
        initdb.uid(uid).gid(gid);
    }
    let out = initdb.output().context("running initdb")?;
    if !out.status.success() {
        bail!(
            "initdb failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    match std::fs::rename(building.join("data"), &template) {
        Ok(()) => {}
        // Another process made it first: use theirs.
        Err(_) if template.join("PG_VERSION").exists() => {}
        Err(e) => return Err(e).context("keeping the initdb template"),
    }
    let _ = std::fs::remove_dir_all(&building);
    Ok(template)
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .context("copying the cluster template")?;
    if !status.success() {
        bail!("cp -a {} {} failed", from.display(), to.display());
    }
    Ok(())
}

fn chown_tree(dir: &Path, owner: Option<(u32, u32)>) -> anyhow::Result<()> {
    let Some((uid, gid)) = owner else {
        return Ok(());
    };
    let status = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{gid}"))
        .arg(dir)
        .status()?;
    if !status.success() {
        bail!("chown -R {} failed", dir.display());
    }
    Ok(())
}

/// A port free on 127.0.0.1 now.
fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts `command` (which sets its own parent-death signal: SIGINT,
/// PostgreSQL's fast shutdown) from a thread that lives as long as the
/// process. The signal fires when the spawning *thread* ends, so a test's
/// own thread would stop the server after that test.
fn spawn_tied_to_process(mut command: Command) -> anyhow::Result<()> {
    let (sent, started) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("helm-test-postgres".into())
        .spawn(move || {
            let child = command.spawn();
            let ok = child.is_ok();
            let _ = sent.send(child.map(|_| ()).map_err(anyhow::Error::from));
            if ok {
                loop {
                    std::thread::park();
                }
            }
        })?;
    started.recv().context("the server thread ended")?
}

/// Removes the directories of clusters whose test process is gone.
fn clean_stale(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("helm-pg-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
