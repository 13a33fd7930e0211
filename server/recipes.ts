/**
 * The recipes: markdown playbooks for the agent in `recipes/<name>.md`, served by
 * `read_recipe` and as `backchannel://recipes/<name>` resources. A recipe names this
 * installation's command with placeholders, filled in when it is read, so that every
 * command an agent copies from a recipe runs as written:
 *
 * - `{{backchannel}}`: the command as a shell would run it, e.g. `node /abs/dist/server/cli.js`;
 * - `{{backchannel.command}}` and `{{backchannel.args}}`: the same as a JSON string and a
 *   JSON array, for host configuration files (`"command": …, "args": …`);
 * - `{{backchannel.json}}`: the shell command escaped to sit inside a JSON string
 *   (a Windows path's backslashes, a quoted path's quotes);
 * - and `{{backchannel}} watch <channel_id>` becomes the watcher command exactly as
 *   `watch_command` will be, with the words that name the store (see `watchCommand`).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { backchannelCommand, shellWords, watchCommand } from "../core/commands.js";
import { RECIPES_DIR } from "../core/package.js";
import { CallerError } from "../core/errors.js";

export { RECIPES_DIR };

/** A recipe name: lower-case words joined by `-`. Nothing that could name a path. */
export const RECIPE_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** What a recipe is, without its text. */
export interface RecipeSummary {
  name: string;
  /** The recipe's `# heading`. */
  title: string;
  /** The recipe's first paragraph. */
  summary: string;
  /** The recipe as an MCP resource. */
  uri: string;
}

/** A recipe with its text, `{{backchannel}}` filled in. */
export interface Recipe extends RecipeSummary {
  text: string;
}

/** Thrown for a name that names no recipe; `names` lists those that exist. */
export class UnknownRecipeError extends CallerError {
  override readonly name = "UnknownRecipeError";
  override readonly code = "UNKNOWN_RECIPE";
  constructor(
    readonly recipe: string,
    readonly names: string[],
  ) {
    super(`no recipe named ${JSON.stringify(recipe)}; the recipes are: ${names.join(", ")}`);
  }
}

/** The resource URI of the recipe `name`. */
export function recipeUri(name: string): string {
  return `backchannel://recipes/${name}`;
}

/**
 * Every recipe, sorted by name.
 * @throws when {@link RECIPES_DIR} cannot be read (an installation without `recipes/`).
 */
export async function listRecipes(): Promise<RecipeSummary[]> {
  const recipes = await Promise.all((await recipeNames()).map((name) => readRecipe(name)));
  return recipes.map(({ text: _text, ...summary }) => summary);
}

/**
 * The recipe `name`, its placeholders filled with this installation's command and the
 * watcher's store words `where` (default none).
 * @throws UnknownRecipeError when there is no such recipe.
 */
export async function readRecipe(name: string, where: readonly string[] = []): Promise<Recipe> {
  const names = await recipeNames();
  // The name is checked against the folder's listing, never joined into a path unchecked.
  if (!RECIPE_NAME_PATTERN.test(name) || !names.includes(name)) throw new UnknownRecipeError(name, names);
  const text = fillPlaceholders(await readFile(join(RECIPES_DIR, `${name}.md`), "utf8"), backchannelCommand(), where);
  return { name, ...describeRecipe(text), uri: recipeUri(name), text };
}

/** `text` with the placeholders of `command` (a shell command line) and the watcher's store words `where` filled in. */
export function fillPlaceholders(text: string, command: string, where: readonly string[] = []): string {
  const [program = "", ...args] = shellWords(command);
  return text
    .replaceAll("{{backchannel}} watch <channel_id>", watchCommand("<channel_id>", { command, where }))
    .replaceAll("{{backchannel}}", command)
    .replaceAll("{{backchannel.json}}", JSON.stringify(command).slice(1, -1))
    .replaceAll("{{backchannel.command}}", JSON.stringify(program))
    .replaceAll("{{backchannel.args}}", JSON.stringify(args));
}

async function recipeNames(): Promise<string[]> {
  return (await readdir(RECIPES_DIR))
    .filter((file) => file.endsWith(".md"))
    .map((file) => file.slice(0, -".md".length))
    .filter((name) => RECIPE_NAME_PATTERN.test(name))
    .sort();
}

/** The title (first `# ` line) and summary (first paragraph after it) of a recipe's markdown. */
function describeRecipe(text: string): { title: string; summary: string } {
  const blocks = text.split(/\n\s*\n/).map((block) => block.trim());
  const heading = blocks.find((block) => block.startsWith("# ")) ?? "";
  const summary = blocks[blocks.indexOf(heading) + 1] ?? "";
  return { title: heading.slice(2).trim(), summary: summary.replace(/\s+/g, " ") };
}
