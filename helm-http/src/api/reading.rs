//! Mirrors of helm-core's reading types: unread counts, read markers and
//! the channel feed.

use helm_core::model as m;
use jiff::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

use super::threads::{Message, Thread};

/// What the caller has not read in one channel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChannelUnread {
    /// The channel.
    pub channel_id: i64,
    /// The newest message they have seen there, if they have read it at all.
    pub last_read: Option<i64>,
    /// Messages after it by others (counted up to 999).
    pub unread: u32,
    /// Of those, the ones that mention them.
    pub mentions: u32,
}

impl From<m::ChannelUnread> for ChannelUnread {
    fn from(u: m::ChannelUnread) -> Self {
        ChannelUnread {
            channel_id: u.channel_id.0,
            last_read: u.last_read.map(|m| m.0),
            unread: u.unread,
            mentions: u.mentions,
        }
    }
}

/// How far the caller has read a channel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReadMarker {
    /// The channel.
    pub channel_id: i64,
    /// The newest message they have seen.
    pub message_id: i64,
    /// When the marker last moved.
    pub updated: Timestamp,
}

impl From<m::ReadMarker> for ReadMarker {
    fn from(r: m::ReadMarker) -> Self {
        ReadMarker {
            channel_id: r.channel_id.0,
            message_id: r.message_id.0,
            updated: r.updated,
        }
    }
}

/// One entry of a channel's feed: a thread's first message (or an
/// announcement made outside threads) and how far the thread has got.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FeedItem {
    /// The thread's root message, or the announcement.
    pub message: Message,
    /// The thread it opened (absent for an announcement).
    pub thread: Option<Thread>,
    /// Replies in the thread after the root, as the thread shows them: Helm's
    /// notes about failed turns are left out (the failed reply says it).
    pub replies: u32,
    /// The newest of them.
    pub latest_reply: Option<Message>,
}

impl From<m::FeedItem> for FeedItem {
    fn from(f: m::FeedItem) -> Self {
        FeedItem {
            message: f.message.into(),
            thread: f.thread.map(Into::into),
            replies: f.replies,
            latest_reply: f.latest_reply.map(Into::into),
        }
    }
}

/// A page of a channel's feed, oldest first; ask for older entries with
/// `before=next_before`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FeedPage {
    /// The entries, oldest first.
    pub items: Vec<FeedItem>,
    /// The cursor for the previous (older) page; absent on the oldest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_before: Option<i64>,
}
