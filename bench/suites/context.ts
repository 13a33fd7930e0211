/**
 * Figure 7: what the model pays in context for the server — the model-visible part of
 * `tools/list` plus the `instructions` sent at initialize. A tool is model-visible
 * unless its `_meta.ui.visibility` is exactly ["app"].
 *
 * Hosts pass the model each tool's name, description and inputSchema: that is the
 * figure with the target (`context.leanChars`, ≤ 4,000), and the tokens are estimated
 * from it (characters / 4). The whole tool objects as `tools/list` sends them
 * (outputSchema, title and `_meta` too) are counted as well, for comparison.
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
      tokens[design.name] = [Math.round(leanChars / CHARS_PER_TOKEN)];
      details[`${design.name}.instructions`] = instructions.length;
      details[`${design.name}.modelVisibleTools`] = visible.map((tool) => tool.name).join(" ");
      for (const { name, description, inputSchema } of visible) {
        details[`${design.name}.tool.${name}`] = JSON.stringify({ name, description, inputSchema }).length;
      }
    } finally {
      await server.close();
    }
  }
  return [
    {
      key: "context.leanChars",
      name: "context: model-visible tools as hosts pass them (name, description, inputSchema) + instructions",
      unit: "chars",
      better: "lower",
      samples: lean,
      details,
    },
    { key: "context.tokens", name: "context: the same, estimated tokens", unit: "tokens", better: "lower", samples: tokens },
    {
      key: "context.chars",
      name: "context: whole tools/list objects (outputSchema too) + instructions",
      unit: "chars",
      better: "lower",
      samples: full,
    },
  ];
}

function isAppOnly(tool: Tool): boolean {
  const visibility = tool._meta?.ui?.visibility;
  return Array.isArray(visibility) && visibility.length === 1 && visibility[0] === "app";
}
