import { useState } from 'preact/hooks';

export function MoreButton({ more }: { more: (() => Promise<void>) | undefined }) {
  const [busy, setBusy] = useState(false);
  if (!more) return null;
  return (
    <button
      type="button"
      class="secondary more"
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        await more();
        setBusy(false);
      }}
    >
      Load more
    </button>
  );
}
