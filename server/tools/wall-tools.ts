/**
 * `post_wall`: the agent's status for every open reader of its session and for the
 * human's status line (e.g. "Reading chapter 3, back in 10 minutes"). Unlike the
 * `status` event it is not queued: it lives in the session file until it expires or
 * is cleared, so a reader opened later still shows it.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { InvalidWallError, type Session } from "../awareness/session.js";
import { messageError, toolError, toolResult } from "./results.js";
import { compactSchema, wallInput, wallOutput } from "./schemas.js";

/** Registers `post_wall` on `server`, for the host session `session`. */
export function registerWallTools(server: McpServer, session: Session): void {
  server.registerTool(
    "post_wall",
    {
      title: "Post a status for the user",
      description:
        "Show one line of status in every open reader of this session and in the user's status line until it expires " +
        "(duration_s, default 1 h, max 3 days), or take it down with clear: true. Not queued: readers opened later see it too.",
      inputSchema: compactSchema(wallInput),
      outputSchema: compactSchema(wallOutput),
    },
    async ({ text, duration_s, clear }) => {
      try {
        if (clear) {
          if (text !== undefined) return messageError("pass either text or clear: true, not both");
          const wasUp = await session.clearWall();
          return toolResult({ wall: null }, wasUp ? "Took the wall down." : "No wall was up.");
        }
        if (text === undefined) return messageError("pass the status to show as text, or clear: true to take the wall down");
        const wall = await session.postWall(text, duration_s);
        return toolResult({ wall }, `The wall shows "${wall.text}" until ${wall.until}.`);
      } catch (error) {
        return error instanceof InvalidWallError ? messageError(error.message) : toolError(error);
      }
    },
  );
}
