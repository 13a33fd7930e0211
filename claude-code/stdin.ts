/**
 * Reading what Claude Code pipes to a status line command or a hook: one JSON object,
 * after which it closes stdin.
 */

/**
 * All of stdin as text: `""` at once when stdin is a terminal (someone trying the
 * command by hand). Stops waiting after `timeoutMs` (default 1,000) and returns what
 * came so far: a caller that never closes stdin must not stall a status line.
 * Never rejects: a read error ends the text where it happened.
 */
export function readStdin(timeoutMs = 1000): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return Promise.resolve("");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.off("data", onData);
      // Let go of a stdin that is still open, so that it cannot keep the process alive.
      stdin.destroy();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const timer = setTimeout(finish, timeoutMs);
    stdin.on("data", onData);
    stdin.once("end", finish);
    stdin.once("error", finish);
  });
}
