/* global window, URLSearchParams */
// The IDE's token, in this closure only. Either an API client's (OAuth 2.0 client credentials at the
// token endpoint, typed as an operator or analyst types a password: the secret lives here only, never
// in storage, the URL or the headers editor), renewed a minute before it expires; or a user's from an
// OpenID provider (provider-sign-in.js), kept until it expires, when the user is asked to sign in again.

/** Seconds before expiry at which the token is renewed. */
const RENEW_EARLY_S = 60;

const clock = (date) => date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

export function createSession(tokenPath) {
  let credentials = null;
  let token = null;
  let timer;
  let state = { signedIn: false, busy: false };
  const listeners = new Set();
  const set = (next) => {
    state = next;
    for (const listener of listeners) listener(state);
  };

  async function obtain() {
    const response = await fetch(tokenPath, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.secret }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok || typeof body.access_token !== 'string') {
      throw new Error(body.error_description || body.error || `The token endpoint answered ${response.status}`);
    }
    token = body.access_token;
    const renewIn = Math.max(5, Number(body.expires_in) - RENEW_EARLY_S);
    window.clearTimeout(timer);
    timer = window.setTimeout(renew, renewIn * 1000);
    set({ signedIn: true, busy: false, as: credentials.clientId, renewsAt: clock(new Date(Date.now() + renewIn * 1000)) });
  }

  function renew() {
    obtain().catch((error) => {
      signOut();
      set({ signedIn: false, busy: false, error: `Signed out: the token could not be renewed (${error.message})` });
    });
  }

  function signOut() {
    window.clearTimeout(timer);
    credentials = null;
    token = null;
    set({ signedIn: false, busy: false });
  }

  return {
    token: () => token,
    state: () => state,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async signIn(clientId, secret) {
      credentials = { clientId, secret };
      set({ signedIn: false, busy: true });
      try {
        await obtain();
      } catch (error) {
        credentials = null;
        set({ signedIn: false, busy: false, error: `Sign-in failed: ${error.message}` });
      }
    },
    signOut,
    /** A provider's token for `user`, until `expiresAt` (ms); then signed out with a request to sign in again. */
    adopt({ token: given, user, expiresAt }, provider) {
      signOut();
      token = given;
      timer = window.setTimeout(() => {
        signOut();
        set({ signedIn: false, busy: false, error: `Your sign-in with ${provider} has expired: sign in again.` });
      }, Math.max(0, expiresAt - Date.now()));
      set({ signedIn: true, busy: false, as: `${user} (${provider})`, endsAt: clock(new Date(expiresAt)) });
    },
    /** Shows a sign-in that failed before any token came (a provider's answer). */
    fail(message) {
      set({ signedIn: false, busy: false, error: `Sign-in failed: ${message}` });
    },
    busy() {
      set({ signedIn: false, busy: true });
    },
  };
}
