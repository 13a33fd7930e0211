/**
 * The rig of the Claude Code journeys in a browser tab: the real Claude Code with the
 * plugin (`--plugin-dir <checkout>/plugin`, nothing else configured) on a fresh data
 * directory, driven by a scripted model, and a Chromium for the person. The browser
 * host the plugin's server starts on demand is stopped with the rig.
 */
import { type Browser, chromium } from "playwright-core";
import { stopBrowserHost } from "../browser-host.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH, tempDataDir } from "../helpers.js";
import { type ModelServer, type Policy, startModelServer } from "./model-server.js";
import { PLUGIN_ROOT } from "./plugin-policy.js";
import { type ClaudeSession, startSession } from "./session.js";

/** A running rig. */
export interface BrowserTabRig {
  dataDir: string;
  model: ModelServer;
  session: ClaudeSession;
  browser: Browser;
  /** Stops everything it started: the browser, the session, the model, the browser host; removes the data directory. */
  close(): Promise<void>;
}

/**
 * Starts the rig with the scripted model's `policy`.
 * @throws what failed to start, after stopping what had started.
 */
export async function startBrowserTabRig(policy: Policy): Promise<BrowserTabRig> {
  const { dir: dataDir, cleanup } = await tempDataDir();
  let model: ModelServer | undefined;
  let session: ClaudeSession | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await session?.stop();
    await model?.close();
    stopBrowserHost({ BACKCHANNEL_HOME: dataDir });
    await cleanup();
  };
  try {
    model = await startModelServer(policy);
    session = await startSession({
      model,
      dataDir,
      configure: "none",
      args: ["--plugin-dir", PLUGIN_ROOT],
      // Nothing of backchannel's: the plugin allows its own tools.
      allowedTools: ["ToolSearch"],
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    return { dataDir, model, session, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}
