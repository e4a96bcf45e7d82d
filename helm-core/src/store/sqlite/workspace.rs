//! Bootstrap (workspace, Captain, `#main`, Skipper) and users.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Tx;
use super::channels::{self, record_journal};
use super::codec::{ms, now, opt_ts, parsed, ts};
use super::messages::{self, NewMessage};
use crate::error::{Error, Result};
use crate::events::EventBody;
use crate::model::{
    Actor, AgentKind, Author, ChannelId, ChannelRef, Handle, MessageStatus, Role, User, UserId,
    Workspace, WorkspaceId,
};
use crate::store::types::{Bootstrap, BootstrapPlan, NewUser, WorldHook};

pub(super) const USER_COLUMNS: &str = "id, name, display_name, role, created, deactivated";

/// The single workspace of this store.
pub(super) fn workspace(conn: &Connection) -> Result<Option<Workspace>> {
    Ok(conn
        .prepare_cached("SELECT id, name, created FROM workspaces ORDER BY id LIMIT 1")?
        .query_row([], |r| {
            Ok(Workspace {
                id: r.get(0)?,
                name: r.get(1)?,
                created: ts(r, 2)?,
            })
        })
        .optional()?)
}

/// The workspace id, or an error if bootstrap has not run.
pub(super) fn workspace_id(conn: &Connection) -> Result<WorkspaceId> {
    workspace(conn)?
        .map(|w| w.id)
        .ok_or_else(|| Error::Internal("the store has no workspace yet; run init".into()))
}

pub(super) fn bootstrap(
    tx: &mut Tx<'_>,
    plan: BootstrapPlan,
    world: WorldHook,
) -> Result<Bootstrap> {
    if let Some(workspace) = workspace(tx.conn())? {
        let captain = captain(tx.conn())?;
        let home = channels::home(tx.conn())?;
        world(&home)?;
        return Ok(Bootstrap {
            workspace,
            captain,
            home,
            created: false,
        });
    }

    let created = now();
    let conn = tx.conn();
    conn.execute(
        "INSERT INTO workspaces (name, created) VALUES (?1, ?2)",
        params![plan.workspace_name, ms(created)],
    )?;
    let ws = WorkspaceId(conn.last_insert_rowid());
    let captain = insert_user(
        conn,
        &NewUser {
            name: plan.captain_name.clone(),
            display_name: plan.captain_name.clone(),
            role: Role::Captain,
        },
    )?;

    conn.execute(
        "INSERT INTO channels (workspace_id, name, purpose, kind, status, visibility, created_by, \
         created, status_changed) VALUES (?1, ?2, ?3, 'home', 'active', 'public', ?4, ?5, ?5)",
        params![
            ws,
            crate::model::HOME_CHANNEL,
            plan.home_purpose,
            captain.id,
            ms(created)
        ],
    )?;
    let home_id = ChannelId(conn.last_insert_rowid());
    channels::add_member(conn, home_id, captain.id, "owner")?;

    conn.execute(
        "INSERT INTO agents (workspace_id, kind, name, display_name, status, created) \
         VALUES (?1, 'skipper', ?2, 'Skipper', 'ready', ?3)",
        params![ws, Handle::skipper().as_str(), ms(created)],
    )?;
    let skipper_id = conn.last_insert_rowid();
    let root = format!("channels/{home_id}");
    conn.execute(
        "INSERT INTO agent_profiles (agent_id, purpose, instructions, workspace_ref, \
         memory_namespace, capability_policy, updated) VALUES (?1, ?2, ?3, ?4, 'workspace', ?5, ?6)",
        params![
            skipper_id,
            plan.home_purpose,
            plan.skipper_instructions,
            root,
            r#"{"network":true}"#,
            ms(created)
        ],
    )?;
    conn.execute(
        "INSERT INTO channel_workspaces (channel_id, root, created) VALUES (?1, ?2, ?3)",
        params![home_id, root, ms(created)],
    )?;
    conn.execute(
        "INSERT INTO model_policies (workspace_id, scope, updated) VALUES (?1, 'workspace', ?2)",
        params![ws, ms(created)],
    )?;
    let actor = Actor::user(&captain);
    record_journal(
        conn,
        Some(home_id),
        Some(crate::model::HOME_CHANNEL),
        &actor,
        "workspace.initialized",
        &format!(
            "workspace {:?} created with #main and @skipper",
            plan.workspace_name
        ),
    )?;

    let home = channels::get(conn, &ChannelRef::Id(home_id))?;
    let welcome = messages::insert(
        conn,
        NewMessage {
            channel_id: home_id,
            thread_id: None,
            author: &Author::Agent {
                agent_id: home.agent.id,
                handle: home.agent.handle.clone(),
                agent_kind: AgentKind::Skipper,
            },
            content: crate::store::rules::SKIPPER_WELCOME,
            status: MessageStatus::Complete,
            served_by: None,
            external_id: None,
        },
    )?;
    tx.emit(
        Some(home_id),
        EventBody::ChannelCreated {
            channel: home.channel.clone(),
            agent: home.agent.clone(),
        },
    )?;
    tx.emit(
        Some(home_id),
        EventBody::MessageCreated { message: welcome },
    )?;
    world(&home)?;
    let workspace = workspace(tx.conn())?
        .ok_or_else(|| Error::Internal("workspace vanished during bootstrap".into()))?;
    Ok(Bootstrap {
        workspace,
        captain,
        home,
        created: true,
    })
}

