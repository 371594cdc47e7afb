import fs from 'node:fs';
import path from 'node:path';

let cached: string | undefined;

/** The folder holding package.json: the same from src/ (tsx) and from dist/src/ (compiled). */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + __dirname);
    dir = up;
  }
  cached = dir;
  return dir;
}
