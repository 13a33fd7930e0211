/// <reference lib="dom" />
/**
 * What the reader and its host page write to the browser's console, in Chromium through the
 * playground: nothing for the messages they exchange (ext-apps' transport logs each one, a
 * whole document among them, unless the build drops it), while an error still shows: a
 * message from the host that is not JSON-RPC is reported.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ConsoleMessage } from "playwright-core";
import { browserSkipReason } from "./support/helpers.js";
import { readerRigForSuite } from "./support/reader-page.js";

const skip = browserSkipReason();

describe("the reader's console", { skip, timeout: 120_000 }, () => {
  const rig = readerRigForSuite();

  test("loading, asking and answering log no message of the transport; a broken message from the host is still an error", async () => {
    const reader = await rig.openPage({ query: "?agent=off" });
    // Every message of the page (the host, whose AppBridge logs through the same transport) and of the reader's frame.
    const all: ConsoleMessage[] = [];
    reader.page.on("console", (message) => all.push(message));
    // The reader replaces the frame's document with its own (web/page/frame.ts), which has no address of its own.
    const inReader = () => all.filter((entry) => entry.location().url !== reader.page.url());
    await reader.page.reload();
    await reader.frame();
    await reader.selectAndAsk("sequence number");
    await reader.submit("Does the console stay quiet?");
    const { message } = await reader.nextMessage("ask");
    await reader.answer(String(message.data.thread_id), "It does.", "It does.");
    const debug = all.filter((entry) => entry.type() === "debug").map((entry) => entry.text().slice(0, 80));
    assert.deepEqual(debug, [], "no debug line for the messages exchanged between the host and the reader, on either side");

    // The host (the playground page, the reader's parent) posts something that is not JSON-RPC.
    await reader.page.evaluate(() =>
      document.querySelector<HTMLIFrameElement>("#frame iframe")!.contentWindow!.postMessage({ jsonrpc: "2.0", method: 42 }, "*"),
    );
    const deadline = Date.now() + 10_000;
    while (!inReader().some((entry) => entry.type() === "error") && Date.now() < deadline) {
      await reader.page.waitForEvent("console", { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
    }
    const errors = inReader()
      .filter((entry) => entry.type() === "error")
      .map((entry) => entry.text());
    assert.ok(
      errors.some((text) => /Failed to parse message/.test(text)),
      `the error is reported: ${JSON.stringify(errors)}`,
    );
    await reader.page.close();
  });
});
