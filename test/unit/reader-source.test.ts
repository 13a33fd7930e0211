/**
 * Unit tests of the reader's text steps on the caller's document: the word count and
 * the title. Both once used regular expressions that took minutes on a megabyte of
 * punctuation or a long spaced heading; the process-level proof is in
 * test/hostile-input.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { chooseTitle, countWords } from "../../server/reader/source.js";
import { ownCpuMs } from "../support/cpu-time.js";

/** The documents that were slow, 1 MiB each. */
const MIB = 1024 * 1024;
const ADVERSARIAL: readonly string[] = [
  "-".repeat(MIB),
  "—".repeat(MIB),
  `# a${" ".repeat(MIB)}b\n`,
  `# a${" #".repeat(MIB / 2)}x\n`,
  `${">".repeat(MIB)} deep\n`,
  `# ${"a ".repeat(MIB / 2)}\n`,
  `######${" ".repeat(MIB)}\n`,
  "# \n".repeat(MIB / 3),
  "# \x01\n".repeat(MIB / 4),
];

describe("countWords", () => {
  test("counts runs of non-space characters that hold a letter or digit, in any script", () => {
    assert.equal(countWords("# Marmots\n\n> The marmots -- convene at 5am."), 6);
    assert.equal(countWords("- * > # --- ..."), 0);
    assert.equal(countWords("naïve café 東京 ٣٤ 𝐀𝐁 — —x"), 6);
    assert.equal(countWords("a\u00a0b\u2028c\u3000d"), 4);
  });

  test("agrees with the regular expression it replaced, on 2,000 random texts", () => {
    const alphabet = ["a", "Z", "7", "-", "#", " ", "\t", "\n", "é", "—", "٣", "𝐀", "\u00a0", "\u2028", "\ufeff", "🙂"];
    for (let run = 0; run < 2000; run++) {
      const text = Array.from({ length: Math.floor(Math.random() * 30) }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join("");
      assert.equal(countWords(text), text.match(/\S*[\p{L}\p{N}]\S*/gu)?.length ?? 0, JSON.stringify(text));
    }
  });
});

describe("chooseTitle", () => {
  const markdown = (text: string) => ({ format: "markdown" as const, text });
  test("takes the given title, else the first heading with text, else the file name, else Document", () => {
    assert.equal(chooseTitle(markdown("# Heading"), "  Given  "), "Given");
    assert.equal(chooseTitle(markdown("text\n## Second level ##  \n# Later"), undefined), "Second level");
    assert.equal(chooseTitle(markdown("#\n# ###\n#nospace\n####### seven\n\t# indented\n### Third"), undefined), "Third");
    assert.equal(chooseTitle({ format: "markdown", text: "# \x1b[8m\n# Later", suggestedTitle: "notes.md" }, undefined), "notes.md");
    assert.equal(chooseTitle(markdown("no heading"), undefined), "Document");
    assert.equal(chooseTitle({ format: "text", text: "# not markdown", suggestedTitle: "notes.txt" }, undefined), "notes.txt");
    assert.equal(chooseTitle(markdown("# \x1b]52;c;eA==\x07Clean\x1b[8m title"), undefined), "Clean title");
    assert.equal(chooseTitle(markdown("# a\r\nb"), undefined), "a");
  });

  test("cuts a long heading to 200 characters, the last an ellipsis", () => {
    const title = chooseTitle(markdown(`# ${"word ".repeat(100)}`), undefined);
    assert.equal(title.length, 200);
    assert.ok(title.endsWith("…"));
  });
});

test("both are linear: each adversarial 1 MiB document in well under a second of CPU", (t) => {
  countWords("warm up");
  chooseTitle({ format: "markdown", text: "# warm up" }, undefined);
  for (const text of ADVERSARIAL) {
    const before = ownCpuMs();
    countWords(text);
    chooseTitle({ format: "markdown", text }, undefined);
    const ms = ownCpuMs() - before;
    t.diagnostic(`${JSON.stringify(text.slice(0, 5))}…: ${Math.round(ms)} ms of CPU`);
    // Linear is 50–300 ms here; the quadratic code this replaced took minutes on 1 MiB.
    assert.ok(ms < 1000, `${JSON.stringify(text.slice(0, 5))}…: ${Math.round(ms)} ms of CPU`);
  }
});
