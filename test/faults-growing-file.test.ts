/**
 * `open_reader` on a file that another process is appending to, as a log is: a writer
 * that flushes a buffer at any byte leaves the file ending inside a character about half
 * the time. Such a file is text being written, not a file that is not UTF-8.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { connectServer, tempDataDir } from "./support/helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
let server: Client;
before(async () => {
  ({ dir, cleanup } = await tempDataDir());
  server = await connectServer(join(dir, "data"));
});
after(async () => {
  await server.close();
  await cleanup();
});

test("a file being appended to in chunks that end inside characters opens every time", { timeout: 120_000 }, async (t) => {
  const path = join(dir, "growing.log");
  await writeFile(path, "");
  // A writer that appends 4,095-byte chunks of two-byte characters (as a 4 KiB write buffer
  // flushes them), then says so and waits for the next line on stdin.
  const writer = spawn(
    process.execPath,
    [
      "-e",
      `const fs = require("fs");
       const bytes = Buffer.from("é".repeat(4096 * 10));
       let offset = 0;
       const fd = fs.openSync(${JSON.stringify(path)}, "a");
       const next = () => { fs.writeSync(fd, bytes, offset, 4095); offset += 4095; process.stdout.write("wrote\\n"); };
       process.stdin.on("data", next);
       next();`,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const chunks: { resolve: () => void; reject: (error: Error) => void }[] = [];
  writer.stdout.on("data", () => chunks.splice(0).forEach((chunk) => chunk.resolve()));
  writer.on("exit", (code) => chunks.splice(0).forEach((chunk) => chunk.reject(new Error(`the writer exited ${code}`))));
  const written = () => new Promise<void>((resolve, reject) => chunks.push({ resolve, reject }));
  try {
    let refused = 0;
    const errors: string[] = [];
    let nextChunk = written();
    for (let chunk = 1; chunk <= 10; chunk++) {
      await nextChunk;
      const result = await server.callTool({ name: "open_reader", arguments: { path } });
      if (result.isError) {
        refused += 1;
        errors.push((result.content as { text: string }[])[0]!.text);
      }
      // Asks for the next chunk only while one is wanted: a wait left armed after the last
      // would be rejected when the writer is killed, after the test has ended.
      if (chunk === 10) break;
      nextChunk = written();
      writer.stdin.write("more\n");
    }
    t.diagnostic(`${refused} of 10 opens refused`);
    assert.deepEqual(errors, [], "no open refused");
  } finally {
    writer.kill();
  }
});
