/**
 * The frame an app runs in, in the browser host's page. The page loads it from the host
 * (its own content security policy then applies, the one hosts give apps: the page's
 * stricter one would stop an app's inline scripts), in a sandbox that gives it an opaque
 * origin, and posts it the app's HTML, which replaces it: the window stays the one the
 * page's AppBridge talks to.
 */

/** What the page posts: the app's HTML. */
interface AppDocument {
  type: "backchannel-app";
  html: string;
}

function isAppDocument(data: unknown): data is AppDocument {
  return (
    typeof data === "object" && data !== null && (data as AppDocument).type === "backchannel-app" && typeof (data as AppDocument).html === "string"
  );
}

addEventListener("message", function load(event: MessageEvent) {
  if (event.source !== parent || !isAppDocument(event.data)) return;
  removeEventListener("message", load);
  document.open();
  document.write(event.data.html);
  document.close();
});
// The page connects its bridge once the frame is ready for the app's first message.
parent.postMessage({ type: "backchannel-frame-ready" }, "*");
