import { useState } from 'preact/hooks';

/** Text to copy exactly (a command, a key), with a button that says when it is done. */
export function CopyBlock({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <div class="copy">
      <pre>
        <code>{text}</code>
      </pre>
      <button type="button" class="secondary" onClick={copy} aria-label={`Copy ${label}`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
      <span class="visually-hidden" aria-live="polite">
        {copied ? `${label} copied` : ''}
      </span>
    </div>
  );
}
