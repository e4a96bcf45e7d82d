// What to do when no model can answer: the Captain and admins get the way
// to the Providers page, members the person to ask. Used for the server's
// `model_unavailable` answer to a message and for a channel whose model is
// not set (the first-run wizard's model step may have been skipped).
import { ApiError, describeError } from "../../api/client";
import { Icon } from "../../components/Icon";
import { isAdmin } from "../../state/session";

export const PROVIDERS_PATH = "/admin/providers";

/** What a member (who cannot connect one) is told to do; the channel header says it too. */
export const NO_MODEL_ASK = "Ask the Captain to connect a model.";

/** The next step, for whoever is signed in. */
function NextStep() {
  return isAdmin.value ? (
    <a class="btn btn-small btn-primary" href={PROVIDERS_PATH}>
      Connect a model
    </a>
  ) : (
    <span>{NO_MODEL_ASK}</span>
  );
}

/** The server's own words, kept for whoever wants them. */
export function Details({ text }: { text: string }) {
  return (
    <details class="raw-details">
      <summary>Details</summary>
      <p>{text}</p>
    </details>
  );
}

/** Above the chat while the channel has no model. */
export function NoModelBanner({ handle }: { handle: string }) {
  return (
    <div class="no-model-banner" role="status">
      <Icon name="activity" />
      <span class="no-model-text">
        <strong>No model is connected yet,</strong> so @{handle} cannot answer.
      </span>
      <NextStep />
    </div>
  );
}

/** A message refused because no model can serve it: what to do, then the server's reason. */
export function NoModelError({ handle, error }: { handle: string; error: unknown }) {
  return (
    <div class="no-model-error" role="alert">
      <p>
        <strong>No model can answer @{handle} yet,</strong> so the message was not sent. <NextStep />
      </p>
      <Details text={describeError(error)} />
    </div>
  );
}

export function isModelUnavailable(error: unknown): boolean {
  return error instanceof ApiError && error.code === "model_unavailable";
}
