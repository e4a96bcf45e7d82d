// Names for the server's types, straight from the generated schema, so
// views say `Channel` rather than `components["schemas"]["Channel"]`.
import type { components } from "./schema.gen";

type S = components["schemas"];

export type Agent = S["Agent"];
export type AgentStatus = S["AgentStatus"];
export type Approval = S["Approval"];
export type Artifact = S["Artifact"];
export type AuditEntry = S["AuditEntry"];
export type AuditVerification = S["AuditVerification"];
export type Author = S["Author"];
export type Channel = S["Channel"];
export type ChannelDetail = S["ChannelDetail"];
export type ChannelRecord = S["ChannelRecord"];
export type Escalation = S["Escalation"];
export type FileEntry = S["FileEntry"];
export type FileText = S["FileText"];
export type Invite = S["Invite"];
export type Member = S["Member"];
export type MemoryItem = S["MemoryItem"];
export type MemoryKind = S["MemoryKind"];
export type Message = S["Message"];
export type MessageStatus = S["MessageStatus"];
export type Provider = S["Provider"];
export type ProviderModels = S["ProviderModels"];
export type RecallHit = S["RecallHit"];
export type Role = S["Role"];
export type Status = S["Status"];
export type Terminal = S["Terminal"];
export type Thread = S["Thread"];
export type ThreadStatus = S["ThreadStatus"];
export type ToolAction = S["ToolAction"];
export type Turn = S["Turn"];
export type TurnState = S["TurnState"];
export type User = S["User"];
