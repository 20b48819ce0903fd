import './app.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { AccountPage } from './pages/account.js';
import { ListingPage } from './pages/listing.js';
import { ListingsPage, NewListingPage } from './pages/listings.js';
import { RegisterPage } from './pages/register.js';
import { SalesPage } from './pages/sales.js';
import { SignInPage } from './pages/sign-in.js';
import { followLink, navigate, usePath } from './router.js';
import { endSession, onSessionChange, type Session, session } from './session.js';

/**
 * The creator web app. Every page calls the service's public JSON routes with the signed-in key,
 * as any API client would; nothing here reaches the server any other way.
 */

interface Route {
  title: string;
  page: () => preact.JSX.Element;
  signedIn: boolean;
}

function route(path: string): Route {
  const listing = /^\/app\/listings\/([0-9a-f-]{36})$/.exec(path);
  if (listing) return { title: 'Listing', page: () => <ListingPage id={listing[1]!} />, signedIn: true };
  switch (path.replace(/\/$/, '')) {
    case '/app/signin':
      return { title: 'Sign in', page: () => <SignInPage />, signedIn: false };
    case '/app/register':
      return { title: 'Register', page: () => <RegisterPage />, signedIn: false };
    case '/app/listings/new':
      return { title: 'New listing', page: () => <NewListingPage />, signedIn: true };
    case '/app/sales':
      return { title: 'Sales', page: () => <SalesPage />, signedIn: true };
    case '/app/account':
      return { title: 'Account', page: () => <AccountPage />, signedIn: true };
    case '/app':
    case '/app/listings':
      return { title: 'Listings', page: () => <ListingsPage />, signedIn: true };
    default:
      return { title: 'Not found', page: () => <NotFound />, signedIn: false };
  }
}

function useSession(): Session | undefined {
  const [current, setCurrent] = useState(session());
  useEffect(() => onSessionChange(() => setCurrent(session())), []);
  return current;
}

function App() {
  const path = usePath();
  const current = useSession();
  const main = useRef<HTMLElement>(null);
  const target = route(path);
  const blocked = target.signedIn && !current;

  useEffect(() => {
    if (blocked) navigate('/app/signin', { replace: true });
  }, [blocked]);
  useEffect(() => {
    document.title = `${target.title} · repo402`;
    // A new page: its heading takes focus, so keyboard and screen-reader users start there.
    const heading = main.current?.querySelector('h1');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus({ preventScroll: true });
    }
  }, [path, target.title]);

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: delegates clicks on in-app links.
    // biome-ignore lint/a11y/useKeyWithClickEvents: links keep their own keyboard behaviour.
    <div onClick={followLink}>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="site-header">
        <div class="wrap">
          <a class="brand" href={current ? '/app/listings' : '/app/signin'}>
            repo<span>402</span>
          </a>
          <nav aria-label="Creator">
            {current ? (
              <>
                <NavLink href="/app/listings" path={path}>
                  Listings
                </NavLink>
                <NavLink href="/app/sales" path={path}>
                  Sales
                </NavLink>
                <NavLink href="/app/account" path={path}>
                  Account
                </NavLink>
                <SignOut current={current} />
              </>
            ) : (
              <>
                <NavLink href="/app/signin" path={path}>
                  Sign in
                </NavLink>
                <NavLink href="/app/register" path={path}>
                  Register
                </NavLink>
              </>
            )}
            <a href="/docs/selling">Guide</a>
          </nav>
        </div>
      </header>
      <main class="wrap" id="content" ref={main}>
        {blocked ? null : target.page()}
      </main>
    </div>
  );
}

function NavLink({ href, path, children }: { href: string; path: string; children: string }) {
  const active = path === href || path.startsWith(`${href}/`);
  return (
    <a href={href} aria-current={active ? 'page' : undefined}>
      {children}
    </a>
  );
}

function SignOut({ current }: { current: Session }) {
  const signOut = async () => {
    // A web session is revoked on the server; a pasted agent key is only forgotten here (it is
    // the creator's automation key, and revoking it is what rotation is for).
    if (current.kind === 'session') {
      try {
        await api('DELETE', '/auth/sessions/current');
      } catch {
        // Already expired or revoked: forgetting it is all that is left to do.
      }
    }
    endSession('You signed out.');
    navigate('/app/signin', { replace: true });
  };
  return (
    <button type="button" class="link" onClick={signOut}>
      Sign out{current.handle ? ` ${current.handle}` : ''}
    </button>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no such page. <a href="/app/listings">Your listings</a>
      </p>
    </section>
  );
}

render(<App />, document.getElementById('app')!);
