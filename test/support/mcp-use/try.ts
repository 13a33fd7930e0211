/**
 * `npm run mcp-use`: the one-chat setting, to try by hand. Starts `backchannel serve
 * --http` on a data directory of its own, mcp-use's inspector (installed by `npm run
 * mcp-use:install`) pointed at it, and a stand-in model (the scripted Chat Completions
 * model of the tests) that opens README.md in the reader and answers each question asked
 * there with a line saying what it was asked. Prints the page's address and what to do;
 * Ctrl-C stops everything. A real provider and key can be chosen in the page instead.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startChatHost } from "./host.js";
import { mcpUseInspectorCli, mcpUseNode } from "./install.js";
import { MODEL_ID } from "./model-server.js";
import { readerChatPolicy } from "./reader-policy.js";

const USAGE = `Usage: npm run mcp-use

Starts the one-chat setting on this machine: mcp-use's inspector (a chat page that
renders MCP Apps) against "backchannel serve --http", and a stand-in model. Open the
address it prints, then follow the steps it prints. Ctrl-C stops everything and removes
the data directory it made.

Needs mcp-use's inspector and its Node 22: npm run mcp-use:install (once).
Options:
  --help   this text`;

const README = fileURLToPath(new URL("../../../../README.md", import.meta.url));

const { values } = parseArgs({ options: { help: { type: "boolean" } } });
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!existsSync(mcpUseNode()) || !existsSync(mcpUseInspectorCli())) {
  console.error("mcp-use's inspector is not installed: run npm run mcp-use:install first (about 190 MB, once).");
  process.exit(1);
}

const chat = readerChatPolicy({
  title: "README.md",
  markdown: readFileSync(README, "utf8"),
  answer: (ask) =>
    `(The stand-in model, not a real one.) You asked “${ask.question}” about “${ask.quote.slice(0, 80)}”. ` +
    "A real model answers here once you choose its provider in the chat.",
});
const host = await startChatHost(chat.policy);
console.log(`mcp-use's inspector: ${host.url}

1. Open that address, click Chat, then the model button in the message box.
2. Provider "OpenAI Compatible", Base URL ${host.model.url}/v1, any API key, model "${MODEL_ID}", Save.
   (Or a real provider and your key: the page calls it from your browser.)
3. Say: Open README.md in the backchannel reader and answer my questions.
4. Highlight a passage in the reader, click Ask, type a question: the answer appears in its card.

Channels are kept in ${host.dataDir} until you stop. Ctrl-C stops everything.`);

const stop = () => void host.stop().then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
