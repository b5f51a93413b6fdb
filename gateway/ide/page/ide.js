/* global document, window, GraphiQL, React, ReactDOM */
// Starts GraphiQL on the IDE page (a served file, not inline: the page's CSP runs no inline script).
(function () {
  var config = JSON.parse(document.getElementById('ide-config').textContent);
  // The Authorization template is not sent until a token replaces its placeholder.
  var fetchWithoutTemplate = function (input, init) {
    var headers = Object.assign({}, (init && init.headers) || {});
    Object.keys(headers).forEach(function (name) {
      if (name.toLowerCase() === 'authorization' && /^\s*(Bearer\s*)?(<[^>]*>)?\s*$/i.test(String(headers[name]))) delete headers[name];
    });
    return fetch(input, Object.assign({}, init, { headers: headers }));
  };
  // GraphiQL 3.8 fills the variables editor on a first visit from its stored variables, not from
  // the first tab (which it opens): store the first tab's variables when nothing is stored yet.
  var stored = function (key) { try { return window.localStorage.getItem('graphiql:' + key); } catch { return null; } };
  if (config.tabs.length && stored('tabState') === null && stored('variables') === null) {
    try { window.localStorage.setItem('graphiql:variables', config.tabs[0].variables); } catch { /* no storage: nothing to seed */ }
  }
  var fetcher = GraphiQL.createFetcher({ url: window.location.pathname, fetch: fetchWithoutTemplate });
  ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultTabs: config.tabs,
    defaultHeaders: config.headers,
    defaultEditorToolsVisibility: 'headers',
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false,
  }));
})();
