// The IDE's Sign in panel: a button per OpenID provider the gateway trusts with the IDE's client id
// (authorization code + PKCE, provider-sign-in.js), and an API client's id and secret for
// organisations without one.
import { createElement as h, useEffect, useState } from 'react';
import { startProviderSignIn } from './provider-sign-in.js';

const button = (props, text) => h('button', { type: 'button', className: 'graphiql-button', ...props }, text);

function SignedIn({ session, state }) {
  const lasts = state.renewsAt
    ? `the token is renewed before it expires (next at ${state.renewsAt})`
    : `until ${state.endsAt}, when you will be asked to sign in again`;
  return h('div', { className: 'ide-sign-in' },
    h('p', { role: 'status' }, `Signed in as ${state.as}; ${lasts}.`),
    button({ onClick: () => session.signOut() }, 'Sign out'));
}

function Providers({ session, providers }) {
  if (!providers.length) return null;
  const start = (provider) => {
    session.busy();
    startProviderSignIn(provider).catch((error) => session.fail(error.message));
  };
  return h('div', { className: 'ide-sign-in' },
    h('p', null, 'Sign in with your organisation\'s account to run fields that need a token.'),
    ...providers.map((p) => button({ key: p.id, onClick: () => start(p) }, `Sign in with ${p.name}`)),
    h('p', null, 'Or with an API client:'));
}

function ClientForm({ session, state }) {
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const submit = (event) => {
    event.preventDefault();
    // The secret stays in the session's memory only: the field is cleared at once.
    void session.signIn(clientId, secret);
    setSecret('');
  };
  return h('form', { className: 'ide-sign-in', onSubmit: submit, autoComplete: 'off' },
    h('p', null, 'Sign in with an API client to run fields that need a token. The secret is kept in this tab\'s memory only.'),
    h('label', null, 'Client id', h('input', { name: 'client_id', value: clientId, onChange: (e) => setClientId(e.target.value), required: true, autoComplete: 'off' })),
    h('label', null, 'Client secret', h('input', { name: 'client_secret', type: 'password', value: secret, onChange: (e) => setSecret(e.target.value), required: true, autoComplete: 'off' })),
    h('button', { type: 'submit', className: 'graphiql-button', disabled: state.busy }, state.busy ? 'Signing in…' : 'Sign in'));
}

const KeyIcon = () => h('svg', { viewBox: '0 0 24 24', width: 20, height: 20, 'aria-hidden': true },
  h('path', { fill: 'currentColor', d: 'M7 14a2 2 0 1 1 0-4 2 2 0 0 1 0 4zm5.6-4A6 6 0 1 0 12.6 14H16v3h3v-3h2v-4h-8.4z' }));

export const SIGN_IN_TITLE = 'Sign in';

/** The GraphiQL plugin of the panel, over `session` (session.js) and the page's providers. */
export function signInPlugin(session, providers) {
  function SignIn() {
    const [state, setState] = useState(session.state());
    useEffect(() => session.onChange(setState), []);
    if (state.signedIn) return h(SignedIn, { session, state });
    return h('div', null,
      h(Providers, { session, providers }),
      h(ClientForm, { session, state }),
      state.error ? h('p', { role: 'alert', className: 'ide-error' }, state.error) : null);
  }
  return { title: SIGN_IN_TITLE, icon: KeyIcon, content: SignIn };
}
