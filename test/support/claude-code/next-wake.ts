/**
 * The wait both halves of the harness use while they look for a recorded event (a model
 * request, a line from claude): until the recorder wakes its waiters, or `ms` pass.
 */

/** Resolves when one of `waiters` is called (the caller adds a request or an event, then calls them all) or after `ms`. */
export function nextWake(waiters: Set<() => void>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      waiters.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    waiters.add(wake);
  });
}
