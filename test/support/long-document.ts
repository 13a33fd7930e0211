/**
 * A long markdown document made up on the spot, the same every time (a seeded
 * generator): headings four levels deep, paragraphs, lists, code blocks and tables,
 * like a long manual. The reader's long-document tests and benchmark open it.
 */

const WORDS = (
  "channel queue message agent reader passage question answer cursor sequence lock file store watcher turn host " +
  "poll event wake thread margin card document server process limit record state session window line block " +
  "the a of to and in that is for it with as on be by this are from at or an which one all when will there"
).split(" ");

/** A small deterministic generator (mulberry32). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What {@link longMarkdown} made. */
export interface LongDocument {
  markdown: string;
  /** A sentence that occurs once, in a paragraph about two thirds down: ask about it. */
  marker: string;
}

/**
 * A markdown document of about `bytes` bytes (UTF-8); default 1 MiB, in sections of
 * `paragraphs` paragraphs each (default 3; 11 make a 718 KB document of about 160
 * sections, the one measured in Inspector).
 */
export function longMarkdown(bytes = 1024 * 1024, paragraphs = 3): LongDocument {
  const random = generator(42);
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const sentence = () => {
    const length = 8 + Math.floor(random() * 14);
    const words = Array.from({ length }, word);
    return `${words[0]![0]!.toUpperCase()}${words.join(" ").slice(1)}.`;
  };
  const paragraph = () => Array.from({ length: 3 + Math.floor(random() * 4) }, sentence).join(" ");
  const marker = "This sentence is the marker the long-document test asks about.";
  const parts: string[] = ["# A long manual", ""];
  let size = 0;
  let section = 0;
  let markerPlaced = false;
  while (size < bytes) {
    section += 1;
    const level = section % 20 === 1 ? 2 : section % 5 === 1 ? 3 : 4;
    const part: string[] = [`${"#".repeat(level)} Section ${section}: ${word()} and ${word()}`, ""];
    for (let i = 0; i < paragraphs; i += 1) part.push(paragraph(), "");
    if (!markerPlaced && size > (bytes * 2) / 3) {
      part.push(`${paragraph()} ${marker} ${sentence()}`, "");
      markerPlaced = true;
    }
    if (section % 4 === 0) part.push(...Array.from({ length: 4 }, () => `- ${sentence()}`), "");
    if (section % 7 === 0) part.push("```", ...Array.from({ length: 5 }, () => `${word()}(${word()}, ${word()}); // ${sentence()}`), "```", "");
    if (section % 11 === 0)
      part.push(
        "| name | what | how many |",
        "|---|---|---|",
        ...Array.from({ length: 5 }, () => `| ${word()} | ${sentence()} | ${Math.floor(random() * 1000)} |`),
        "",
      );
    const text = part.join("\n");
    size += Buffer.byteLength(text) + 1;
    parts.push(text);
  }
  return { markdown: parts.join("\n"), marker };
}
