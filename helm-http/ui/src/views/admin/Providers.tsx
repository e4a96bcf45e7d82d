// Model providers: what is connected, which one is the workspace's
// default, and connecting another. Keys are never shown.
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { Provider } from "../../api/types";
import { ErrorNote } from "../../components/Field";
import { useLatest } from "../../lib/latest";
import { toast } from "../../state/toasts";
import { ProviderForm } from "./ProviderForm";

function keyWords(key: string | null | undefined): string {
  if (!key) return "no key";
  if (key.startsWith("stored:")) return "key kept on the server";
  if (key.startsWith("env:")) return `key from ${key.slice(4)}`;
  if (key.startsWith("file:")) return `key from ${key.slice(5)}`;
  return key;
}

export function Providers() {
  const [providers, setProviders] = useState<Provider[]>();
  const [defaultName, setDefaultName] = useState<string>();
  const [error, setError] = useState<string>();
  // Read again after each change: an earlier read answering last would
  // show the providers, or the default, as they were before it.
  const latest = useLatest();
  const load = async () => {
    const current = latest();
    try {
      const list = await api.get("/api/providers");
      if (!current()) return;
      setProviders(list);
      setError(undefined);
      const policy = await api.get("/api/model");
      if (current()) setDefaultName(policy.workspace?.provider ?? undefined);
    } catch (e) {
      if (current()) setError(describeError(e));
    }
  };
  useEffect(() => void load(), []);

  const makeDefault = async (p: Provider) => {
    try {
      await api.put("/api/model", { body: { provider: p.name, model: p.default_model ?? null } });
      toast(`${p.name} is now the workspace's model.`);
      void load();
    } catch (e) {
      toast(describeError(e), "error");
    }
  };

  return (
    <div class="stack-lg">
      <section class="settings-section">
        <h3>Connected</h3>
        <ErrorNote error={error} onRetry={() => void load()} />
        {providers?.length === 0 && <p class="muted">No provider yet: agents cannot answer until one is connected.</p>}
        <ul class="provider-list">
          {(providers ?? []).map((p) => (
            <li key={p.name}>
              <div>
                <strong>{p.name}</strong> <span class="tag">{p.kind}</span>
                {defaultName === p.name && <span class="tag tag-accent">workspace default</span>}
                <p class="muted small">
                  {p.base_url} · {p.default_model ? `default model ${p.default_model}` : "no default model"} · {keyWords(p.api_key)}
                </p>
              </div>
              {defaultName !== p.name && (
                <button type="button" class="btn btn-small" onClick={() => void makeDefault(p)}>
                  Make default
                </button>
              )}
            </li>
          ))}
        </ul>
      </section>
      <section class="settings-section">
        <h3>Connect a provider</h3>
        <ProviderForm
          makeDefault={providers?.length === 0}
          taken={providers?.map((p) => p.name)}
          onSaved={(p) => {
            toast(`${p.name} is connected.`);
            void load();
          }}
          onTaken={() => void load()}
        />
      </section>
    </div>
  );
}
