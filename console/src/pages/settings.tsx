/**
 * Workspace settings: the workspace's limits and what it uses of them, API keys (admin keys only: the API
 * refuses the others) and secrets (names only; values go in and never come back).
 */
import type { ApiKey, CreatedApiKey, Secret, Workspace } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ShownOnce } from '../components/copy-button';
import { Choices } from '../components/choices';
import { DataTable, RowButton } from '../components/data-table';
import { ConfirmDialog, useConfirmed } from '../components/dialog';
import { FormPanel, TextField } from '../components/form-panel';
import { Fact } from '../components/facts';
import { ErrorNotice, ListStatus, Loading, Success } from '../components/feedback';
import { formatTime } from '../format';
import { useCan, useSession, type Scope } from '../session';
import { useAction } from '../use-action';
import { useAsync } from '../use-async';

export function SettingsPage() {
  const isAdmin = useCan('admin');
  const session = useSession();
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <dl class="facts">
        <Fact term="Workspace">
          {session.workspace.name} <span class="hint mono">{session.workspace.id}</span>
        </Fact>
        <Fact term="Signed in with">
          {session.key.name} <span class="hint mono">{session.key.prefix}…</span> (
          {session.key.scopes.join(', ')})
        </Fact>
        <Fact term="Session ends">{formatTime(session.expires_at)}</Fact>
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

const SCOPE_HINTS: Record<Scope, string> = {
  read: ' – reads only',
  write: ' – also runs, retries, decides, edits',
  admin: ' – also manages keys',
};

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
        <DataTable label="Limits table" columns={['Limit', 'Used', 'Maximum']}>
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
        </DataTable>
      )}
    </section>
  );
}

function ApiKeys() {
  const session = useSession();
  const keys = useAsync(() => api.apiKeys.list({ limit: 100 }).toArray(), []);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const action = useAction();
  const revoking = useConfirmed(
    action,
    (key: ApiKey) => api.apiKeys.revoke(key.id),
    async (key) => {
      setNotice(`Key ${key.name} (${key.prefix}…) revoked.`);
      await keys.reload();
    },
  );
  const revoked = revoking.asking;

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {created && (
        <ShownOnce title={`API key ${created.name}`} value={created.key} onDone={() => setCreated(null)} />
      )}
      {notice && <Success>{notice}</Success>}
      <ErrorNotice error={action.error} title="The action failed" />
      <ListStatus state={keys} items={keys.data} things="keys" empty="No keys." />
      {keys.data && keys.data.length > 0 && (
        <DataTable label="API keys table" columns={['Name', 'Key', 'Scopes', 'Created', 'Last used']} actions>
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
                  <RowButton label="Revoke" item={key.name} danger onClick={() => revoking.ask(key)} />
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <CreateKey
        onCreated={async (key) => {
          setNotice(undefined);
          setCreated(key);
          await keys.reload();
        }}
      />
      <ConfirmDialog {...revoking.dialog} title="Revoke this key?" confirmLabel="Revoke key" danger>
        <p>
          Key <strong>{revoked?.name}</strong> <span class="mono">({revoked?.prefix}…)</span> stops working at
          once, with every console session signed in with it.
          {revoked?.id === session.key.id && ' This is the key of your own session: you will be signed out.'}
        </p>
      </ConfirmDialog>
    </section>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: CreatedApiKey) => Promise<void> }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('read');
  const action = useAction();

  const create = async () => {
    const created = await api.apiKeys.create({ name: name.trim(), scopes: [scope] });
    setName('');
    await onCreated(created);
  };

  return (
    <FormPanel
      title="Create a key"
      level={3}
      action={action}
      onSubmit={create}
      errorTitle="Could not create the key"
      submitLabel="Create key"
      busyLabel="Creating…"
      ready={name.trim() !== ''}
    >
      <TextField id="key-name" label="Name" type="text" required value={name} onValue={setName} />
      <Choices
        legend="Scope"
        type="radio"
        name="scope"
        options={SCOPES}
        checked={(s) => scope === s}
        onChange={(s) => setScope(s)}
        hint={(s) => SCOPE_HINTS[s]}
      />
    </FormPanel>
  );
}

function Secrets() {
  const canWrite = useCan('write');
  const secrets = useAsync(() => api.secrets.list({ limit: 100 }).toArray(), []);
  const [editing, setEditing] = useState<{ name: string; replacing: boolean } | null>(null);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const action = useAction();
  const deleting = useConfirmed(
    action,
    (secret: Secret) => api.secrets.delete(secret.name),
    async (secret) => {
      setNotice(`Secret ${secret.name} deleted.`);
      await secrets.reload();
    },
  );

  return (
    <section aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <p class="hint">
        Steps use them as <code>{'{{ secrets.NAME }}'}</code>. Only names are shown: values never leave the
        service.
      </p>
      {notice && <Success>{notice}</Success>}
      <ErrorNotice error={action.error} title="The action failed" />
      <ListStatus state={secrets} items={secrets.data} things="secrets" empty="No secrets yet." />
      {secrets.data && secrets.data.length > 0 && (
        <DataTable label="Secrets table" columns={['Name', 'Created', 'Updated']} actions={canWrite}>
          {secrets.data.map((secret) => (
            <tr key={secret.name} data-testid="secret-row">
              <td class="mono">{secret.name}</td>
              <td>{formatTime(secret.created_at)}</td>
              <td>{formatTime(secret.updated_at)}</td>
              {canWrite && (
                <td class="row-actions">
                  <RowButton
                    label="Replace"
                    item={secret.name}
                    onClick={() => setEditing({ name: secret.name, replacing: true })}
                  />
                  <RowButton label="Delete" item={secret.name} danger onClick={() => deleting.ask(secret)} />
                </td>
              )}
            </tr>
          ))}
        </DataTable>
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
      <ConfirmDialog {...deleting.dialog} title="Delete this secret?" confirmLabel="Delete secret" danger>
        <p>
          Steps that use <code>{`secrets.${deleting.asking?.name ?? ''}`}</code> fail until it is set again.
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
  const action = useAction();

  const save = async () => {
    await api.secrets.put(name.trim(), value);
    setValue('');
    await onSaved(name.trim(), replacing);
  };

  return (
    <FormPanel
      title={replacing ? `Replace ${initialName}` : 'Set a secret'}
      level={3}
      action={action}
      onSubmit={save}
      errorTitle="Could not save the secret"
      submitLabel={replacing ? 'Replace value' : 'Set secret'}
      busyLabel="Saving…"
      ready={name.trim() !== '' && value !== ''}
      buttons={
        replacing && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )
      }
    >
      <TextField
        id="secret-name"
        label="Name"
        type="text"
        required
        readOnly={replacing}
        spellcheck={false}
        autoComplete="off"
        placeholder="CRM_TOKEN"
        value={name}
        onValue={setName}
      />
      <TextField
        id="secret-value"
        label="Value"
        type="password"
        required
        autoComplete="new-password"
        value={value}
        onValue={setValue}
      />
      <p class="hint">Setting an existing name replaces its value.</p>
    </FormPanel>
  );
}
