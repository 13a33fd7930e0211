/**
 * `post_wall`: the agent's status for every open reader of its session and for the
 * human's status line (e.g. "Reading chapter 3, back in 10 minutes"). Unlike the
 * `status` event it is not queued: it lives in the session file until it expires or
 * is cleared, so a reader opened later still shows it.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import type { Session } from "../awareness/session.js";
import { guarded, messageError, toolResult } from "./results.js";
import { compactSchema, wallInput, wallOutput } from "./schemas.js";
import { WALL_DEFAULT_SECONDS, WALL_MAX_CHARS, WALL_MAX_SECONDS } from "../../core/limits.js";

/** Registers `post_wall` on `server`, for the host session `session`. */
export function registerWallTools(server: McpServer, session: Session): void {
  server.registerTool(
    "post_wall",
    {
      title: "Post a status",
      description: `One line (text, ≤ ${WALL_MAX_CHARS} chars) for the user in every open app and the status line, for duration_s (default ${WALL_DEFAULT_SECONDS}, ≤ ${WALL_MAX_SECONDS}); clear ends it.`,
      inputSchema: compactSchema(wallInput),
      outputSchema: compactSchema(wallOutput),
    },
    guarded(async ({ text, duration_s, clear }) => {
      if (clear) {
        if (text !== undefined) return messageError("INVALID_ARGUMENTS", "pass either text or clear: true, not both");
        const wasUp = await session.clearWall();
        return toolResult({ until: null }, wasUp ? "Took the wall down." : "No wall was up.");
      }
      if (text === undefined) return messageError("INVALID_ARGUMENTS", "pass the status to show as text, or clear: true to take the wall down");
      const wall = await session.postWall(text, duration_s);
      return toolResult({ until: wall.until }, `The wall shows "${wall.text}" until ${wall.until}.`);
    }),
  );
}
