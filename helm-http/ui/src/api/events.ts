// The live events, typed from the server's document: a union told apart by
// `type`. `EventOf<"message.delta">` is one member.
import type { components } from "./schema.gen";

export type LiveEvent = components["schemas"]["Event"];
export type EventType = LiveEvent["type"];
export type EventOf<T extends EventType> = Extract<LiveEvent, { type: T }>;
export type StreamHello = components["schemas"]["StreamHello"];
export type StreamResync = components["schemas"]["StreamResync"];

/** A frame of the events WebSocket: a control frame or an event. */
export type StreamFrame = StreamHello | StreamResync | LiveEvent | { type: string; seq?: number };
