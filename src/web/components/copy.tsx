import { useState } from 'preact/hooks';

/** Text to copy exactly (a command, a key), with a button that says when it is done. */
export function CopyBlock({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      // No clipboard access (an old browser, a denied permission): the text stays selectable.
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <div class="copy">
      <pre>
        <code>{text}</code>
      </pre>
      {/* The visible word starts the accessible name ("Copy API key"), as speech input expects. */}
      <button type="button" class="secondary" onClick={copy}>
        {state === 'copied' ? 'Copied' : 'Copy'}
        <span class="visually-hidden"> {label}</span>
      </button>
      <span class="visually-hidden" aria-live="polite">
        {state === 'copied' ? `${label} copied` : ''}
      </span>
      {state === 'failed' ? (
        <span class="muted small" role="status">
          Could not reach the clipboard: select the text and copy it.
        </span>
      ) : null}
    </div>
  );
}
