//! Channel membership: who belongs to a channel. Members are who may see a
//! private channel at all (with the Captain and admins); in a public channel
//! membership records who joined, and everyone may read and post.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::enums::string_enum;
use super::workspace::User;

string_enum! {
    /// A person's place in a channel.
    MemberRole as "member role" {
        /// Created it or was made an owner; manages it like its creator.
        Owner => "owner",
        /// Works in it.
        Member => "member",
    }
}

/// A person in a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// The person.
    pub user: User,
    /// Owner or member.
    pub role: MemberRole,
    /// When they joined.
    pub joined: Timestamp,
}
