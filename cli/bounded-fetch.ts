/**
 * A `fetch` whose answers are cut at a size: what the remote watcher hands the MCP
 * client, which would otherwise hold a server's endless or huge answer whole (one
 * server-sent event is buffered until it ends). The server is not trusted.
 */

/** An answer went past the size limit; the request was ended. */
export class AnswerTooLargeError extends Error {
  override readonly name = "AnswerTooLargeError";
  constructor(readonly maxBytes: number) {
    super(
      `the server's answer is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB, more than any backchannel answer can be; is --url a backchannel server?`,
    );
  }
}

/**
 * `inner` with every answer's body cut at `maxBytes`: past it, reading the body fails
 * with {@link AnswerTooLargeError}, the connection is ended (the body is cancelled), and
 * `onCut` is called with the error (a client may swallow a failed stream and wait on).
 */
export function boundedFetch(maxBytes: number, onCut: (error: AnswerTooLargeError) => void, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.body === null) return response;
    let seen = 0;
    const cut = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen <= maxBytes) return controller.enqueue(chunk);
        const error = new AnswerTooLargeError(maxBytes);
        controller.error(error);
        onCut(error);
      },
    });
    return new Response(response.body.pipeThrough(cut), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