pub(super) fn insert_user(conn: &Connection, user: &NewUser) -> Result<User> {
    let ws = workspace_id(conn)?;
    let created = now();
    conn.prepare_cached(
        "INSERT INTO users (workspace_id, name, display_name, role, created) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        ws,
        user.name,
        user.display_name,
        user.role.as_str(),
        ms(created)
    ])?;
    Ok(User {
        id: UserId(conn.last_insert_rowid()),
        name: user.name.clone(),
        display_name: user.display_name.clone(),
        role: user.role,
        created,
        deactivated: None,
    })
}

pub(super) fn user_from_row(r: &Row<'_>) -> rusqlite::Result<User> {
    user_at(r, 0)
}

/// A user from the six [`USER_COLUMNS`] starting at `at`.
pub(super) fn user_at(r: &Row<'_>, at: usize) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(at)?,
        name: r.get(at + 1)?,
        display_name: r.get(at + 2)?,
        role: parsed(r, at + 3)?,
        created: ts(r, at + 4)?,
        deactivated: opt_ts(r, at + 5)?,
    })
}

pub(super) fn user(conn: &Connection, id: UserId) -> Result<User> {
    conn.prepare_cached(&format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"))?
        .query_row([id], user_from_row)
        .optional()?
        .ok_or_else(|| Error::not_found("user", id))
}

pub(super) fn user_by_name(conn: &Connection, name: &str) -> Result<User> {
    conn.prepare_cached(&format!(
        "SELECT {USER_COLUMNS} FROM users WHERE workspace_id = ?1 AND name = ?2"
    ))?
    .query_row(params![workspace_id(conn)?, name], user_from_row)
    .optional()?
    .ok_or_else(|| Error::not_found("user", name))
}

pub(super) fn captain(conn: &Connection) -> Result<User> {
    conn.prepare_cached(&format!(
        "SELECT {USER_COLUMNS} FROM users WHERE workspace_id = ?1 AND role = 'captain'"
    ))?
    .query_row([workspace_id(conn)?], user_from_row)
    .optional()?
    .ok_or_else(|| Error::Internal("the workspace has no Captain".into()))
}

pub(super) fn list_users(conn: &Connection) -> Result<Vec<User>> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {USER_COLUMNS} FROM users ORDER BY id"))?;
    let users = stmt
        .query_map([], user_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(users)
}

pub(super) fn stats(conn: &Connection) -> Result<crate::store::types::StoreStats> {
    let count = |sql: &str| -> Result<u64> {
        Ok(conn
            .prepare_cached(sql)?
            .query_row([], |r| r.get::<_, i64>(0))? as u64)
    };
    Ok(crate::store::types::StoreStats {
        schema_version: conn.pragma_query_value(None, "user_version", |r| r.get(0))?,
        users: count("SELECT count(*) FROM users")?,
        channels_active: count("SELECT count(*) FROM channels WHERE status = 'active'")?,
        channels_archived: count("SELECT count(*) FROM channels WHERE status = 'archived'")?,
        agents: count("SELECT count(*) FROM agents")?,
        threads: count("SELECT count(*) FROM threads")?,
        messages: count("SELECT count(*) FROM messages")?,
        last_event_seq: count("SELECT coalesce(max(seq), 0) FROM events")?,
    })
}
