//! [`WorkspaceStore`] for [`PostgresStore`]: bootstrap (workspace, Captain,
//! `#main`, Skipper), users, the provider registry and counts.

use async_trait::async_trait;
use tokio_postgres::Row;

use super::channels::record::{self, add_member, json, record_journal, workspace_id};
use super::codec::{USER, now, parsed, ts, user_at};
use super::{PostgresStore, events, failed};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, AgentKind, Author, ChannelId, ChannelRef, Handle, Role, User, UserId, Workspace,
    WorkspaceId,
};
use crate::provider::ProviderConfig;
use crate::store::WorkspaceStore;
use crate::store::postgres::prepared::Db;
use crate::store::types::{Bootstrap, BootstrapPlan, NewUser, StoreStats, WorldHook};

/// The advisory lock bootstraps hold ("helm" in ASCII, then 1), so that two
/// nodes bootstrapping one empty database take turns: the second finds what
/// the first made.
const BOOTSTRAP_LOCK: i64 = 0x6865_6c6d_0001;

async fn workspace(c: &impl Db) -> Result<Option<Workspace>> {
    let row = c
        .query_opt(
            "SELECT id, name, created FROM workspaces ORDER BY id LIMIT 1",
            &[],
        )
        .await
        .map_err(failed("reading the workspace"))?;
    row.map(|r| {
        Ok(Workspace {
            id: WorkspaceId(r.get(0)),
            name: r.get(1),
            created: ts(&r, 2)?,
        })
    })
    .transpose()
}

async fn captain(c: &impl Db) -> Result<User> {
    let ws = workspace_id(c).await?;
    let row = c
        .query_opt(
            &format!("SELECT {USER} FROM users u WHERE u.workspace_id = $1 AND u.role = 'captain'"),
            &[&ws.get()],
        )
        .await
        .map_err(failed("reading the Captain"))?
        .ok_or_else(|| Error::Internal("the workspace has no Captain".into()))?;
    user_at(&row, 0)
}

async fn insert_user(c: &impl Db, user: &NewUser) -> Result<User> {
    let ws = workspace_id(c).await?;
    let created = now();
    let id: i64 = c
        .query_one(
            "INSERT INTO users (workspace_id, name, display_name, role, created) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
            &[
                &ws.get(),
                &user.name,
                &user.display_name,
                &user.role.as_str(),
                &created.as_millisecond(),
            ],
        )
        .await
        .map_err(failed("adding a user"))?
        .get(0);
    Ok(User {
        id: UserId(id),
        name: user.name.clone(),
        display_name: user.display_name.clone(),
        role: user.role,
        created,
        deactivated: None,
    })
}

