/**
 * Poll a condition until it holds or a deadline passes. For state that changes without an event to
 * await (another process, a socket); the deadline is generous, the poll interval short.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 5;
  const startMs = performance.now();
  for (;;) {
    if (await condition()) return performance.now() - startMs;
    if (performance.now() - startMs > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.message ?? 'condition'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
