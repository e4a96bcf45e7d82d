//! A temporary, initialised workspace for each test.

use std::path::PathBuf;

use helm_core::exec::IsolationChoice;
use helm_core::model::User;
use helm_core::{Helm, HelmOptions, InitOptions};
use tempfile::TempDir;

pub struct Fixture {
    pub dir: TempDir,
    pub helm: Helm,
    pub captain: User,
}

impl Fixture {
    pub async fn new() -> anyhow::Result<Self> {
        Self::with_isolation(IsolationChoice::Auto).await
    }

    /// A workspace whose channel computers use `isolation`.
    pub async fn with_isolation(isolation: IsolationChoice) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        // As a deployment should be: the data root's parents may be passed
        // through (process isolation reaches the workspace that way).
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )?;
        let (helm, report) = Helm::init(
            Self::options_for(dir.path(), isolation),
            InitOptions::default(),
        )
        .await?;
        Ok(Fixture {
            dir,
            helm,
            captain: report.captain,
        })
    }

    fn options_for(dir: &std::path::Path, isolation: IsolationChoice) -> HelmOptions {
        let mut options = HelmOptions::new(dir.join("data"));
        options.computer.isolation = isolation;
        options
    }

    /// The same data root opened again, as a restarted server would.
    pub async fn reopen(&self, isolation: IsolationChoice) -> anyhow::Result<Helm> {
        Ok(Helm::open(Self::options_for(self.dir.path(), isolation)).await?)
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A raw connection to the database file, to prove rules hold below the API.
    pub fn raw_db(&self) -> anyhow::Result<rusqlite::Connection> {
        let conn = rusqlite::Connection::open(self.data_dir().join("helm.db"))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(conn)
    }

    pub fn count(&self, sql: &str) -> anyhow::Result<i64> {
        Ok(self.raw_db()?.query_row(sql, [], |r| r.get(0))?)
    }
}

pub const LAUNCH_PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

/// Both confining isolation modes, for tests that must hold in each.
pub const CONFINED_MODES: [IsolationChoice; 2] =
    [IsolationChoice::Bubblewrap, IsolationChoice::Process];

/// Whether this test process runs as root (then agents get uids of their own).
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// A provider supplied by the application, as an embedding app registers
/// one: it lists no models (so choices of it are unverified) and serves
/// nothing (these tests run no turns with it).
pub struct AppProvider;

#[async_trait::async_trait]
impl helm_core::provider::Provider for AppProvider {
    async fn stream(
        &self,
        _request: helm_core::provider::ChatRequest,
    ) -> helm_core::Result<helm_core::provider::EventStream> {
        Err(helm_core::Error::provider(
            "app",
            helm_core::ProviderFailure::Unsupported,
            "this test provider serves no turns",
        ))
    }
}

/// Registers [`AppProvider`]s under these names.
pub fn register_app_providers(helm: &Helm, names: &[&str]) {
    for name in names {
        helm.register_provider(*name, std::sync::Arc::new(AppProvider));
    }
}

/// A fresh workspace with #launch, and its files as the Captain gets them.
pub async fn launch_files() -> anyhow::Result<(
    Fixture,
    helm_core::model::ChannelRef,
    std::sync::Arc<dyn helm_core::exec::Files>,
)> {
    let f = Fixture::new().await?;
    let record = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let channel = helm_core::model::ChannelRef::Id(record.channel.id);
    let files = f.helm.files(&f.captain, &channel).await?;
    Ok((f, channel, files))
}
