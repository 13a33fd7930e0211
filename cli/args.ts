/**
 * The one command-line parser of every `backchannel` command: Node's `parseArgs`, with
 * errors in the command's own words. A word the command cannot read is named, the
 * closest option is suggested when one is close (edit distance: `closest`),
 * and the command's `--help` is named; main.ts prints the message and exits 1.
 *
 * The words are checked from `parseArgs`' tokens before the strict parse, so that no
 * message depends on the text of Node's own errors (docs/ARCHITECTURE.md, "Errors").
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import leven, { closestMatch } from "leven";
import { CallerError } from "../core/errors.js";

/**
 * A command line its command cannot read. The message starts with the command
 * (`backchannel watch: …`) and ends by naming its `--help`; main.ts prints it as it is.
 */
export class UsageError extends CallerError {
  override readonly name = "UsageError";
  override readonly code = "INVALID_COMMAND_LINE";
}

/** A command's options, as `parseArgs` takes them. */
export type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** The command line a command reads: its options, and whether it takes words that are not options (default not). */
export type CommandLineConfig<O extends OptionsConfig = OptionsConfig> = { options: O; allowPositionals?: boolean };

/** What {@link parseCommandLine} returns for the options `O`: `parseArgs`' values and positionals. */
export type CommandLine<O extends OptionsConfig> = ReturnType<typeof parseArgs<StrictConfig<O>>>;

/** The strict `parseArgs` configuration for the options `O`. */
type StrictConfig<O extends OptionsConfig> = { args: string[]; options: O; allowPositionals: true; strict: true };

/**
 * Parses `args` for `command` (e.g. `backchannel watch`), strictly.
 * @returns what `parseArgs` returns for `config`.
 * @throws UsageError for an unknown option (with the closest known one when it is
 *   close), an option without its value or with a value it does not take, or a word
 *   that is not an option where the command takes none.
 */
export function parseCommandLine<O extends OptionsConfig>(command: string, args: string[], config: CommandLineConfig<O>): CommandLine<O> {
  const allowPositionals = config.allowPositionals ?? false;
  const { tokens } = parseArgs({ args, options: config.options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind === "positional") {
      if (!allowPositionals) throw usageError(command, `unexpected word ${JSON.stringify(token.value)}: it takes options only`);
      continue;
    }
    if (token.kind !== "option") continue;
    const option = Object.hasOwn(config.options, token.name) ? config.options[token.name] : undefined;
    if (option === undefined) throw usageError(command, unknownOption(args[token.index]!, token.rawName, config));
    if (option.type === "boolean" && token.value !== undefined) {
      throw usageError(command, `${token.rawName} takes no value (${JSON.stringify(token.value)} was given with it)`);
    }
    if (option.type === "string" && token.value === undefined) throw usageError(command, `${token.rawName} needs a value`);
    if (option.type === "string" && token.inlineValue === false && token.value?.startsWith("-")) {
      throw usageError(
        command,
        `${token.rawName} needs a value, but the next word is ${JSON.stringify(token.value)}; ` +
          `write ${token.rawName}=${token.value} if that is the value`,
      );
    }
  }
  // Positionals were refused above where the command takes none.
  return parseArgs<StrictConfig<O>>({
    args,
    options: config.options,
    allowPositionals: true,
    strict: true,
  });
}

/**
 * A {@link UsageError} of `command` (e.g. `backchannel serve`) saying `problem`, and
 * naming `<command> --help`. For the checks a command makes after parsing too (an
 * option that needs another).
 */
export function usageError(command: string, problem: string): UsageError {
  return new UsageError(`${command}: ${problem}; see ${command} --help`);
}

/**
 * What npm kept for itself of a command line when an npm script runs the command
 * (`npm start --home DIR`, without `--` before the options): npm keeps each option as
 * its own setting `npm_config_<name>` (dashes as underscores; `true` when it took the
 * option's value for a word of the script's), and passes the script nothing of it.
 * @param env the environment; outside an npm script (no `npm_lifecycle_event`), nothing.
 * @returns each option of `options` npm kept (`--home`), and each setting close to one
 *   (`--hom`, with `meant`: `--home`), in the order of `options`; other settings are npm's
 *   own or the person's.
 */
