// #main runs on Skipper's host computer, unconfined: the server lets only
// the Captain and admins use its computer (files, Cowork, terminals) and
// refuses everyone else. The views ask the same question first, so a
// member sees one sentence instead of refused requests, dead buttons and
// retries that can never work.
import { Icon } from "../../components/Icon";
import type { ChannelEntry } from "../../state/channels";
import { channelPath } from "../../state/router";
import { isAdmin } from "../../state/session";

/** Whether the person signed in may not use this channel's computer (a member in #main). */
export function offHostComputer(entry: ChannelEntry): boolean {
  return entry.channel.kind === "home" && !isAdmin.value;
}

/** What a member sees instead of Files, Cowork or Terminal in #main. */
export function HostComputerNote({ entry, what }: { entry: ChannelEntry; what: string }) {
  return (
    <div class="preview-empty host-computer-note" role="note">
      <Icon name="lock" size={28} />
      <p>
        <strong>
          #{entry.channel.name} runs on Skipper's host computer, so only the Captain and admins work on its {what}.
        </strong>
      </p>
      <p class="muted">
        You can still ask @{entry.agent.handle} in <a href={channelPath(entry.channel.name)}>Chat</a>, or make a channel of your own, with a computer of its own, for your
        files.
      </p>
    </div>
  );
}
