/**
 * Workspace settings: the workspace's limits and what it uses of them, API keys (admin keys only: the API
 * refuses the others) and secrets (names only; values go in and never come back).
 */
import type { ApiKey, CreatedApiKey, Secret, Workspace } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ShownOnce } from '../components/copy-button';
import { ConfirmDialog } from '../components/dialog';
import { Empty, ErrorNotice, Loading, Success } from '../components/feedback';
import { formatTime } from '../format';
import { useCan, useSession, type Scope } from '../session';
import { useAsync } from '../use-async';

export function SettingsPage() {
  const isAdmin = useCan('admin');
  const session = useSession();
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <dl class="facts">
        <div>
          <dt>Workspace</dt>
          <dd>
            {session.workspace.name} <span class="hint mono">{session.workspace.id}</span>
          </dd>
        </div>
        <div>
          <dt>Signed in with</dt>
          <dd>
            {session.key.name} <span class="hint mono">{session.key.prefix}…</span> (
            {session.key.scopes.join(', ')})
          </dd>
        </div>
        <div>
          <dt>Session ends</dt>
          <dd>{formatTime(session.expires_at)}</dd>
        </div>
      </dl>
      <Limits />
      {isAdmin ? (
        <ApiKeys />
      ) : (
        <section aria-labelledby="keys-title">
          <h2 id="keys-title">API keys</h2>
          <p class="hint">Only an admin key sees and manages the workspace's API keys.</p>
        </section>
      )}
      <Secrets />
    </section>
  );
}

const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

type Limits = Workspace['limits'];
type Usage = Workspace['usage'];

/** Each limit as people read it, with the usage it is measured against (none for a per-definition limit). */
const LIMIT_ROWS: { limit: keyof Limits; label: string; usage: keyof Usage | null }[] = [
  { limit: 'workflows', label: 'Workflows', usage: 'workflows' },
  { limit: 'secrets', label: 'Secrets', usage: 'secrets' },
  { limit: 'webhook_endpoints', label: 'Webhook endpoints', usage: 'webhook_endpoints' },
  { limit: 'api_keys', label: 'API keys (active)', usage: 'api_keys' },
  { limit: 'open_executions', label: 'Open executions (running or waiting)', usage: 'open_executions' },
  { limit: 'steps_per_definition', label: 'Steps per definition', usage: null },
  { limit: 'ai_tokens_per_day', label: 'AI tokens per day (used today, UTC)', usage: 'ai_tokens_today' },
];

