// A labelled form field with an optional hint and error, wired for
// assistive technology (the hint and the error describe the input).
import type { ComponentChildren } from "preact";
import { useRef } from "preact/hooks";

let counter = 0;

export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ComponentChildren;
  error?: string;
  children: (props: { id: string; "aria-describedby"?: string; "aria-invalid"?: boolean }) => ComponentChildren;
}) {
  const id = useRef(`field-${++counter}`).current;
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={error ? "field field-invalid" : "field"}>
      <label for={id}>{label}</label>
      {children({ id, "aria-describedby": described, "aria-invalid": error ? true : undefined })}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="error-text" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * An error in words, announced when it appears. With `onRetry`, a Retry
 * button beside it: a view that failed to load (the server was down, say)
 * should not need a page reload to try again.
 */
export function ErrorNote({ error, onRetry }: { error?: string; onRetry?: () => void }) {
  if (!error) return null;
  if (!onRetry) {
    return (
      <p class="error-note" role="alert">
        {error}
      </p>
    );
  }
  return (
    <div class="error-note with-retry" role="alert">
      <span>{error}</span>
      <button type="button" class="btn btn-small" onClick={onRetry}>
        Retry
      </button>
    </div>
  );
}

/**
 * Props that make a field's pattern mismatch say `message` (which
 * characters are allowed) instead of the browser's generic "Please match
 * the requested format."; the message clears as soon as the field changes.
 */
export function patternMessage(message: string) {
  return {
    onInvalid: (e: Event) => {
      const input = e.currentTarget as HTMLInputElement;
      if (input.validity.patternMismatch) input.setCustomValidity(message);
    },
    // Runs before the field's own onInput, so the next check starts clean.
    onInputCapture: (e: Event) => (e.currentTarget as HTMLInputElement).setCustomValidity(""),
  };
}
