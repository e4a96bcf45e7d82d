// Connecting a model provider: OpenAI or a compatible server (URL and key),
// Anthropic (key), or Ollama on this machine (no key). The key is sent
// once; the server keeps it and never shows it again.
import { useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { Provider, ProviderModels } from "../../api/types";
import { ErrorNote, Field } from "../../components/Field";

type Kind = "openai" | "anthropic" | "ollama";

const PRESETS: Record<Kind, { label: string; detail: string; name: string; url: string; model: string; key: boolean }> = {
  openai: { label: "OpenAI or compatible", detail: "OpenAI, OpenRouter, vLLM, LiteLLM, llama.cpp…", name: "openai", url: "https://api.openai.com/v1", model: "gpt-4o-mini", key: true },
  anthropic: { label: "Anthropic", detail: "Claude models", name: "anthropic", url: "https://api.anthropic.com", model: "claude-sonnet-4-5", key: true },
  ollama: { label: "Ollama", detail: "Models running on this machine", name: "ollama", url: "http://localhost:11434/v1", model: "llama3.2", key: false },
};

export function ProviderForm({
  makeDefault = false,
  onSaved,
  submitLabel = "Save provider",
}: {
  makeDefault?: boolean;
  onSaved: (provider: Provider) => void;
  submitLabel?: string;
}) {
  const [kind, setKind] = useState<Kind>("openai");
  const preset = PRESETS[kind];
  const [name, setName] = useState(preset.name);
  const [url, setUrl] = useState(preset.url);
  const [key, setKey] = useState("");
  const [model, setModel] = useState(preset.model);
  const [asDefault, setAsDefault] = useState(makeDefault);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const choose = (next: Kind) => {
    setKind(next);
    setName(PRESETS[next].name);
    setUrl(PRESETS[next].url);
    setModel(PRESETS[next].model);
  };

  /** The last test's finding, and the form it was for (an edit hides it). */
  const [tested, setTested] = useState<{ form: string; text: string }>();

  const body = () => ({
    name: name.trim(),
    kind: kind === "anthropic" ? ("anthropic" as const) : ("openai" as const),
    base_url: url.trim(),
    api_key: key.trim() || undefined,
    default_model: model.trim() || undefined,
    make_default: asDefault,
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const provider = await api.post("/api/providers", { body: body() });
      setKey("");
      onSaved(provider);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  // Connects with what the form holds, before anything is saved (the key
  // too is used for the test only), and says what the provider serves.
  const test = async () => {
    setBusy(true);
    setError(undefined);
    setTested(undefined);
    try {
      const found = await api.post("/api/providers/test", { body: body() });
      setTested({ form: JSON.stringify(body()), text: describeModels(found) });
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="provider-form" onSubmit={submit}>
      <fieldset class="choice-cards">
        <legend>Provider</legend>
        {(Object.keys(PRESETS) as Kind[]).map((k) => (
          <label key={k} class={k === kind ? "choice-card selected" : "choice-card"}>
            <input type="radio" name="provider-kind" value={k} checked={k === kind} onChange={() => choose(k)} />
            <span class="choice-title">{PRESETS[k].label}</span>
            <span class="choice-detail">{PRESETS[k].detail}</span>
          </label>
        ))}
      </fieldset>
      <div class="grid-2">
        <Field label="Base URL" hint={kind === "ollama" ? "Ollama's OpenAI-compatible endpoint." : "As the vendor's own clients take it."}>
          {(p) => <input {...p} type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required />}
        </Field>
        <Field label="Default model" hint="Used when a channel names none.">
          {(p) => <input {...p} value={model} onInput={(e) => setModel(e.currentTarget.value)} />}
        </Field>
      </div>
      {preset.key && (
        <Field label="API key" hint="Sent once and kept on the server; it is never shown again.">
          {(p) => <input {...p} type="password" value={key} onInput={(e) => setKey(e.currentTarget.value)} autocomplete="off" spellcheck={false} />}
        </Field>
      )}
      <details class="disclosure">
        <summary>More options</summary>
        <Field label="Name in Helm" hint="How channels refer to this provider.">
          {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} pattern="[A-Za-z0-9._\-]{1,64}" required />}
        </Field>
        <label class="check">
          <input type="checkbox" checked={asDefault} onChange={(e) => setAsDefault(e.currentTarget.checked)} />
          Make it the workspace's default model
        </label>
      </details>
      <ErrorNote error={error} />
      {tested && tested.form === JSON.stringify(body()) && (
        <p class="ok-note" role="status">
          {tested.text}
        </p>
      )}
      <div class="actions">
        <button type="button" class="btn" disabled={busy || !url.trim()} onClick={test}>
          Test connection
        </button>
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy ? "Working…" : submitLabel}
        </button>
      </div>
    </form>
  );
}

/** What a connection test found, in a sentence. */
export function describeModels(found: ProviderModels): string {
  const wanted = found.default_model ?? undefined;
  if (!found.listed) return `Connected. This provider keeps no model list, so ${wanted ? `“${wanted}”` : "any model name"} is taken as given.`;
  const count = `${found.models.length} model${found.models.length === 1 ? "" : "s"}`;
  if (!wanted) return `Connected: it serves ${count}.`;
  return found.default_served ? `Connected: it serves ${count}, including “${wanted}”.` : `Connected: it serves ${count}, but not “${wanted}”. Check the default model's name.`;
}
