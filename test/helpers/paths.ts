// Where the repository is, for tests that read its files or run its code from the sources.
import path from 'node:path';

export const ROOT = path.join(__dirname, '..', '..');
