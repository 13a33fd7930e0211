/**
 * Reading what Claude Code pipes to a status line command or a hook: one JSON object,
 * after which it closes stdin.
 */

/**
 * Most of stdin that is read: 8 MiB. The status line's input is a few kilobytes; a
 * hook's carries the tool's input and result, which backchannel's own limits keep far
 * below this (a reader document is at most 4 MiB).
 */
export const MAX_STDIN_BYTES = 8 * 1024 * 1024;

/**
 * All of stdin as text: `""` at once when stdin is a terminal (someone trying the
 * command by hand). Stops waiting after `timeoutMs` (default 1,000) and returns what
 * came so far: a caller that never closes stdin must not stall a status line.
 * Never rejects: a read error ends the text where it happened.
 * @returns the text, or `undefined` as soon as more than `maxBytes` (default
 *   {@link MAX_STDIN_BYTES}) came: a flood is neither kept in memory nor waited for.
 */
export function readStdin(timeoutMs = 1000, maxBytes = MAX_STDIN_BYTES): Promise<string | undefined> {
  const stdin = process.stdin;
  if (stdin.isTTY) return Promise.resolve("");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const finish = (tooLarge = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.off("data", onData);
      // Let go of a stdin that is still open, so that it cannot keep the process alive.
      stdin.destroy();
      resolve(tooLarge ? undefined : Buffer.concat(chunks).toString("utf8"));
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) return finish(true);
      chunks.push(chunk);
    };
    const timer = setTimeout(finish, timeoutMs);
    stdin.on("data", onData);
    stdin.once("end", () => finish());
    stdin.once("error", () => finish());
  });
}
