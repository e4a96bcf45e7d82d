// Connecting a model provider: OpenAI or a compatible server (URL and key),
// Anthropic (key), or Ollama on this machine (no key). The key is sent
// once; the server keeps it and never shows it again.
//
// The name (under "More options") follows the base URL's host and is kept
// unique among the providers already there, until the person types one;
// "make it the default" follows `makeDefault` until they tick or untick it
// (the list deciding it may still be loading when the form first shows).
import { useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import { plainFailure } from "../../lib/failure";
import type { Provider, ProviderModels } from "../../api/types";
import { ErrorNote, Field, patternMessage } from "../../components/Field";

type Kind = "openai" | "anthropic" | "ollama";

const PRESETS: Record<Kind, { label: string; detail: string; name: string; url: string; model: string; key: boolean }> = {
  openai: { label: "OpenAI or compatible", detail: "OpenAI, OpenRouter, vLLM, LiteLLM, llama.cpp…", name: "openai", url: "https://api.openai.com/v1", model: "gpt-4o-mini", key: true },
  anthropic: { label: "Anthropic", detail: "Claude models", name: "anthropic", url: "https://api.anthropic.com", model: "claude-sonnet-4-5", key: true },
  ollama: { label: "Ollama", detail: "Models running on this machine", name: "ollama", url: "http://localhost:11434/v1", model: "llama3.2", key: false },
};

/** A provider name from a base URL's host: `https://api.openai.com/v1` → `openai`. */
export function nameFromUrl(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  // A machine, not a vendor: the preset's name says more.
  if (host === "localhost" || /^[\d.]+$/.test(host) || host.startsWith("[")) return undefined;
  const labels = host.split(".").filter((l) => l && l !== "api" && l !== "www");
  const label = labels.length >= 2 ? labels[labels.length - 2] : labels[0];
  const name = label?.toLowerCase().replace(/[^a-z0-9_-]/g, "-").replace(/^-+/, "");
  return name || undefined;
}

/** `base`, or `base-2`, `base-3`… whichever is not taken yet. */
export function uniqueName(base: string, taken: readonly string[]): string {
  const used = new Set(taken.map((t) => t.toLowerCase()));
  if (!used.has(base.toLowerCase())) return base;
  let n = 2;
  while (used.has(`${base}-${n}`.toLowerCase())) n += 1;
  return `${base}-${n}`;
}

const NAME_RULE = "Letters, digits, '.', '-' and '_' only, not starting with '.'; up to 64 characters.";

export function ProviderForm({
  makeDefault = false,
  taken = [],
  onSaved,
  onTaken,
  submitLabel = "Save provider",
}: {
  makeDefault?: boolean;
  /** The names already in use (a new provider needs its own). */
  taken?: readonly string[];
  onSaved: (provider: Provider) => void;
  /** A name turned out taken on the server: the page's list is stale. */
  onTaken?: () => void;
  submitLabel?: string;
}) {
  const [kind, setKind] = useState<Kind>("openai");
  const preset = PRESETS[kind];
  // What the person typed; until then the name is suggested.
  const [typedName, setTypedName] = useState<string>();
  const [url, setUrl] = useState(preset.url);
  const [key, setKey] = useState("");
  const [model, setModel] = useState(preset.model);
  // Their own choice; until then, what the page says (`makeDefault`).
  const [defaultChoice, setDefaultChoice] = useState<boolean>();
  const [error, setError] = useState<string>();
  const [nameError, setNameError] = useState<string>();
  const [more, setMore] = useState(false);
  const [busy, setBusy] = useState(false);
  const name = typedName ?? uniqueName(nameFromUrl(url) ?? preset.name, taken);
  const asDefault = defaultChoice ?? makeDefault;

  const choose = (next: Kind) => {
    setKind(next);
    setUrl(PRESETS[next].url);
    setModel(PRESETS[next].model);
  };

  /** A name taken already, said on the name field (opened to show it). */
  const nameTaken = (wanted: string) => {
    setNameError(`A provider named ${wanted} is connected already. Choose another name.`);
    setMore(true);
  };

  /** The last test's finding, and the form it was for (an edit hides it). */
  const [tested, setTested] = useState<{ form: string; text: string }>();
  /** The URL being tried while a test or a connect waits (a refused one can take seconds). */
  const [reaching, setReaching] = useState<string>();
  /** Whether what waits is a test (so the buttons say which). */
  const [testing, setTesting] = useState(false);

  const body = () => ({
    name: name.trim(),
    kind: kind === "anthropic" ? ("anthropic" as const) : ("openai" as const),
    base_url: url.trim(),
    api_key: key.trim() || undefined,
    default_model: model.trim() || undefined,
    make_default: asDefault,
  });

  /**
   * The form whose connection failed on saving: the same form saved again
   * is saved as it is (a provider that is down, or a local server not yet
   * started), the button saying so.
   */
  const [unreached, setUnreached] = useState<string>();

  /**
   * Whether the form reaches its provider, tried before saving (unless it
   * was just tested) so a mistyped address or a refused key is said here,
   * not by the first reply that fails. False when it did not: the error is
   * shown, and a provider that could not be reached may be saved anyway.
   */
  const reaches = async (form: string): Promise<boolean> => {
    if (form === unreached || tested?.form === form) return true;
    try {
      const found = await api.post("/api/providers/test", { body: body() });
      if (found.listed && found.default_model && !found.default_served) {
        setError(describeModels(found));
        return false;
      }
      setTested({ form, text: describeModels(found) });
      return true;
    } catch (err) {
      const unreachable = err instanceof ApiError && (err.status === 502 || err.status === 504);
      if (!unreachable) {
        setError(describeError(err));
        return false;
      }
      setUnreached(form);
      // A sentence first; the server's reason (the address and what failed) after it.
      const reason = describeError(err);
      setError(`${plainFailure(reason)} Check the address and the key, or save it anyway and connect it later. (${reason.replace(/\.$/, "")}.)`);
      return false;
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const wanted = name.trim();
    if (taken.some((t) => t.toLowerCase() === wanted.toLowerCase())) {
      nameTaken(wanted);
      return;
    }
    setBusy(true);
    setReaching(url.trim());
    setError(undefined);
    setNameError(undefined);
    try {
      if (!(await reaches(JSON.stringify(body())))) return;
      const provider = await api.post("/api/providers", { body: body() });
      // Ready for another: a fresh suggested name, the page's default choice.
      setKey("");
      setTypedName(undefined);
      setDefaultChoice(undefined);
      onSaved(provider);
    } catch (err) {
      // Someone connected one by that name since the list was read.
      if (err instanceof ApiError && err.status === 409) {
        nameTaken(wanted);
        onTaken?.();
      } else setError(describeError(err));
    } finally {
      setBusy(false);
      setReaching(undefined);
    }
  };

  // Connects with what the form holds, before anything is saved (the key
  // too is used for the test only), and says what the provider serves.
  const test = async () => {
    setBusy(true);
    setTesting(true);
    setReaching(url.trim());
    setError(undefined);
    setTested(undefined);
    try {
      const found = await api.post("/api/providers/test", { body: body() });
      setTested({ form: JSON.stringify(body()), text: describeModels(found) });
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
      setTesting(false);
      setReaching(undefined);
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
      <details class="disclosure" open={more} onToggle={(e) => setMore(e.currentTarget.open)}>
        <summary>More options</summary>
        <Field label="Name in Helm" hint={`How channels refer to this provider. ${NAME_RULE}`} error={nameError}>
          {(p) => (
            <input
              {...p}
              {...patternMessage(NAME_RULE)}
              value={name}
              onInput={(e) => {
                setTypedName(e.currentTarget.value);
                setNameError(undefined);
              }}
              pattern="[A-Za-z0-9_\-][A-Za-z0-9._\-]{0,63}"
              spellcheck={false}
              required
            />
          )}
        </Field>
        <label class="check">
          <input type="checkbox" checked={asDefault} onChange={(e) => setDefaultChoice(e.currentTarget.checked)} />
          Make it the workspace's default model
        </label>
      </details>
      <ErrorNote error={error} />
      {reaching && (
        <p class="muted small reaching" role="status">
          <span class="spinner" aria-hidden="true" /> Trying to reach {reaching}…
        </p>
      )}
      {tested && tested.form === JSON.stringify(body()) && (
        <p class="ok-note" role="status">
          {tested.text}
        </p>
      )}
      <div class="actions">
        <button type="button" class="btn" disabled={busy || !url.trim()} onClick={test}>
          {testing ? "Testing…" : "Test connection"}
        </button>
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy && !testing ? "Connecting…" : unreached === JSON.stringify(body()) ? "Save anyway" : submitLabel}
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
