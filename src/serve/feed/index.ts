// src/serve/feed: the change feed, GET /projects/{project_id}/changes as Server-Sent Events: which
// endpoints' bodies changed since a data version, from the store's change log.
// May import: the core (src/serve/request, bodies, http) and the stages below serve. Not mcp/ or docs/.
export { ChangeFeed, CHANGES_PATH, CHANGES_ENDPOINT } from './change-feed';
