/** Copies a value to the clipboard and says so (or asks to copy by hand where the browser refuses). */
import { useState } from 'preact/hooks';

export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <>
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" class="hint">
        {state === 'copied'
          ? 'Copied.'
          : state === 'failed'
            ? 'The browser refused: select the text and copy it.'
            : ''}
      </span>
    </>
  );
}

/** A value shown once (a signing secret, an API key): copy it now, it is not shown again. */
export function ShownOnce({ title, value, onDone }: { title: string; value: string; onDone: () => void }) {
  return (
    <div class="notice notice-warning" role="region" aria-label={title} data-testid="shown-once">
      <p class="notice-title">{title}</p>
      <p>
        Copy it now and keep it somewhere safe: it is shown only this once, and the service cannot show it
        again.
      </p>
      <div class="secret-value">
        <code data-testid="secret-value">{value}</code>
        <CopyButton value={value} />
      </div>
      <div class="actions">
        <button type="button" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </div>
  );
}
