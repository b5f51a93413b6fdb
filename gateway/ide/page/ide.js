/* global document, window, navigator, Worker */
// GraphiQL 5 on the IDE page, bundled by gateway/ide/bundle.ts (never a CDN). Reads #ide-config.
import { createElement as h, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { useGraphiQL, useGraphiQLActions, ToolbarButton } from '@graphiql/react';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { explorerPlugin } from '@graphiql/plugin-explorer';
import 'graphiql/style.css';
import '@graphiql/plugin-explorer/style.css';
import './ide.css';
import { readShareLink, shareLink } from './share-link.js';
import { createSession } from './session.js';
import { takeProviderAnswer } from './provider-sign-in.js';
import { signInPlugin, SIGN_IN_TITLE } from './sign-in.js';

const config = JSON.parse(document.getElementById('ide-config').textContent);

// Monaco's workers are files of this origin (the page's CSP allows scripts from 'self' only).
window.MonacoEnvironment = {
  getWorker(_id, label) {
    const name = label === 'json' || label === 'graphql' ? label : 'editor';
    return new Worker(`${config.assets}${name}.worker.js`);
  },
};

const session = createSession(config.tokenPath);

/** Back from a provider's sign-in page: its answer taken from the URL before anything reads it; the code exchanged. */
function finishProviderSignIn() {
  try {
    const answer = takeProviderAnswer(config.providers);
    if (!answer) return false;
    session.busy();
    answer.token().then(
      (signedIn) => session.adopt(signedIn, answer.provider.name),
      (error) => session.fail(error.message),
    );
  } catch (error) {
    session.fail(error.message);
  }
  return true;
}
const backFromProvider = finishProviderSignIn();

const hasAuthorization = (headers) => Object.keys(headers || {}).some((name) => name.toLowerCase() === 'authorization');

// Subscriptions go over graphql-ws to the same path: GraphiQL sends the headers as connection_init's payload.
const graphiqlFetcher = createGraphiQLFetcher({
  url: window.location.pathname,
  subscriptionUrl: `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}${window.location.pathname}`,
});

/** The signed-in token goes with every request whose headers name no Authorization of their own. */
function fetcher(params, options = {}) {
  const headers = { ...(options.headers || {}) };
  const token = session.token();
  if (token && !hasAuthorization(headers)) headers.Authorization = `Bearer ${token}`;
  return graphiqlFetcher(params, { ...options, headers });
}

/** Opens the operation of a share link (the URL's fragment) in a new tab, unrun, once the editors exist. */
function SharedOperation() {
  const queryEditor = useGraphiQL((s) => s.queryEditor);
  const variableEditor = useGraphiQL((s) => s.variableEditor);
  const { addTab } = useGraphiQLActions();
  useEffect(() => {
    const shared = readShareLink(window.location.hash);
    if (!shared || !queryEditor || !variableEditor) return;
    addTab();
    queryEditor.setValue(shared.query);
    variableEditor.setValue(shared.variables);
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }, [queryEditor, variableEditor, addTab]);
  return null;
}

/** Copies a link to the operation in the active tab: its text in the fragment, which no server sees. */
function CopyLink() {
  const queryEditor = useGraphiQL((s) => s.queryEditor);
  const variableEditor = useGraphiQL((s) => s.variableEditor);
  const operationName = useGraphiQL((s) => s.operationName);
  const [copied, setCopied] = useState(false);
  const copy = () => {
    const link = shareLink(window.location, { query: queryEditor?.getValue() ?? '', variables: variableEditor?.getValue() ?? '', operationName });
    void navigator.clipboard.writeText(link).then(() => {
      setCopied(true);
      window.setTimeout(() => setCopied(false), 2000);
    });
  };
  return h(ToolbarButton, { onClick: copy, label: copied ? 'Link copied' : 'Copy link to this operation' },
    h('svg', { viewBox: '0 0 24 24', className: 'graphiql-toolbar-icon', 'aria-hidden': true },
      h('path', { fill: 'currentColor', d: 'M10.6 13.4a1 1 0 0 1 0-1.4l3.5-3.5a3 3 0 1 1 4.2 4.2l-2 2-1.4-1.4 2-2a1 1 0 0 0-1.4-1.4L12 13.4a1 1 0 0 1-1.4 0zM13.4 10.6a1 1 0 0 1 0 1.4l-3.5 3.5a3 3 0 1 1-4.2-4.2l2-2 1.4 1.4-2 2a1 1 0 0 0 1.4 1.4l3.5-3.5a1 1 0 0 1 1.4 0z' })));
}

createRoot(document.getElementById('graphiql')).render(h(GraphiQL, {
  fetcher,
  plugins: [signInPlugin(session, config.providers), explorerPlugin()],
  // Back from a provider, the panel shows how the sign-in went.
  ...(backFromProvider ? { visiblePlugin: SIGN_IN_TITLE } : {}),
  defaultTabs: config.tabs,
  // A first visit shows the first tab with its example's variables (stored tabs win afterwards).
  initialVariables: config.tabs[0]?.variables,
  defaultHeaders: config.headers,
  defaultEditorToolsVisibility: 'variables',
  isHeadersEditorEnabled: true,
  shouldPersistHeaders: false,
},
h(GraphiQL.Toolbar, null, ({ prettify, copy, merge }) => [prettify, merge, copy, h(CopyLink, { key: 'link' })]),
h(SharedOperation)));
