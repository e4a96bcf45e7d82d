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

/** An error in words, announced when it appears. */
export function ErrorNote({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <p class="error-note" role="alert">
      {error}
    </p>
  );
}
