//! Helm's shared test kit: temporary workspaces, mock model servers
//! ([`mock`]) and fixtures. Other crates' tests use it through `helm-tests`
//! so that no test double lives only under `cfg(test)`.

use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::time::Duration;

use helm_core::config::StoreUrl;
use helm_core::exec::IsolationChoice;
use helm_core::model::{ModelChoice, Role, Turn, TurnId, User};
use helm_core::provider::Scripted;
use helm_core::store::PolicyScope;
use helm_core::{Helm, HelmOptions, InitOptions};
use tempfile::TempDir;

pub mod mock;
pub mod open_terminal;
pub mod postgres;
pub mod store_conformance;

/// A fresh, initialised workspace in a temporary data directory that is
/// removed when this value is dropped.
pub struct TestHelm {
    /// The temporary directory holding the data root.
    pub dir: TempDir,
    /// The opened workspace.
    pub helm: Helm,
    /// Its Captain.
    pub captain: User,
}

impl TestHelm {
    /// Initialises a workspace in a new temporary directory, with provider
    /// requests that give up fast (tests never wait out real retry delays).
    pub async fn new() -> anyhow::Result<Self> {
        Self::with_options(|_| {}).await
    }

    /// Initialises a workspace whose channel computers use `isolation`.
    pub async fn with_isolation(isolation: IsolationChoice) -> anyhow::Result<Self> {
        Self::with_options(|o| o.computer.isolation = isolation).await
    }

    /// Like [`TestHelm::new`], with the workspace's state in a fresh
    /// database of the test PostgreSQL cluster ([`postgres`]) instead of
    /// the data root's SQLite file.
    pub async fn on_postgres() -> anyhow::Result<Self> {
        let url = postgres::fresh_database().await?;
        Self::with_options(|o| o.store = Some(StoreUrl::Postgres(url))).await
    }

    /// Like [`TestHelm::new`], adjusting the options first.
    pub async fn with_options(adjust: impl FnOnce(&mut HelmOptions)) -> anyhow::Result<Self> {
        Self::try_with_options(|o| {
            adjust(o);
            Ok(())
        })
        .await
    }

    /// Like [`TestHelm::with_options`], with an adjustment that may fail
    /// (applying a configuration, making a port).
    pub async fn try_with_options(
        adjust: impl FnOnce(&mut HelmOptions) -> anyhow::Result<()>,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        // As a deployment should be: the data root's parents may be passed
        // through (process isolation reaches the workspace that way).
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o711),
        )?;
        let mut options = HelmOptions::new(dir.path().join("data"));
        options.provider_http = mock::fast_http_options();
        // The test command runs the HTTP promise suites a second time with
        // every workspace on Postgres (`HELM_TEST_STORE=postgres`).
        if std::env::var("HELM_TEST_STORE").is_ok_and(|s| s == "postgres") {
            options.store = Some(StoreUrl::Postgres(postgres::fresh_database().await?));
        }
        adjust(&mut options)?;
        let (helm, report) = Helm::init(options, InitOptions::default()).await?;
        Ok(TestHelm {
            dir,
            helm,
            captain: report.captain,
        })
    }

    /// Registers `provider` as the provider named `name` and makes it the
    /// workspace default, so every channel's turns go to it.
    pub async fn use_provider(
        &self,
        name: &str,
        provider: Arc<dyn helm_core::provider::Provider>,
    ) -> anyhow::Result<()> {
        self.helm.register_provider(name, provider);
        self.helm
            .set_model_policy(
                &self.captain,
                PolicyScope::Workspace,
                Some(ModelChoice::new(name, Some(format!("{name}-model")))),
            )
            .await?;
        Ok(())
    }

    /// A scripted provider registered as `scripted` and the workspace
    /// default, with the turn driver started.
    pub async fn scripted(&self) -> anyhow::Result<Arc<Scripted>> {
        let scripted = Arc::new(Scripted::new());
        self.use_provider("scripted", scripted.clone()).await?;
        self.helm.start_runtime().await?;
        Ok(scripted)
    }

    /// Adds a member.
    pub async fn member(&self, name: &str) -> anyhow::Result<User> {
        Ok(self
            .helm
            .add_user(&self.captain, name, Role::Member)
            .await?)
    }

    /// Waits (up to 20 s, a guard against hangs, not a performance bound)
    /// for a turn to reach an end state.
    pub async fn wait_turn(&self, id: TurnId) -> anyhow::Result<Turn> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let turn = self.helm.turn(id).await?;
            if turn.state.is_final() {
                return Ok(turn);
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "turn {id} still {} after 20 s",
                turn.state
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits for a condition on the store to hold (same guard).
    pub async fn wait_for<F, Fut>(&self, what: &str, mut check: F) -> anyhow::Result<()>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<bool>>,
    {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !check().await? {
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(())
    }

    /// Polls `check` until it returns something (same guard as [`TestHelm::wait_for`]).
    pub async fn poll<T, F, Fut>(&self, what: &str, mut check: F) -> anyhow::Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<Option<T>>>,
    {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(found) = check().await? {
                return Ok(found);
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The data root.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Opens the same data root again, as a restarted process would.
    pub async fn reopen(&self) -> anyhow::Result<Helm> {
        let mut options = HelmOptions::new(self.data_dir());
        options.provider_http = mock::fast_http_options();
        Ok(Helm::open(options).await?)
    }
}

/// Lists the entries of a directory by name, sorted (empty if it is missing).
pub fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Whether this process runs as root (then each channel's commands run as a
/// uid of their own, and process isolation can rely on it).
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

/// A string no other test or process uses.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{prefix}{}{nanos}", std::process::id())
}
