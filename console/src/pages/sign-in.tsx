/**
 * Sign-in with an API key. The key is posted once to /console/session and dropped: the field is cleared,
 * nothing is written to storage, and the session lives in an HttpOnly cookie (docs/console.md).
 */
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../components/feedback';
import { signIn, type ConsoleSession } from '../session';
import { useAction } from '../use-action';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: ConsoleSession) => void }) {
  const [key, setKey] = useState('');
  const { busy, error, onSubmit } = useAction();

  const submit = onSubmit(async () => {
    const session = await signIn(key.trim());
    setKey('');
    onSignedIn(session);
  });

  return (
    <main id="main" class="signin">
      <h1>Switchyard console</h1>
      <form class="card" onSubmit={submit}>
        <h2>Sign in</h2>
        <p class="hint">
          Paste an API key of your workspace. The console exchanges it for a session cookie that scripts
          cannot read, and keeps the key nowhere.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api_key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          placeholder="sk_…"
          required
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        <ErrorNotice error={error} title="Sign-in failed" />
        <button type="submit" class="primary" disabled={busy || key.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
