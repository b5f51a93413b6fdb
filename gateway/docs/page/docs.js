/* global window, SwaggerUIBundle */
// Starts Swagger UI on the docs page (a served file, not inline: the page's CSP runs no inline script).
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  validatorUrl: null,
  tryItOutEnabled: false,
});