function Limits() {
  const workspace = useAsync(() => api.workspace.get(), []);
  const data = workspace.data;
  return (
    <section aria-labelledby="limits-title">
      <h2 id="limits-title">Limits</h2>
      <p class="hint">
        Set by the operator of this service. Creating one more of something than its limit allows is refused.
      </p>
      <ErrorNotice error={workspace.error} title="Could not read the workspace's limits" />
      {workspace.loading && !data && <Loading label="Loading limits…" />}
      {data && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Limits table">
          <table>
            <thead>
              <tr>
                <th scope="col">Limit</th>
                <th scope="col">Used</th>
                <th scope="col">Maximum</th>
              </tr>
            </thead>
            <tbody>
              {LIMIT_ROWS.map((row) => {
                const max = data.limits[row.limit];
                return (
                  <tr key={row.limit} data-testid="limit-row" data-limit={row.limit}>
                    <td>{row.label}</td>
                    <td>{row.usage === null ? '–' : data.usage[row.usage].toLocaleString('en-US')}</td>
                    <td>{max === null ? 'unlimited' : max.toLocaleString('en-US')}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ApiKeys() {
  const session = useSession();
  const keys = useAsync(() => api.apiKeys.list({ limit: 100 }).toArray(), []);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.apiKeys.revoke(revoking.id);
      setNotice(`Key ${revoking.name} (${revoking.prefix}…) revoked.`);
      setRevoking(null);
      await keys.reload();
    } catch (caught) {
      setRevoking(null);
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {created && (
        <ShownOnce title={`API key ${created.name}`} value={created.key} onDone={() => setCreated(null)} />
      )}
      {notice && <Success>{notice}</Success>}
      <ErrorNotice error={error} title="The action failed" />
      <ErrorNotice error={keys.error} title="Could not list the keys" />
      {keys.loading && !keys.data && <Loading label="Loading keys…" />}
      {keys.data && keys.data.length === 0 && <Empty>No keys.</Empty>}
      {keys.data && keys.data.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="API keys table">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((key) => (
                <tr key={key.id} data-testid="key-row" data-key={key.id}>
                  <td>
                    {key.name}
                    {key.id === session.key.id && <span class="hint"> (this session)</span>}
                  </td>
                  <td class="mono">{key.prefix}…</td>
                  <td>{key.scopes.join(', ')}</td>
                  <td>{formatTime(key.created_at)}</td>
                  <td>{key.last_used_at ? formatTime(key.last_used_at) : 'never'}</td>
                  <td>
                    {key.revoked_at ? (
                      <span class="badge status-canceled">revoked {formatTime(key.revoked_at)}</span>
                    ) : (
                      <button type="button" class="danger" onClick={() => setRevoking(key)}>
                        Revoke<span class="sr-only"> {key.name}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateKey
        onCreated={async (key) => {
          setNotice(undefined);
          setCreated(key);
          await keys.reload();
        }}
      />
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        danger
        busy={busy}
        onConfirm={() => void revoke()}
        onCancel={() => setRevoking(null)}
      >
        <p>
          Key <strong>{revoking?.name}</strong> <span class="mono">({revoking?.prefix}…)</span> stops working
          at once, with every console session signed in with it.
          {revoking?.id === session.key.id && ' This is the key of your own session: you will be signed out.'}
        </p>
      </ConfirmDialog>
    </section>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: CreatedApiKey) => Promise<void> }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('read');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.apiKeys.create({ name: name.trim(), scopes: [scope] });
      setName('');
      await onCreated(created);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="panel" onSubmit={(e) => void submit(e)} aria-labelledby="create-key-title">
      <h3 id="create-key-title">Create a key</h3>
      <label for="key-name">Name</label>
      <input
        id="key-name"
        type="text"
        required
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <fieldset>
        <legend>Scope</legend>
        {SCOPES.map((s) => (
          <div class="checkbox" key={s}>
            <input
              id={`scope-${s}`}
              type="radio"
              name="scope"
              value={s}
              checked={scope === s}
              onChange={() => setScope(s)}
            />
            <label for={`scope-${s}`}>
              {s}
              <span class="hint">
                {s === 'read'
                  ? ' – reads only'
                  : s === 'write'
                    ? ' – also runs, retries, decides, edits'
                    : ' – also manages keys'}
              </span>
            </label>
          </div>
        ))}
      </fieldset>
      <ErrorNotice error={error} title="Could not create the key" />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
    </form>
  );
}

function Secrets() {
  const canWrite = useCan('write');
  const secrets = useAsync(() => api.secrets.list({ limit: 100 }).toArray(), []);
  const [editing, setEditing] = useState<{ name: string; replacing: boolean } | null>(null);
  const [deleting, setDeleting] = useState<Secret | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  const remove = async () => {
    if (!deleting) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.secrets.delete(deleting.name);
      setNotice(`Secret ${deleting.name} deleted.`);
      setDeleting(null);
      await secrets.reload();
    } catch (caught) {
      setDeleting(null);
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <p class="hint">
        Steps use them as <code>{'{{ secrets.NAME }}'}</code>. Only names are shown: values never leave the
        service.
      </p>
      {notice && <Success>{notice}</Success>}
      <ErrorNotice error={error} title="The action failed" />
      <ErrorNotice error={secrets.error} title="Could not list the secrets" />
      {secrets.loading && !secrets.data && <Loading label="Loading secrets…" />}
      {secrets.data && secrets.data.length === 0 && <Empty>No secrets yet.</Empty>}
      {secrets.data && secrets.data.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Secrets table">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                {canWrite && (
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {secrets.data.map((secret) => (
                <tr key={secret.name} data-testid="secret-row">
                  <td class="mono">{secret.name}</td>
                  <td>{formatTime(secret.created_at)}</td>
                  <td>{formatTime(secret.updated_at)}</td>
                  {canWrite && (
                    <td class="row-actions">
                      <button
                        type="button"
                        onClick={() => setEditing({ name: secret.name, replacing: true })}
                      >
                        Replace<span class="sr-only"> {secret.name}</span>
                      </button>
                      <button type="button" class="danger" onClick={() => setDeleting(secret)}>
                        Delete<span class="sr-only"> {secret.name}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canWrite && (
        <SecretForm
          key={editing ? `${editing.name}:${editing.replacing}` : 'new'}
          name={editing?.name ?? ''}
          replacing={editing?.replacing ?? false}
          onCancel={() => setEditing(null)}
          onSaved={async (name, replaced) => {
            setEditing(null);
            setNotice(`Secret ${name} ${replaced ? 'replaced' : 'set'}.`);
            await secrets.reload();
          }}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this secret?"
        confirmLabel="Delete secret"
        danger
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(null)}
      >
        <p>
          Steps that use <code>{`secrets.${deleting?.name ?? ''}`}</code> fail until it is set again.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function SecretForm({
  name: initialName,
  replacing,
  onCancel,
  onSaved,
}: {
  name: string;
  replacing: boolean;
  onCancel: () => void;
  onSaved: (name: string, replaced: boolean) => Promise<void>;
}) {
  const [name, setName] = useState(initialName);
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.secrets.put(name.trim(), value);
      setValue('');
      await onSaved(name.trim(), replacing);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="panel" onSubmit={(e) => void submit(e)} aria-labelledby="secret-form-title">
      <h3 id="secret-form-title">{replacing ? `Replace ${initialName}` : 'Set a secret'}</h3>
      <label for="secret-name">Name</label>
      <input
        id="secret-name"
        type="text"
        required
        readOnly={replacing}
        spellcheck={false}
        autoComplete="off"
        placeholder="CRM_TOKEN"
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <label for="secret-value">Value</label>
      <input
        id="secret-value"
        type="password"
        required
        autoComplete="new-password"
        value={value}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      <p class="hint">Setting an existing name replaces its value.</p>
      <ErrorNotice error={error} title="Could not save the secret" />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || name.trim() === '' || value === ''}>
          {busy ? 'Saving…' : replacing ? 'Replace value' : 'Set secret'}
        </button>
        {replacing && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
