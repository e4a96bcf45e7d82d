//! What each person has read: read markers, unread counts, mentions, and
//! the channel feed (each thread's root with how far the thread has got),
//! which is what a person opening a channel looks at first.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{ChannelId, Message, MessageId, Thread};

/// How far a person has read a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadMarker {
    /// The channel.
    pub channel_id: ChannelId,
    /// The newest message they have seen.
    pub message_id: MessageId,
    /// When the marker last moved.
    pub updated: Timestamp,
}

/// What a person has not read in one channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelUnread {
    /// The channel.
    pub channel_id: ChannelId,
    /// The newest message they have seen there, if they have read it at all.
    pub last_read: Option<MessageId>,
    /// Messages after it by others (counted up to [`UNREAD_CAP`]).
    pub unread: u32,
    /// Of those, the ones that mention them.
    pub mentions: u32,
}

/// Unread counts stop here ("999+"): a count is a hint, not a census.
pub const UNREAD_CAP: u32 = 999;

/// One entry of a channel's feed: a thread's first message (or a
/// channel-level announcement) and how the thread stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedItem {
    /// The thread's root message, or an announcement outside any thread.
    pub message: Message,
    /// The thread it opened (none for an announcement).
    pub thread: Option<Thread>,
    /// Replies in the thread after the root, as the thread shows them: Helm's
    /// notes about failed turns are left out (the failed reply says it).
    pub replies: u32,
    /// The newest of them.
    pub latest_reply: Option<Message>,
}
