import type { Context, Next } from 'koa';

/** An error the client should see: status, one clear message, optional headers (Allow, Retry-After). */
export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}) {
    super(message);
  }
}

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Invalid API key',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  429: 'Too many requests',
  501: 'Not implemented',
  503: 'Service unavailable',
};

export type ErrorLogger = (err: unknown, ctx: Context) => void;

function errorBody(message: string): string {
  return JSON.stringify({ error: true, message });
}

function send(ctx: Context, status: number, message: string, headers: Record<string, string> = {}): void {
  ctx.status = status;
  for (const [k, v] of Object.entries(headers)) ctx.set(k, v);
  ctx.type = 'application/json';
  ctx.body = errorBody(message);
}

/**
 * Every error leaves as {"error": true, "message": "..."}: thrown HttpErrors, statuses set by the
 * router without a body (404, 405 with Allow), and anything unexpected, which becomes a 500 that
 * shows no internals (the details go to the log, which never sees an API key).
 */
export function errorMiddleware(log: ErrorLogger) {
  return async function errors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null || ctx.body === '')) {
        send(ctx, ctx.status, DEFAULT_MESSAGES[ctx.status] ?? 'Error');
      }
    } catch (err) {
      if (err instanceof HttpError) {
        send(ctx, err.status, err.message, err.headers);
        return;
      }
      log(err, ctx);
      send(ctx, 500, 'Internal server error');
    }
  };
}
