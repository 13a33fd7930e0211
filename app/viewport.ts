/**
 * The reader's frame in the host: the host's look (theme, style variables, fonts) and
 * a bounded height. The host sizes the iframe to what the reader reports (autoResize),
 * so a long document would ask for its whole height (hundreds of thousands of pixels,
 * every one of them composited on each change). Instead the document scrolls inside
 * the reader, whose height fits the host's container (`containerDimensions`), or
 * {@link DEFAULT_MAX_HEIGHT} when the host gives none; a host that offers fullscreen
 * gets a button for it (`requestDisplayMode`).
 */
import { applyDocumentTheme, applyHostFonts, applyHostStyleVariables, type App, type McpUiHostContext } from "@modelcontextprotocol/ext-apps";

/** The reader's height when the host says nothing of its container. */
export const DEFAULT_MAX_HEIGHT = 720;
/** The reader never makes itself shorter than this, whatever the host says. */
const MIN_HEIGHT = 320;

/** Applies the host's context and keeps the fullscreen button in step with it. */
export class Viewport {
  private context: McpUiHostContext = {};

  constructor(
    private readonly app: App,
    private readonly fullscreenButton: HTMLButtonElement,
  ) {
    fullscreenButton.addEventListener("click", () => void this.toggleFullscreen());
  }

  /** Applies `context` (a whole context or a change of it) over what was applied before. */
  apply(context: McpUiHostContext): void {
    this.context = { ...this.context, ...context };
    if (context.theme) applyDocumentTheme(context.theme);
    if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
    if (context.styles?.css?.fonts) applyHostFonts(context.styles.css.fonts);
    const fullscreen = this.context.displayMode === "fullscreen";
    const root = document.documentElement;
    root.classList.toggle("fullscreen", fullscreen);
    root.style.setProperty("--reader-height", `${this.height(fullscreen)}px`);
    const canFullscreen = this.context.availableDisplayModes?.includes("fullscreen") ?? false;
    this.fullscreenButton.hidden = !canFullscreen;
    this.fullscreenButton.textContent = fullscreen ? "Exit full screen" : "Full screen";
    this.fullscreenButton.setAttribute("aria-pressed", String(fullscreen));
  }

  /** The reader's whole height: the container's (fixed or largest), else the default. */
  private height(fullscreen: boolean): number {
    const box = this.context.containerDimensions as { height?: number; maxHeight?: number } | undefined;
    const given = box?.height ?? box?.maxHeight;
    if (given !== undefined && Number.isFinite(given)) return Math.max(MIN_HEIGHT, Math.floor(given));
    return fullscreen ? Math.max(MIN_HEIGHT, window.innerHeight) : DEFAULT_MAX_HEIGHT;
  }

  private async toggleFullscreen(): Promise<void> {
    const mode = this.context.displayMode === "fullscreen" ? "inline" : "fullscreen";
    try {
      const result = await this.app.requestDisplayMode({ mode });
      this.apply({ displayMode: result.mode });
    } catch (error) {
      console.warn("backchannel reader: the host did not change the display mode:", error);
    }
  }
}