export function optionsNpmKept(options: OptionsConfig, env: NodeJS.ProcessEnv): { option: string; meant?: string }[] {
  if (env.npm_lifecycle_event === undefined) return [];
  const names = Object.keys(options);
  const kept = Object.keys(env).flatMap((key) => {
    const name = /^npm_config_(.+)$/.exec(key)?.[1]?.replaceAll("_", "-");
    if (name === undefined) return [];
    if (names.includes(name)) return [{ option: `--${name}`, order: names.indexOf(name) }];
    const near = closest(name, names);
    return near === undefined ? [] : [{ option: `--${name}`, meant: `--${near}`, order: names.indexOf(near) }];
  });
  // The environment's order is npm's: name them in the order the command's help lists them.
  return kept.sort((a, b) => a.order - b.order).map(({ order: _, ...named }) => named);
}

/**
 * Of `candidates`, the one closest to `word` when it is close: at most a third of its
 * characters (rounded up) differ, a swap of two counting twice, or it begins exactly one candidate.
 * @returns `undefined` when none is close.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const near = closestMatch(word, candidates, { maxDistance: maxDistanceOf(word) });
  if (near !== undefined && leven(word, near) <= maxDistanceOf(word)) return near;
  const prefixed = prefixedBy(word, candidates);
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/**
 * Every one of `candidates` close to `word` by the rule of {@link closest} (few
 * characters differ, or it begins with `word`), closest first.
 * @returns none when none is close.
 */
export function closeMatches(word: string, candidates: readonly string[]): string[] {
  const maxDistance = maxDistanceOf(word);
  const near = candidates
    .map((candidate) => ({ candidate, distance: leven(word, candidate) }))
    .filter(({ distance }) => distance <= maxDistance)
    .sort((a, b) => a.distance - b.distance)
    .map(({ candidate }) => candidate);
  return [...near, ...prefixedBy(word, candidates).filter((candidate) => !near.includes(candidate))];
}

/** How many characters of `word` may differ in a close candidate: a third of them, rounded up. */
function maxDistanceOf(word: string): number {
  return Math.ceil(word.length / 3);
}

/** The candidates that begin with `word` (a word cut short), when it is at least two characters long. */
function prefixedBy(word: string, candidates: readonly string[]): string[] {
  return word.length >= 2 ? candidates.filter((candidate) => candidate.startsWith(word)) : [];
}

/** What is said of an unknown option: `raw` is the word it came from (`-follow` holds `-f`), `rawName` the option. */
function unknownOption(raw: string, rawName: string, config: CommandLineConfig): string {
  const names = Object.keys(config.options);
  const shorts = Object.entries(config.options).flatMap(([name, option]) => (option.short === undefined ? [] : [[option.short, name]]));
  let suggestion: string | undefined;
  if (raw.startsWith("--")) {
    const near = closest(raw.slice(2).split("=")[0]!, names);
    suggestion = near === undefined ? undefined : `--${near}`;
  } else {
    // A single dash: a long option written with one (`-follow`), else a short one.
    const word = raw.slice(1).split("=")[0]!;
    const near = word.length > 1 ? closest(word, names) : undefined;
    suggestion = near === undefined ? undefined : `--${near}`;
  }
  const what = raw.startsWith("--") || raw.length <= 2 ? rawName : raw.split("=")[0]!;
  const shortList = shorts.length === 0 ? "" : ` (short: ${shorts.map(([short, name]) => `-${short} for --${name}`).join(", ")})`;
  if (suggestion !== undefined) return `unknown option ${what} (did you mean ${suggestion}?)`;
  return `unknown option ${what}${raw.startsWith("--") ? "" : shortList}`;
}
