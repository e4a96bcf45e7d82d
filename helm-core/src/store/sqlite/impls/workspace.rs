//! [`WorkspaceStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use async_trait::async_trait;

use super::super::{SqliteStore, providers, reading, workspace};
use crate::error::Result;
use crate::model::{User, UserId, Workspace};
use crate::provider::ProviderConfig;
use crate::store::WorkspaceStore;
use crate::store::types::{Bootstrap, BootstrapPlan, NewUser, StoreStats, WorldHook};

#[async_trait]
impl WorkspaceStore for SqliteStore {
    async fn bootstrap(&self, plan: BootstrapPlan, world: WorldHook) -> Result<Bootstrap> {
        self.write(move |tx| workspace::bootstrap(tx, plan, world))
            .await
    }

    async fn workspace(&self) -> Result<Option<Workspace>> {
        self.read(workspace::workspace).await
    }

    async fn rename_workspace(&self, name: String) -> Result<Workspace> {
        self.write(move |tx| reading::rename_workspace(tx, &name))
            .await
    }

    async fn insert_user(&self, user: NewUser) -> Result<User> {
        self.write(move |tx| workspace::insert_user(tx.conn(), &user))
            .await
    }

    async fn user(&self, id: UserId) -> Result<User> {
        self.read(move |c| workspace::user(c, id)).await
    }

    async fn user_by_name(&self, name: &str) -> Result<User> {
        let name = name.to_string();
        self.read(move |c| workspace::user_by_name(c, &name)).await
    }

    async fn list_users(&self) -> Result<Vec<User>> {
        self.read(workspace::list_users).await
    }

    async fn put_provider(&self, config: ProviderConfig) -> Result<()> {
        config.validate()?;
        self.write(move |tx| providers::upsert(tx.conn(), &config))
            .await
    }

    async fn provider(&self, name: &str) -> Result<ProviderConfig> {
        let name = name.to_string();
        self.read(move |c| providers::get(c, &name)).await
    }

    async fn providers(&self) -> Result<Vec<ProviderConfig>> {
        self.read(providers::list).await
    }

    async fn stats(&self) -> Result<StoreStats> {
        self.read(workspace::stats).await
    }
}
