/**
 * The agent's ambient lines under the title: `status` (one reader, through its queue,
 * replacing the previous one) and the session's wall (every reader of the session, from
 * each poll). Both are text only, and go at their `until`.
 */
import type { StatusData } from "../protocol/reader.js";
import type { ChannelWall } from "./channel.js";

/** Shows `status` events and the wall in their two elements. */
export class StatusLine {
  private statusTimer: ReturnType<typeof setTimeout> | undefined;
  private wallTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly status: HTMLElement,
    private readonly wall: HTMLElement,
  ) {}

  /** Shows a `status` event's text until its `until` (ISO-8601), when given. */
  showStatus(data: StatusData): void {
    clearTimeout(this.statusTimer);
    this.status.textContent = typeof data?.text === "string" ? data.text : "";
    const until = data?.until ? Date.parse(data.until) : Number.NaN;
    if (Number.isFinite(until)) this.statusTimer = setTimeout(() => (this.status.textContent = ""), Math.max(0, until - Date.now()));
  }

  /** Shows the session's wall until it expires (the server stops returning it then too). */
  showWall(wall: ChannelWall | null): void {
    clearTimeout(this.wallTimer);
    this.wall.textContent = wall?.text ?? "";
    if (!wall) return;
    const until = new Date(wall.until);
    this.wall.title = `Until ${until.toLocaleString()}`;
    // setTimeout takes at most 2^31-1 ms (about 24.8 days); a wall lasts at most 3 days.
    this.wallTimer = setTimeout(() => (this.wall.textContent = ""), Math.max(0, until.getTime() - Date.now()));
  }
}
