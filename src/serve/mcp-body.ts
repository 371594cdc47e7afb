// The body of a POST /mcp, read and checked before anything parses it (issue 38): a hostile caller
// must not make the service hold megabytes per request, nor block the event loop with a body whose
// parse (or the recursion of whatever walks it next) costs seconds. The limits are far above what a
// real MCP exchange sends: the largest valid tools/call (an 8 KiB cursor, 64 engine ids, every other
// argument) is ~11 KB, and an `initialize` nests 4-5 levels.
import type { IncomingMessage } from 'node:http';
import { httpError, type HttpError } from './errors';

/** Bytes a POST /mcp may send: room for a small batch of the largest calls. */
export const MCP_MAX_BODY_BYTES = 64 * 1024;
/** How deep objects and arrays may nest (a batch of tools/call with engine_ids: 5). */
export const MCP_MAX_DEPTH = 32;
/** Members of any one object or array (a batch is at most 100 messages; engine_ids at most 64). */
export const MCP_MAX_MEMBERS = 1000;

/**
 * What a refused body may still send: read and thrown away, so that a client that writes its whole
 * body before reading (most do) gets its 413 rather than a reset connection. The SDK's own cap.
 */
export const MCP_DRAIN_BYTES = 4 * 1024 * 1024;

/** A body over the cap: the 413, and whether to close the connection rather than read the rest. */
export interface TooLarge { error: HttpError; close: boolean }

/**
 * The body's bytes, or the 413 when it is (or says it will be) larger than `max`. Beyond the cap
 * nothing is kept: the rest is read and discarded up to MCP_DRAIN_BYTES in all (the connection then
 * stays usable), and a body declared larger than that is not read at all (answer, then close).
 */
export function readBody(req: IncomingMessage, max = MCP_MAX_BODY_BYTES): Promise<Buffer | TooLarge> {
  const error = httpError('payload_too_large', `Payload Too Large: a POST /mcp body must not exceed ${max} bytes`);
  const declared = Number(req.headers['content-length']);
  if (declared > MCP_DRAIN_BYTES) return Promise.resolve({ error, close: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const discard = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MCP_DRAIN_BYTES) req.socket.destroy();
    };
    const keep = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      chunks.length = 0;
      req.off('data', keep).on('data', discard);
      resolve({ error, close: false });
    };
    if (declared > max) {
      req.on('data', discard);
      resolve({ error, close: false });
    } else req.on('data', keep);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

/**
 * Depth and members of the JSON text, counted in one pass over its bytes (no parse, no recursion):
 * null when within the limits, else the 400 saying which. Not a validator: text that is not JSON
 * passes here and fails JSON.parse next. Members are counted by their commas at each level.
 */
export function checkShape(bytes: Buffer, maxDepth = MCP_MAX_DEPTH, maxMembers = MCP_MAX_MEMBERS): HttpError | null {
  const commas = new Int32Array(maxDepth + 2);
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 0x22) { // a string: skip to its closing quote, over escapes
      for (i++; i < bytes.length && bytes[i] !== 0x22; i++) if (bytes[i] === 0x5c) i++;
    } else if (c === 0x7b || c === 0x5b) { // { [
      if (++depth > maxDepth) return httpError('invalid_mcp_request', `The body nests objects and arrays deeper than ${maxDepth} levels`);
      commas[depth] = 0;
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth > 0) depth--;
    } else if (c === 0x2c && depth > 0 && ++commas[depth]! >= maxMembers) { // ,
      return httpError('invalid_mcp_request', `An object or array in the body has more than ${maxMembers} members`);
    }
  }
  return null;
}

/** The body as JSON within the limits, or the 400 in the API's format. */
export function parseBody(bytes: Buffer): unknown {
  const shape = checkShape(bytes);
  if (shape) throw shape;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw httpError('invalid_mcp_request', 'The body is not JSON');
  }
}