async fn bootstrap(c: &impl Db, plan: BootstrapPlan, world: WorldHook) -> Result<Bootstrap> {
    c.execute("SELECT pg_advisory_xact_lock($1)", &[&BOOTSTRAP_LOCK])
        .await
        .map_err(failed("waiting for the bootstrap lock"))?;
    if let Some(workspace) = workspace(c).await? {
        let captain = captain(c).await?;
        let home = record::home(c).await?;
        world(&home)?;
        return Ok(Bootstrap {
            workspace,
            captain,
            home,
            created: false,
        });
    }

    let created = now().as_millisecond();
    let ws = WorkspaceId(
        c.query_one(
            "INSERT INTO workspaces (name, created) VALUES ($1, $2) RETURNING id",
            &[&plan.workspace_name, &created],
        )
        .await
        .map_err(failed("creating the workspace"))?
        .get(0),
    );
    let captain = insert_user(
        c,
        &NewUser {
            name: plan.captain_name.clone(),
            display_name: plan.captain_name.clone(),
            role: Role::Captain,
        },
    )
    .await?;
    let home_id = ChannelId(
        c.query_one(
            "INSERT INTO channels (workspace_id, name, purpose, kind, status, visibility, \
             created_by, created, status_changed) \
             VALUES ($1, $2, $3, 'home', 'active', 'public', $4, $5, $5) RETURNING id",
            &[
                &ws.get(),
                &crate::model::HOME_CHANNEL,
                &plan.home_purpose,
                &captain.id.get(),
                &created,
            ],
        )
        .await
        .map_err(failed("creating #main"))?
        .get(0),
    );
    add_member(c, home_id, captain.id, "owner").await?;
    let skipper_id: i64 = c
        .query_one(
            "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
             VALUES ($1, 'skipper', $2, 'Skipper', 'ready', $3) RETURNING id",
            &[&ws.get(), &Handle::skipper().as_str(), &created],
        )
        .await
        .map_err(failed("creating Skipper"))?
        .get(0);
    let root = format!("channels/{home_id}");
    c.execute(
        "INSERT INTO agent_profiles (agent_id, purpose, instructions, workspace_ref, \
         memory_namespace, capability_policy, updated) \
         VALUES ($1, $2, $3, $4, 'workspace', $5, $6)",
        &[
            &skipper_id,
            &plan.home_purpose,
            &plan.skipper_instructions,
            &root,
            &r#"{"network":true}"#,
            &created,
        ],
    )
    .await
    .map_err(failed("creating Skipper's profile"))?;
    c.execute(
        "INSERT INTO channel_workspaces (channel_id, root, created) VALUES ($1, $2, $3)",
        &[&home_id.get(), &root, &created],
    )
    .await
    .map_err(failed("recording #main's workspace"))?;
    c.execute(
        "INSERT INTO model_policies (workspace_id, scope, updated) VALUES ($1, 'workspace', $2)",
        &[&ws.get(), &created],
    )
    .await
    .map_err(failed("creating the workspace's model policy"))?;
    let actor = Actor::user(&captain);
    record_journal(
        c,
        Some(home_id),
        Some(crate::model::HOME_CHANNEL),
        &actor,
        "workspace.initialized",
        &format!(
            "workspace {:?} created with #main and @skipper",
            plan.workspace_name
        ),
    )
    .await?;

    let home = record::get(c, &ChannelRef::Id(home_id)).await?;
    let welcome = record::post(
        c,
        home_id,
        None,
        &Author::Agent {
            agent_id: home.agent.id,
            handle: home.agent.handle.clone(),
            agent_kind: AgentKind::Skipper,
        },
        crate::store::rules::SKIPPER_WELCOME,
    )
    .await?;
    // The world is made before the events are numbered (see provisioning).
    world(&home)?;
    events::append(
        c,
        Some(home_id),
        EventBody::ChannelCreated {
            channel: home.channel.clone(),
            agent: home.agent.clone(),
        },
    )
    .await?;
    events::append(
        c,
        Some(home_id),
        EventBody::MessageCreated { message: welcome },
    )
    .await?;
    let workspace = workspace(c)
        .await?
        .ok_or_else(|| Error::Internal("workspace vanished during bootstrap".into()))?;
    Ok(Bootstrap {
        workspace,
        captain,
        home,
        created: true,
    })
}

const PROVIDER: &str = "name, kind, base_url, api_key_ref, default_model, extra_headers";

fn provider_at(r: &Row) -> Result<ProviderConfig> {
    Ok(ProviderConfig {
        name: r.get(0),
        kind: parsed(r, 1)?,
        base_url: r.get(2),
        api_key: match r.get::<_, Option<&str>>(3) {
            Some(_) => Some(parsed(r, 3)?),
            None => None,
        },
        default_model: r.get(4),
        extra_headers: json(r, 5)?,
    })
}

#[async_trait]
impl WorkspaceStore for PostgresStore {
    async fn bootstrap(&self, plan: BootstrapPlan, world: WorldHook) -> Result<Bootstrap> {
        in_tx!(self, "bootstrapping the workspace", |tx| bootstrap(
            tx, plan, world
        ))
    }

    async fn workspace(&self) -> Result<Option<Workspace>> {
        let client = self.client().await?;
        workspace(&client).await
    }

    async fn rename_workspace(&self, name: String) -> Result<Workspace> {
        in_tx!(self, "renaming the workspace", |tx| async move {
            let ws = workspace_id(tx).await?;
            tx.execute(
                "UPDATE workspaces SET name = $2 WHERE id = $1",
                &[&ws.get(), &name],
            )
            .await
            .map_err(failed("renaming the workspace"))?;
            let workspace = workspace(tx)
                .await?
                .ok_or_else(|| Error::Internal("the workspace vanished".into()))?;
            events::append(
                tx,
                None,
                EventBody::WorkspaceUpdated {
                    workspace: workspace.clone(),
                },
            )
            .await?;
            Ok::<_, Error>(workspace)
        })
    }

