/**
 * Unit tests of a saved app's record head (store/saved-app.ts): the summary is always
 * within the bytes a listing reads, whatever its title and note hold, and a head that is
 * not the summary then the HTML asks for the whole record.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { APP_DESCRIPTION_MAX_CHARS, TITLE_MAX_CHARS } from "../../core/limits.js";
import { SAVED_APP_SUMMARY_BYTES, type SavedApp, serializeSavedApp, summaryFromHead } from "../../store/saved-app.js";

test("a title and a note at their limits, every character escaped, fit the head a listing reads", () => {
  const app: SavedApp = {
    name: "n".repeat(64),
    title: "\u0001".repeat(TITLE_MAX_CHARS),
    description: "\u0002".repeat(APP_DESCRIPTION_MAX_CHARS),
    html: '"'.repeat(100_000),
    saved_at: new Date().toISOString(),
  };
  const head = Buffer.from(serializeSavedApp(app)).subarray(0, SAVED_APP_SUMMARY_BYTES).toString("utf8");
  assert.deepEqual(summaryFromHead(head, app.name), { name: app.name, title: app.title, description: app.description });
});

test("a head that is not the summary then the HTML, or names another app, asks for the whole record", () => {
  const { name, title, description, html, saved_at } = {
    name: "a",
    title: "T",
    description: "D",
    html: "<p>x</p>",
    saved_at: "2026-01-01T00:00:00Z",
  };
  assert.equal(summaryFromHead(JSON.stringify({ html, name, title, description, saved_at }), name), null);
  assert.equal(summaryFromHead(JSON.stringify({ name, title, html, description }), name), null);
  assert.equal(summaryFromHead(JSON.stringify({ name: "b", title, description, html }), name), null);
  assert.deepEqual(summaryFromHead(JSON.stringify({ name, title, description, html, saved_at }), name), { name, title, description });
});
