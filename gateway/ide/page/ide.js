/* global document, window, GraphiQL, React, ReactDOM */
// Starts GraphiQL on the IDE page (a served file, not inline: the page's CSP runs no inline script).
(function () {
  var config = JSON.parse(document.getElementById('ide-config').textContent);
  // The Authorization template is not sent until a token replaces its placeholder.
  var withoutTemplate = function (given) {
    var headers = Object.assign({}, given || {});
    Object.keys(headers).forEach(function (name) {
      if (name.toLowerCase() === 'authorization' && /^\s*(Bearer\s*)?(<[^>]*>)?\s*$/i.test(String(headers[name]))) delete headers[name];
    });
    return headers;
  };
  // GraphiQL 3.8 fills the variables editor on a first visit from its stored variables, not from
  // the first tab (which it opens): store the first tab's variables when nothing is stored yet.
  var stored = function (key) { try { return window.localStorage.getItem('graphiql:' + key); } catch { return null; } };
  if (config.tabs.length && stored('tabState') === null && stored('variables') === null) {
    try { window.localStorage.setItem('graphiql:variables', config.tabs[0].variables); } catch { /* no storage: nothing to seed */ }
  }
  // Subscriptions go over graphql-ws to the same path; GraphiQL passes the headers editor's content
  // (the token) as the connection_init payload, as queries send it as HTTP headers.
  var graphiqlFetcher = GraphiQL.createFetcher({
    url: window.location.pathname,
    subscriptionUrl: (window.location.protocol === 'https:' ? 'wss://' : 'ws://') + window.location.host + window.location.pathname,
  });
  var fetcher = function (params, options) {
    return graphiqlFetcher(params, Object.assign({}, options, { headers: withoutTemplate(options && options.headers) }));
  };
  ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultTabs: config.tabs,
    defaultHeaders: config.headers,
    defaultEditorToolsVisibility: 'headers',
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false,
  }));
})();