    async fn insert_user(&self, user: NewUser) -> Result<User> {
        let client = self.client().await?;
        insert_user(&client, &user).await
    }

    async fn user(&self, id: UserId) -> Result<User> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {USER} FROM users u WHERE u.id = $1"),
                &[&id.get()],
            )
            .await
            .map_err(failed("reading a user"))?
            .ok_or_else(|| Error::not_found("user", id))?;
        user_at(&row, 0)
    }

    async fn user_by_name(&self, name: &str) -> Result<User> {
        let client = self.client().await?;
        let ws = workspace_id(&client).await?;
        let row = client
            .query_opt(
                &format!("SELECT {USER} FROM users u WHERE u.workspace_id = $1 AND u.name = $2"),
                &[&ws.get(), &name],
            )
            .await
            .map_err(failed("reading a user"))?
            .ok_or_else(|| Error::not_found("user", name))?;
        user_at(&row, 0)
    }

    async fn list_users(&self) -> Result<Vec<User>> {
        let client = self.client().await?;
        let rows = client
            .query(&format!("SELECT {USER} FROM users u ORDER BY u.id"), &[])
            .await
            .map_err(failed("listing users"))?;
        rows.iter().map(|r| user_at(r, 0)).collect()
    }

    async fn put_provider(&self, config: ProviderConfig) -> Result<()> {
        config.validate()?;
        let headers = serde_json::to_string(&config.extra_headers)
            .map_err(|e| Error::Internal(format!("headers do not serialise: {e}")))?;
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO providers (name, kind, base_url, api_key_ref, default_model, \
                 extra_headers, created) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, \
                 base_url = excluded.base_url, api_key_ref = excluded.api_key_ref, \
                 default_model = excluded.default_model, extra_headers = excluded.extra_headers",
                &[
                    &config.name,
                    &config.kind.as_str(),
                    &config.base_url,
                    &config.api_key.as_ref().map(|k| k.to_string()),
                    &config.default_model,
                    &headers,
                    &now().as_millisecond(),
                ],
            )
            .await
            .map_err(failed("storing a provider"))?;
        Ok(())
    }

    async fn provider(&self, name: &str) -> Result<ProviderConfig> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {PROVIDER} FROM providers WHERE name = $1"),
                &[&name],
            )
            .await
            .map_err(failed("reading a provider"))?
            .ok_or_else(|| Error::not_found("provider", name))?;
        provider_at(&row)
    }

    async fn providers(&self) -> Result<Vec<ProviderConfig>> {
        let client = self.client().await?;
        // Names compare byte-wise, as SQLite's BINARY collation does.
        let rows = client
            .query(
                &format!("SELECT {PROVIDER} FROM providers ORDER BY name COLLATE \"C\""),
                &[],
            )
            .await
            .map_err(failed("listing providers"))?;
        rows.iter().map(provider_at).collect()
    }

    async fn stats(&self) -> Result<StoreStats> {
        let client = self.client().await?;
        let r = client
            .query_one(
                "SELECT (SELECT coalesce(max(version), 0)::BIGINT FROM helm_migrations), \
                 (SELECT count(*) FROM users), \
                 (SELECT count(*) FROM channels WHERE status = 'active'), \
                 (SELECT count(*) FROM channels WHERE status = 'archived'), \
                 (SELECT count(*) FROM agents), \
                 (SELECT count(*) FROM threads), \
                 (SELECT count(*) FROM messages), \
                 (SELECT coalesce(max(seq), 0) FROM events)",
                &[],
            )
            .await
            .map_err(failed("counting what the store holds"))?;
        let count = |i: usize| r.get::<_, i64>(i) as u64;
        Ok(StoreStats {
            schema_version: r.get(0),
            users: count(1),
            channels_active: count(2),
            channels_archived: count(3),
            agents: count(4),
            threads: count(5),
            messages: count(6),
            last_event_seq: count(7),
        })
    }
}

/// A user's name (for the audit log); `None` for no user.
pub(crate) async fn user_name(c: &impl Db, id: Option<UserId>) -> Result<Option<String>> {
    let Some(id) = id else { return Ok(None) };
    Ok(
        c.query_opt("SELECT name FROM users WHERE id = $1", &[&id.get()])
            .await
            .map_err(failed("reading a user's name"))?
            .map(|r| r.get(0)),
    )
}
