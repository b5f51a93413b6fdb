/* global window, URLSearchParams */
// Sign-in with an API client's id and secret (OAuth 2.0 client credentials at the token endpoint), as
// an operator or analyst types a password: the secret lives in this closure only (never in storage,
// the URL or the headers editor), and the token is renewed a minute before it expires.

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
    set({ signedIn: true, busy: false, clientId: credentials.clientId, renewsAt: clock(new Date(Date.now() + renewIn * 1000)) });
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
  };
}
