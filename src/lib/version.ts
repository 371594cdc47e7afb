import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from './root';

let cached: string | undefined;

/**
 * The service's version: package.json's, the one place it is written. The OpenAPI document's
 * info.version, MCP's serverInfo, /llms.txt and `visibility-api --version` all say it.
 */
export function serviceVersion(): string {
  cached ??= (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return cached;
}
