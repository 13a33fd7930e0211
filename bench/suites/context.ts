/**
 * Figure 7: what the model pays in context for the server — the model-visible part of
 * `tools/list` plus the `instructions` sent at initialize. A tool is model-visible
 * unless its `_meta.ui.visibility` is exactly ["app"].
 *
 * The whole tool object is counted, outputSchema included, as `tools/list` sends it;
 * hosts that pass the model only name, description and inputSchema pay less, which is
 * counted too ("lean"). Tokens are estimated as characters / 4.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import type { Design, DesignName } from "../designs.js";
import type { Figure, RunContext } from "../figures.js";
import { startServer } from "../procs/server.js";

/** Characters per token, the usual estimate for English and JSON. */
const CHARS_PER_TOKEN = 4;

interface Tool {
  name: string;
  description?: string;
  inputSchema: unknown;
  _meta?: { ui?: { visibility?: unknown } };
}

/** Measures each design's context cost. */
export async function contextFigures(designs: readonly Design[], ctx: RunContext): Promise<Figure[]> {
  const full = {} as Record<DesignName, number[]>;
  const lean = {} as Record<DesignName, number[]>;
  const tokens = {} as Record<DesignName, number[]>;
  const details: Record<string, number | string> = {};
  for (const design of designs) {
    ctx.log(`context: ${design.name}`);
    const server = await startServer(design, await mkdtemp(join(ctx.root, `${design.name}-context-`)));
    try {
      const { tools } = await server.client.listTools();
      const instructions = server.client.getInstructions() ?? "";
      const visible = (tools as Tool[]).filter((tool) => !isAppOnly(tool));
      const fullChars = JSON.stringify(visible).length + instructions.length;
      const leanChars =
        JSON.stringify(visible.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))).length + instructions.length;
      full[design.name] = [fullChars];
      lean[design.name] = [leanChars];
      tokens[design.name] = [Math.round(fullChars / CHARS_PER_TOKEN)];
      details[`${design.name}.instructions`] = instructions.length;
      details[`${design.name}.modelVisibleTools`] = visible.map((tool) => tool.name).join(" ");
      for (const tool of visible) details[`${design.name}.tool.${tool.name}`] = JSON.stringify(tool).length;
    } finally {
      await server.close();
    }
  }
  return [
    { key: "context.chars", name: "context: model-visible tools + instructions", unit: "chars", better: "lower", samples: full, details },
    { key: "context.tokens", name: "context: the same, estimated tokens", unit: "tokens", better: "lower", samples: tokens },
    { key: "context.leanChars", name: "context: name+description+inputSchema only", unit: "chars", better: "lower", samples: lean },
  ];
}

function isAppOnly(tool: Tool): boolean {
  const visibility = tool._meta?.ui?.visibility;
  return Array.isArray(visibility) && visibility.length === 1 && visibility[0] === "app";
}
