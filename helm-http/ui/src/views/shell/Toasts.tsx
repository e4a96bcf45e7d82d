// Passing notices, announced politely; errors stay until dismissed.
import { Icon } from "../../components/Icon";
import { navigate } from "../../state/router";
import { dismiss, toasts } from "../../state/toasts";

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast toast-${t.tone}`}>
          {t.href ? (
            <button
              type="button"
              class="toast-text link-like"
              onClick={() => {
                dismiss(t.id);
                navigate(t.href!);
              }}
            >
              {t.text}
            </button>
          ) : (
            <span class="toast-text">{t.text}</span>
          )}
          {t.action && (
            <button
              type="button"
              class="toast-action"
              onClick={() => {
                dismiss(t.id);
                t.action!.run();
              }}
            >
              {t.action.label}
            </button>
          )}
          <button type="button" class="icon-button small" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            <Icon name="close" size={14} />
          </button>
        </div>
      ))}
    </div>
  );
}
