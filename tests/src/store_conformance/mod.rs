//! The store conformance suite: what every [`Store`] must do, written once
//! against `dyn Store` and run against each implementation.
//!
//! A test binary names a factory that opens a fresh, empty store and calls
//! [`store_conformance!`](crate::store_conformance), which makes one test per
//! case. SQLite runs it in `tests/store_conformance.rs`; another store is
//! plugged in by adding its factory there.

mod cases;
mod fixtures;
mod thread_lists;

use std::any::Any;
use std::sync::Arc;

use helm_core::store::Store;

pub use cases::*;
pub use fixtures::Fixture;
pub use thread_lists::*;

/// A way to break the audit log behind the store's back, as someone with
/// access to the database could: the chain check must notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    /// Change the outcome of the row with this id.
    EditOutcome(i64),
    /// Remove the newest row.
    RemoveLast,
}

/// A fresh, empty store under test.
pub struct Subject {
    /// The store.
    pub store: Arc<dyn Store>,
    /// Breaks the audit log, if this store's test can reach its database.
    pub tamper: Option<Box<dyn Fn(Tamper) -> anyhow::Result<()> + Send + Sync>>,
    /// Whatever must live as long as the store (a temporary directory).
    pub keep: Box<dyn Any + Send + Sync>,
}

/// Makes one `#[tokio::test]` per conformance case, each on a fresh store
/// from `$factory`, an `async fn() -> anyhow::Result<Subject>`.
#[macro_export]
macro_rules! store_conformance {
    ($factory:path) => {
        $crate::store_conformance!(@cases $factory;
            bootstrap_is_idempotent,
            one_resident_agent_per_channel,
            one_skipper_and_skipper_stays_home,
            live_channel_names_are_unique,
            provisioning_is_all_or_nothing,
            events_follow_commit_order_and_catch_up,
            a_channels_lifecycle_is_read_newest_first,
            thread_tail_keeps_to_its_budget,
            follow_ups_wake_the_agent_while_one_human_speaks,
            a_finished_turn_keeps_its_token_counts,
            a_failed_turn_runs_again_once,
            memory_records_are_listed_and_recalled,
            a_forgotten_record_says_who_and_comes_back,
            renaming_a_thread_is_one_event,
            audit_chain_is_checked,
            turns_are_claimed_in_order_once,
            a_reply_delta_says_where_its_text_goes,
            invites_and_tokens_work_once,
            roles_and_deactivation_are_kept,
            model_policy_levels_are_kept_apart,
            archiving_a_channel_cancels_its_queued_turns,
            hop_facts_follow_the_last_human_post,
            each_computer_has_one_holder,
            thread_pages_neither_repeat_nor_skip,
            threads_are_read_by_id_in_the_order_asked,
            threads_are_found_by_title_and_message_text,
            a_title_with_every_word_outranks_many_newer_with_one,
        );
    };
    (@cases $factory:path; $($case:ident),+ $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() -> anyhow::Result<()> {
                let subject = $factory().await?;
                $crate::store_conformance::$case(&subject).await
            }
        )+
    };
}
