/**
 * Where the API lives. A module of its own: cursor.ts (which names the next page's URL) runs in the
 * build threads too, and must not load app.ts and Koa with it.
 */
export const BASE_PATH = '/v1/public';
