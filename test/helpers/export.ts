// An export directory's Parquet files, for tests that compare two exports byte for byte.
import fs from 'node:fs';
import path from 'node:path';

/** Every .parquet file under `dir`, by its path relative to it, with its bytes. */
export function parquetFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (at: string): void => {
    for (const e of fs.readdirSync(at, { withFileTypes: true })) {
      const p = path.join(at, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.parquet')) files.set(path.relative(dir, p), fs.readFileSync(p));
    }
  };
  walk(dir);
  return files;
}
