// What a configured cursor secret (serve --cursor-secret, CURSOR_SECRET) must be. Apart from
// cursor.ts so that the CLI checks its flags without loading the serving modules.

/** At least this many characters: `openssl rand -hex 32` gives 64. */
export const MIN_SECRET_CHARS = 32;

/** What is wrong with a configured secret, or null when it will do. Never shows the secret. */
export function cursorSecretProblem(secret: string): string | null {
  return secret.length < MIN_SECRET_CHARS ? `must be at least ${MIN_SECRET_CHARS} characters (e.g. openssl rand -hex 32), got ${secret.length}` : null;
}
