// A modal dialog on the native <dialog>: focus moves in and is trapped by
// the browser, Escape closes it, the page behind is inert.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { Icon } from "./Icon";

let counter = 0;

export function Dialog({
  title,
  onClose,
  children,
  wide = false,
  description,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
  description?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useRef(`dialog-${++counter}`).current;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const cancel = (e: Event) => {
      e.preventDefault();
      onClose();
    };
    dialog.addEventListener("cancel", cancel);
    return () => {
      dialog.removeEventListener("cancel", cancel);
      if (dialog.open) dialog.close();
      opener?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={wide ? "dialog dialog-wide" : "dialog"}
      aria-labelledby={`${id}-title`}
      aria-describedby={description ? `${id}-description` : undefined}
      onClick={(e) => {
        // A click on the backdrop (the dialog element itself) closes it.
        if (e.target === ref.current) onClose();
      }}
    >
      <div class="dialog-body">
        <header class="dialog-header">
          <h2 id={`${id}-title`}>{title}</h2>
          <button type="button" class="icon-button" aria-label="Close" onClick={onClose}>
            <Icon name="close" />
          </button>
        </header>
        {description && (
          <p id={`${id}-description`} class="muted">
            {description}
          </p>
        )}
        {children}
      </div>
    </dialog>
  );
}
