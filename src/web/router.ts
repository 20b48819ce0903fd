import { useEffect, useState } from 'preact/hooks';

/** Paths under /app, in the address bar; the server answers every one of them with the app. */

const listeners = new Set<() => void>();

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return path;
}

/** Follows an in-app link without reloading; modified clicks (new tab) keep the browser's way. */
export function followLink(event: MouseEvent): void {
  const anchor = (event.target as Element).closest('a');
  if (!anchor || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/app') || anchor.target) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}
