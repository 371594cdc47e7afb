// The V8 heap of every worker thread, for /metrics: the main thread's figures (nodejs_heap_*) leave
// out the build and ingest threads, whose heaps are a large part of the process's memory.
import v8 from 'node:v8';
import { BroadcastChannel, threadId } from 'node:worker_threads';

const CHANNEL = 'visibility-api:thread-heap';
/** How often a thread reports; a thread silent for 3 of these is gone (ended) and dropped. */
const EVERY_MS = 5000;

export interface ThreadHeap {
  /** The thread's file name and its thread id, e.g. `builders-3`. */
  thread: string;
  used: number;
  total: number;
  /** The most the heap may grow to: its resource limits (old and young generation) as V8 applies them. */
  limit: number;
}

/** In a worker thread: its heap figures now and every 5 s (never keeping the thread alive). */
export function reportHeap(name: string): void {
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  const post = (): void => {
    const h = v8.getHeapStatistics();
    channel.postMessage({ thread: `${name}-${threadId}`, used: h.used_heap_size, total: h.total_heap_size, limit: h.heap_size_limit } satisfies ThreadHeap);
  };
  post();
  setInterval(post, EVERY_MS).unref();
}

/** The newest figures of each live worker thread, as reported to this one. */
export class ThreadHeaps {
  private readonly channel = new BroadcastChannel(CHANNEL);
  private readonly latest = new Map<string, { heap: ThreadHeap; at: number }>();

  constructor() {
    this.channel.unref();
    this.channel.onmessage = (e: unknown): void => {
      const heap = (e as { data: ThreadHeap }).data;
      this.latest.set(heap.thread, { heap, at: performance.now() });
    };
  }

  list(): ThreadHeap[] {
    const now = performance.now();
    for (const [k, v] of this.latest) if (now - v.at > 3 * EVERY_MS) this.latest.delete(k);
    return [...this.latest.values()].map((v) => v.heap).sort((a, b) => (a.thread < b.thread ? -1 : 1));
  }

  close(): void {
    this.channel.close();
  }
}
