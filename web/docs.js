/* global window */
// Settings of the API reference (Scalar). Everything the page needs comes from this service: the
// document next door (openapi.json, relative to /v1/public/docs), no web fonts, no telemetry, no
// AI agent, no MCP panel, no developer toolbar, and "Try it" requests go straight to this origin.
window.Scalar.createApiReference('#app', {
  url: 'openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  hideDarkModeToggle: false,
  persistAuth: false,
  documentDownloadType: 'json',
});
