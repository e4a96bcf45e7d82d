//! [`TurnStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use async_trait::async_trait;
use jiff::Timestamp;

use super::super::codec::ms;
use super::super::{SqliteStore, artifacts, members, threads, tool_actions, turns};
use crate::error::Result;
use crate::model::{
    Artifact, ArtifactKind, ChannelId, ModelChoice, ThreadId, ToolAction, ToolActionId, Turn,
    TurnId, TurnState, User,
};
use crate::store::TurnStore;
use crate::store::types::{
    Admission, LeaseRenewal, NewToolAction, Repaired, ToolActionOutcome, TurnFinish,
};

#[async_trait]
impl TurnStore for SqliteStore {
    async fn turn(&self, id: TurnId) -> Result<Turn> {
        self.read_here(|c| turns::get(c, id)).await
    }

    async fn thread_turns(&self, thread: ThreadId) -> Result<Vec<Turn>> {
        self.read(move |c| turns::for_thread(c, thread)).await
    }

    async fn runnable_turns(&self, capacity: u32) -> Result<Vec<Turn>> {
        self.read(move |c| turns::runnable(c, capacity)).await
    }

    async fn running_turns(&self) -> Result<Vec<Turn>> {
        self.read(turns::running).await
    }

    async fn renew_turn_leases(&self, _turns: Vec<TurnId>) -> Result<LeaseRenewal> {
        // One driver per database (the data root's driver lock): no node can
        // take a turn over or ask for a stop, so there is no lease to keep.
        Ok(LeaseRenewal::default())
    }

    async fn request_turn_stop(&self, _turn: TurnId, _by: &str) -> Result<bool> {
        // Every running turn is the one driver's own, stopped in-process.
        Ok(false)
    }

    async fn orphaned_turns(&self) -> Result<Vec<Turn>> {
        self.read(turns::running).await
    }

    async fn start_turn(
        &self,
        turn: TurnId,
        served_by: Option<ModelChoice>,
    ) -> Result<Option<Turn>> {
        self.write(move |tx| turns::start(tx, turn, served_by))
            .await
    }

    async fn append_reply(&self, turn: TurnId, delta: String) -> Result<bool> {
        let seq = self
            .write(move |tx| turns::append_reply(tx, turn, &delta))
            .await?;
        Ok(seq.is_some())
    }

    async fn retry_turn(&self, turn: TurnId, by: User, admission: Admission) -> Result<Turn> {
        self.write(move |tx| turns::retry(tx, turn, &by, &admission))
            .await
    }

    async fn finish_turn(&self, turn: TurnId, finish: TurnFinish) -> Result<Option<Turn>> {
        self.write(move |tx| turns::finish(tx, turn, finish)).await
    }

    async fn turn_counts(&self) -> Result<Vec<(TurnState, u64)>> {
        self.read(members::turn_counts).await
    }

    async fn repair_after_stop(&self) -> Result<Repaired> {
        self.write_apart(|tx| {
            Ok(Repaired {
                tool_actions: tool_actions::interrupt_orphans(tx)?,
                threads: threads::follow_latest_turns(tx)?,
            })
        })
        .await
    }

    async fn turn_hops_since(
        &self,
        thread: ThreadId,
        since: Option<Timestamp>,
    ) -> Result<Vec<u32>> {
        let since = since.map(ms).unwrap_or(0);
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT hop FROM turns WHERE thread_id = ?1 AND queued_at >= ?2 ORDER BY id",
            )?;
            let hops = stmt
                .query_map(rusqlite::params![thread, since], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<u32>>>()?;
            Ok(hops)
        })
        .await
    }

    async fn start_tool_action(&self, action: NewToolAction) -> Result<ToolAction> {
        self.write(move |tx| tool_actions::start(tx, action)).await
    }

    async fn finish_tool_action(
        &self,
        id: ToolActionId,
        outcome: ToolActionOutcome,
    ) -> Result<ToolAction> {
        self.write(move |tx| tool_actions::finish(tx, id, outcome))
            .await
    }

    async fn tool_actions(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<ToolActionId>,
        limit: usize,
    ) -> Result<Vec<ToolAction>> {
        self.read(move |c| tool_actions::list(c, channel, thread, before, limit))
            .await
    }

    async fn record_artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        kind: ArtifactKind,
        created_by: &str,
        paths: Vec<String>,
        touch: bool,
    ) -> Result<Vec<Artifact>> {
        let created_by = created_by.to_string();
        self.write(move |tx| {
            artifacts::record(tx, channel, thread, kind, &created_by, &paths, touch)
        })
        .await
    }

    async fn artifacts(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<Vec<Artifact>> {
        self.read(move |c| artifacts::list(c, channel, thread))
            .await
    }
}
