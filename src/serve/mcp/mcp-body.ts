// The body of a POST /mcp, read and checked before anything parses it: a hostile caller
// must not make the service hold megabytes per request, nor block the event loop with a body whose
// parse (or the recursion of whatever walks it next) costs seconds. The limits are far above what a
// real MCP exchange sends: the largest valid tools/call (an 8 KiB cursor, 64 engine ids, every other
// argument) is ~11 KB, and an `initialize` nests 4-5 levels.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpError, type HttpError } from '../request/errors';

/** Bytes a POST /mcp may send: room for a small batch of the largest calls. */
export const MCP_MAX_BODY_BYTES = 64 * 1024;
/** How deep objects and arrays may nest (a batch of tools/call with engine_ids: 5). */
export const MCP_MAX_DEPTH = 32;
/** Members of any one object or array (a batch is at most 100 messages; engine_ids at most 64). */
export const MCP_MAX_MEMBERS = 1000;

/**
 * What a refused body may still send, and for how long: read and thrown away after the 413, so that
 * a client that writes its whole body before reading (Python's http.client, requests: no `Expect:
 * 100-continue`) gets its 413 rather than a broken pipe. Past either, the connection is closed.
 */
export const MCP_DRAIN_BYTES = 16 * 1024 * 1024;
export const MCP_DRAIN_MS = 10_000;

/**
 * A body over the cap: the 413 to send (with Connection: close), then `closeGracefully` with the
 * response: the connection closes once the client has sent the rest (or at the bound or deadline).
 */
export interface TooLarge { error: HttpError; closeGracefully(res: ServerResponse): void }

/**
 * The body's bytes, or the 413 when it is (or says it will be) larger than `max`. Beyond the cap
 * nothing is kept: the rest is read and discarded, up to MCP_DRAIN_BYTES in all.
 */
export function readBody(req: IncomingMessage, max = MCP_MAX_BODY_BYTES): Promise<Buffer | TooLarge> {
  const error = httpError('payload_too_large', `Payload Too Large: a POST /mcp body must not exceed ${max} bytes`);
  const tooLarge: TooLarge = { error, closeGracefully: (res) => closeGracefully(req, res) };
  const declared = Number(req.headers['content-length']);
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
      resolve(tooLarge);
    };
    if (declared > max) {
      req.on('data', discard);
      resolve(tooLarge);
    } else req.on('data', keep);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

/**
 * After a 413 sent with Connection: close: node would close the socket as soon as the answer is
 * written (net.Socket#destroySoon), and the bytes the client is still sending would then meet a
 * reset, which a client still writing sees as a broken pipe, never reading the 413. Instead our side
 * is ended (FIN: the answer is whole) and the socket stays open to read: it is closed once the
 * request has been read to its end (readBody's reader drops the bytes), past MCP_DRAIN_BYTES, or at
 * MCP_DRAIN_MS, whichever comes first.
 */
function closeGracefully(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  if (req.complete) return; // nothing more is coming: node's own close is right
  const timer = setTimeout(() => socket.destroy(), MCP_DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  req.once('end', () => socket.destroySoon()); // after the answer's last bytes
  // After the server's own 'finish' listener, which asked for the close: the destroy it queued is taken back.
  res.once('finish', () => {
    socket.removeListener('finish', socket.destroy);
    if (req.complete) socket.destroySoon();
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
