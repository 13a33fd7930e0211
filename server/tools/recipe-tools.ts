/**
 * The recipes, for the model and for any client : the `read_recipe` tool
 * (the list without a name, the text with one) and the same recipes as resources
 * `backchannel://recipes/<name>`.
 */
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { listRecipes, readRecipe } from "../recipes.js";
import { guarded, guardedRead, toolResult } from "./results.js";
import { compactSchema } from "./schemas.js";

const summarySchema = z.object({
  name: z.string(),
  title: z.string(),
  summary: z.string(),
  uri: z.string(),
});

/** The input of `read_recipe`. */
export const readRecipeInput = z.object({
  name: z.string().optional(),
});

/** The output of `read_recipe`: the list, or one recipe with its text. */
export const readRecipeOutput = z.object({
  recipes: z.array(summarySchema).optional(),
  recipe: summarySchema.extend({ text: z.string() }).optional(),
});

/** Options of {@link registerRecipeTools}. */
export interface RecipeToolOptions {
  /** The words of the watcher command that name the store (see `ReaderToolOptions.watcherWhere`). Default none. */
  watcherWhere?: readonly string[];
}

/**
 * Registers `read_recipe` and the `backchannel://recipes/{name}` resources on `server`,
 * from this installation's `recipes/`, their watcher commands written as `watch_command` will be.
 */
export function registerRecipeTools(server: McpServer, options: RecipeToolOptions = {}): void {
  server.registerTool(
    "read_recipe",
    {
      title: "Read a recipe",
      description: "Playbooks by name: being woken (watcher, Monitor, long-poll, /loop), hosts, custom apps. No name: the list.",
      inputSchema: compactSchema(readRecipeInput),
      outputSchema: compactSchema(readRecipeOutput),
    },
    guarded(async ({ name }) => {
      if (name === undefined) {
        const recipes = await listRecipes();
        const lines = recipes.map((recipe) => `- ${recipe.name}: ${recipe.title}`);
        return toolResult({ recipes }, [`${recipes.length} recipes; read one with read_recipe {"name": "<name>"}:`, ...lines].join("\n"));
      }
      const recipe = await readRecipe(name, options.watcherWhere);
      return toolResult({ recipe }, recipe.text);
    }),
  );

  server.registerResource(
    "recipe",
    new ResourceTemplate("backchannel://recipes/{name}", {
      list: async () => ({
        resources: (await listRecipes()).map((recipe) => ({
          uri: recipe.uri,
          name: recipe.name,
          title: recipe.title,
          description: recipe.summary,
          mimeType: "text/markdown",
        })),
      }),
    }),
    { title: "backchannel recipe", description: "A playbook for the agent.", mimeType: "text/markdown" },
    guardedRead(async (_uri, { name }) => {
      const recipe = await readRecipe(String(name), options.watcherWhere);
      return { contents: [{ uri: recipe.uri, mimeType: "text/markdown", text: recipe.text }] };
    }),
  );
}
