"""onehelm: script Helm channels from Python.

Create a channel for anything and it comes with a resident AI agent that has
a computer (a shell workspace at ``/workspace``), a memory that belongs to the
channel, and threads that are durable work sessions.

Two flavours over one object model and one shared runtime:

- ``Helm`` (blocking: every call waits with the GIL released; Ctrl-C
  interrupts it), and
- ``AsyncHelm`` (asyncio: every call returns an awaitable).

Each opens a data directory in this process (``Helm.open(path)``) or reaches a
running helm-http server (``Helm.connect(url, token)``). See docs/python.md.
"""

from onehelm._onehelm import (
    Approval,
    ApprovalRequested,
    AsyncApprovalRequested,
    AsyncChannel,
    AsyncFiles,
    AsyncHelm,
    AsyncMemory,
    AsyncProviders,
    AsyncTerminal,
    AsyncThread,
    AsyncThreadIterator,
    AsyncTurnStream,
    Channel,
    CommandResult,
    Conflict,
    FileEntry,
    Files,
    Forbidden,
    Helm,
    HelmError,
    InvalidInput,
    Memory,
    MemoryItem,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    ModelToolCall,
    NotFound,
    ProviderError,
    ProviderInfo,
    Providers,
    RecallHit,
    Refused,
    Reply,
    SkipperCalled,
    Terminal,
    TextDelta,
    Thread,
    ThreadIterator,
    ImportReport,
    ThreadInfo,
    ToolAction,
    ToolCall,
    ToolResult,
    Usage,
    TurnEnded,
    TurnStream,
    Unauthenticated,
    Unavailable,
    User,
    __version__,
)

#: Every event a ``TurnStream`` yields.
Event = TextDelta | ToolCall | ToolResult | ApprovalRequested | SkipperCalled | TurnEnded
#: Every event an ``AsyncTurnStream`` yields.
AsyncEvent = (
    TextDelta | ToolCall | ToolResult | AsyncApprovalRequested | SkipperCalled | TurnEnded
)

__all__ = [
    "Approval",
    "ApprovalRequested",
    "AsyncApprovalRequested",
    "AsyncChannel",
    "AsyncEvent",
    "AsyncFiles",
    "AsyncHelm",
    "AsyncMemory",
    "AsyncProviders",
    "AsyncTerminal",
    "AsyncThread",
    "AsyncThreadIterator",
    "AsyncTurnStream",
    "Channel",
    "CommandResult",
    "Conflict",
    "Event",
    "FileEntry",
    "Files",
    "Forbidden",
    "Helm",
    "HelmError",
    "InvalidInput",
    "Memory",
    "MemoryItem",
    "Message",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelToolCall",
    "NotFound",
    "ProviderError",
    "ProviderInfo",
    "Providers",
    "RecallHit",
    "Refused",
    "Reply",
    "SkipperCalled",
    "Terminal",
    "TextDelta",
    "Thread",
    "ThreadIterator",
    "ImportReport",
    "ThreadInfo",
    "ToolAction",
    "ToolCall",
    "ToolResult",
    "Usage",
    "TurnEnded",
    "TurnStream",
    "Unauthenticated",
    "Unavailable",
    "User",
    "__version__",
]
