/**
 * The `backchannel` command: help, version, errors, and a stdio server whose stdout
 * carries protocol only.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, chown, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CLI, tempDataDir } from "./support/helpers.js";
import { otherUserSkipReason } from "./support/other-user.js";

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 10_000 });
}

test("--version prints the package version", () => {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  const result = run(["--version"]);
  assert.equal(result.status, 0);
  assert.equal(result.stdout, `${version}\n`);
});

for (const args of [["--help"], ["serve", "--help"], ["watch", "--help"]]) {
  test(`${args.join(" ")} prints usage and exits 0`, () => {
    const result = run(args);
    assert.equal(result.status, 0);
    assert.match(result.stdout, /Usage/);
  });
}

/** The commands `backchannel --help` lists: the first word after `backchannel` of each of its usage lines. */
function listedCommands(): string[] {
  const words = [...run(["--help"]).stdout.matchAll(/^ {2}backchannel (\[?[a-z]+)/gm)].map((match) => match[1]!.replace("[", ""));
  return [...new Set(words)];
}

test("every command's --help names the command as it runs: backchannel, this installation, or npx -y backchannel-mcp once published", () => {
  const commands = listedCommands();
  assert.deepEqual(commands, ["serve", "watch", "web", "statusline", "install", "uninstall", "hook", "token"]);
  for (const command of ["", ...commands]) {
    const { status, stdout } = run(command === "" ? ["--help"] : [command, "--help"]);
    assert.equal(status, 0, command);
    for (const line of stdout.split("\n").filter((text) => /^(Usage:|\s+)backchannel /.test(text))) {
      assert.match(line, /^(Usage: | {7}| {2})backchannel /, `${command}: ${line}`);
    }
    // "npx backchannel" is another package: named only to say so, never as the command.
    for (const match of stdout.matchAll(/npx[^\n"]*/g))
      assert.match(match[0], /^npx -y backchannel-mcp\b|^npx backchannel$/, `${command}: ${match[0]}`);
    assert.doesNotMatch(stdout, /npx -y backchannel-mcp" \(the published package/, `${command}: the package is not published yet`);
    if (/npx -y backchannel-mcp/.test(stdout)) {
      assert.ok(stdout.includes(`node ${CLI}`), `${command}: names this installation's command beside the published one`);
      assert.match(stdout, /once the\s+package is published|once\s+the package is published/, command);
    }
  }
});

test("an unknown command or option exits 1 with a message on stderr", () => {
  const unknown = run(["frobnicate"]);
  assert.equal(unknown.status, 1);
  assert.equal(unknown.stderr, 'backchannel: unknown command "frobnicate"; see backchannel --help\n');
  const near = run(["wtach", "ch-x"]);
  assert.equal(near.status, 1);
  assert.equal(near.stderr, 'backchannel: unknown command "wtach" (did you mean watch?); see backchannel --help\n');
  const noId = run(["watch"]);
  assert.equal(noId.status, 1);
  assert.match(noId.stderr, /give exactly one channel id/);
});

test("a parse error names the option in the command's words, suggests the closest one only when close, and names the command's --help", () => {
  const cases: [string[], string][] = [
    [["watch", "ch-x", "--folow"], "backchannel watch: unknown option --folow (did you mean --follow?); see backchannel watch --help"],
    [["watch", "ch-x", "--bogus"], "backchannel watch: unknown option --bogus; see backchannel watch --help"],
    [["watch", "ch-x", "-timeout", "5"], "backchannel watch: unknown option -timeout (did you mean --timeout?); see backchannel watch --help"],
    [["watch", "ch-x", "-x"], "backchannel watch: unknown option -x (short: -h for --help); see backchannel watch --help"],
    [["watch", "ch-x", "--timeout"], "backchannel watch: --timeout needs a value; see backchannel watch --help"],
    [
      ["watch", "ch-x", "--timeout", "--follow"],
      'backchannel watch: --timeout needs a value, but the next word is "--follow"; write --timeout=--follow if that is the value; see backchannel watch --help',
    ],
    [["watch", "ch-x", "--follow=yes"], 'backchannel watch: --follow takes no value ("yes" was given with it); see backchannel watch --help'],
    [["serve", "--port", "abc"], "backchannel serve: --port goes with --http (add --http to serve over HTTP); see backchannel serve --help"],
    [["serve", "--http", "--port", "abc"], 'backchannel serve: --port takes a port number from 0 to 65535, not "abc"; see backchannel serve --help'],
    [["serve", "extra"], 'backchannel serve: unexpected word "extra": it takes options only; see backchannel serve --help'],
    // Options first are the default command's (serve), but --version and --help are the top level's.
    [["--bogus"], "backchannel: unknown option --bogus; see backchannel --help"],
    [["--htp"], "backchannel: unknown option --htp (did you mean --http?); see backchannel --help"],
    [["--vesion"], "backchannel: unknown option --vesion (did you mean --version?); see backchannel --help"],
    [["statusline", "--stsh", "f"], "backchannel statusline: unknown option --stsh (did you mean --stash?); see backchannel statusline --help"],
    [["hook", "stop", "--timeot", "5"], "backchannel hook: unknown option --timeot (did you mean --timeout?); see backchannel hook --help"],
    [["token", "add", "alice", "--token", "f"], "backchannel token: unknown option --token (did you mean --tokens?); see backchannel token --help"],
    [
      ["install", "hook", "--setings", "f"],
      "backchannel install: unknown option --setings (did you mean --settings?); see backchannel install --help",
    ],
    [
      ["uninstall", "hook", "--setings", "f"],
      "backchannel uninstall: unknown option --setings (did you mean --settings?); see backchannel uninstall --help",
    ],
  ];
  for (const [args, expected] of cases) {
    const result = run(args, { BACKCHANNEL_HOME: "/nonexistent-backchannel-home" });
    assert.equal(result.status, 1, args.join(" "));
    assert.equal(result.stderr, `${expected}\n`, args.join(" "));
  }
});

test('npm start with options before "--" (npm keeps them) says to put them after it, and exits 1 before it serves', async () => {
  const temp = await tempDataDir();
  try {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const cases: [string[], RegExp][] = [
      [["--home", join(temp.dir, "notes"), "--port", "0"], /npm kept --port and --home for itself/],
      [["--list"], /npm kept --list for itself/],
      [["--hom", "x"], /npm kept --hom \(did you mean --home\?\) for itself/],
    ];
    for (const [options, expected] of cases) {
      // PORT=0 and a timeout: a playground that started anyway would neither take a known port nor hang the test.
      const result = spawnSync("npm", ["start", ...options], {
        cwd: root,
        encoding: "utf8",
        env: { ...process.env, PORT: "0", BACKCHANNEL_HOME: temp.dir },
        timeout: 60_000,
      });
      const said = options.join(" ");
      assert.equal(result.status, 1, `npm start ${said}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, expected, said);
      assert.match(result.stderr, /write options after "--", as in: npm start -- --home DIR --port N; see backchannel web --help/, said);
      assert.doesNotMatch(`${result.stdout}${result.stderr}`, /backchannel playground: http|ERR_PARSE_ARGS|\n\s+at /, said);
    }
    // Run directly, the playground's command answers --help and a typo in its own words.
    const help = run(["web", "--playground", "--help"]);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /npm start -- --home DIR --port N/);
    const typo = run(["web", "--playground", "--hom", "x"], { BACKCHANNEL_HOME: temp.dir });
    assert.equal(typo.status, 1);
    assert.equal(typo.stderr, "backchannel web: unknown option --hom (did you mean --home?); see backchannel web --help\n");
  } finally {
    await temp.cleanup();
  }
});

test("every command listed in --help: a misspelt option of its own is named, its closest option suggested, its --help named", () => {
  for (const command of listedCommands()) {
    const help = run([command, "--help"]).stdout;
    // The options each help lists in its tables: a line that starts with one (other flags it mentions are other programs').
    const names = [...new Set([...help.matchAll(/^ +(?:-\w, )?--([a-z][a-z-]+)/gm)].map((match) => match[1]!))].filter((name) => name !== "help");
    assert.ok(names.length > 0, `${command} --help lists an option`);
    for (const name of names) {
      const typo = name.slice(0, 1) + name.slice(2);
      const result = run([command, `--${typo}`], { BACKCHANNEL_HOME: "/nonexistent-backchannel-home" });
      assert.equal(result.status, 1, `${command} --${typo}`);
      assert.equal(result.stderr, `backchannel ${command}: unknown option --${typo} (did you mean --${name}?); see backchannel ${command} --help\n`);
    }
  }
});

test("a malformed limit variable stops the server with a message naming it", async () => {
  const { dir, cleanup } = await tempDataDir();
  try {
    const result = run(["serve"], { BACKCHANNEL_HOME: dir, BACKCHANNEL_MAX_QUEUE_MESSAGES: "lots" });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /BACKCHANNEL_MAX_QUEUE_MESSAGES="lots" is not a positive whole number/);
  } finally {
    await cleanup();
  }
});

test("serve prints its banner on stderr and nothing on stdout until a client speaks", async () => {
  const { dir, cleanup } = await tempDataDir();
  const child = spawn(process.execPath, [CLI, "serve"], { env: { ...process.env, BACKCHANNEL_HOME: dir }, stdio: ["pipe", "pipe", "pipe"] });
  try {
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    await new Promise<void>((resolve) =>
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("\n")) resolve();
      }),
    );
    assert.match(stderr, /^backchannel \S+: MCP server on stdio, data in /);
    child.stdin.end();
    await new Promise((resolve) => child.on("exit", resolve));
    assert.equal(stdout, "");
  } finally {
    child.kill();
    await cleanup();
  }
});

/** A uid with no entry in the password database (a container's arbitrary uid). */
const HOMELESS_UID = 54321;

describe("every command without a home folder (HOME unset, a uid with no password entry)", { skip: otherUserSkipReason() }, () => {
  let root: string;
  let removeRoot: () => Promise<void>;
  let home: string;
  before(async () => {
    assert.ok(!readFileSync("/etc/passwd", "utf8").includes(`:${HOMELESS_UID}:`), `uid ${HOMELESS_UID} must have no password entry`);
    ({ dir: root, cleanup: removeRoot } = await tempDataDir());
    await chmod(root, 0o755);
    // The folder the uid may write: its data directory and its settings go in it.
    home = join(root, "own");
    await mkdir(home, { mode: 0o700 });
    await chown(home, HOMELESS_UID, HOMELESS_UID);
  });
  after(() => removeRoot());

  /** `backchannel ...args` as {@link HOMELESS_UID}, HOME unset, with `env`, `input` on stdin. */
  function homeless(args: string[], env: Record<string, string>, input = "{}") {
    const base: NodeJS.ProcessEnv = { ...process.env, ...env };
    delete base.HOME;
    delete base.XDG_STATE_HOME;
    delete base.CLAUDE_CONFIG_DIR;
    const asUid = ["setpriv", `--reuid=${HOMELESS_UID}`, `--regid=${HOMELESS_UID}`, "--clear-groups"];
    const result = spawnSync(asUid[0]!, [...asUid.slice(1), process.execPath, CLI, ...args], { encoding: "utf8", env: base, input, timeout: 20_000 });
    assert.doesNotMatch(result.stderr, /^\s+at .+:\d+:\d+\)?$|file:\/\//m, `${args.join(" ")}: a stack trace`);
    return result;
  }

  const STOP = JSON.stringify({ hook_event_name: "Stop", session_id: "s", cwd: "/tmp" });

  test("with BACKCHANNEL_HOME, each command works", async () => {
    const env = { BACKCHANNEL_HOME: join(home, "data") };
    // A project folder's .claude, which install makes when missing (any other missing folder is refused).
    const settings = join(home, ".claude", "settings.json");
    for (const command of ["", "serve", "watch", "statusline", "install", "uninstall", "hook", "token"]) {
      const help = homeless(command === "" ? ["--help"] : [command, "--help"], env);
      assert.equal(help.status, 0, `${command} --help: ${help.stderr}`);
    }
    const token = homeless(["token", "add", "bob"], env);
    assert.equal(token.status, 0, token.stderr);
    assert.match(token.stdout, /bc_/);

    const transport = new StdioClientTransport({
      command: "setpriv",
      args: [`--reuid=${HOMELESS_UID}`, `--regid=${HOMELESS_UID}`, "--clear-groups", process.execPath, CLI, "serve"],
      env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([name]) => name !== "HOME")) as Record<string, string>,
      stderr: "ignore",
    });
    const client = new Client({ name: "homeless", version: "0.0.0" });
    await client.connect(transport);
    try {
      const sent = await client.callTool({ name: "notify_ui", arguments: { channel_id: "ch-homeless", event: "hello", data: {} } });
      assert.ok(!sent.isError, JSON.stringify(sent.content));
    } finally {
      await client.close();
    }

    assert.equal(homeless(["watch", "ch-homeless", "--timeout", "1"], env).status, 2);
    assert.equal(homeless(["watch", "--session", "--timeout", "1"], env).status, 2);
    assert.equal(homeless(["statusline"], env).status, 0);
    const stop = homeless(["hook", "stop", "--timeout", "1"], env, STOP);
    assert.equal(stop.status, 2, stop.stderr);
    assert.equal(homeless(["hook", "post-tool-use"], env).status, 0);
    for (const args of [
      ["install", "statusline"],
      ["install", "hook"],
      ["uninstall", "hook"],
      ["uninstall", "statusline"],
    ]) {
      const done = homeless([...args, "--settings", settings], env);
      assert.equal(done.status, 0, `${args.join(" ")}: ${done.stderr}`);
      const unnamed = homeless(args, env);
      assert.equal(unnamed.status, 1, `${args.join(" ")} without --settings`);
      assert.match(unnamed.stderr, /no home folder to find Claude Code's settings in .*pass --settings FILE, or set CLAUDE_CONFIG_DIR/);
    }
  });

  test("without BACKCHANNEL_HOME, each says to set it; the status line and the wake hook still exit 0", () => {
    const help = homeless(["--help"], {});
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Data directory: \$BACKCHANNEL_HOME, else none here \(no home folder/);
    for (const args of [["serve"], ["watch", "--session", "--timeout", "1"], ["watch", "ch-x", "--timeout", "1"], ["token", "add", "bob"]]) {
      const refused = homeless(args, {});
      assert.equal(refused.status, 1, args.join(" "));
      assert.match(refused.stderr, /no home folder to find the data directory in .*set BACKCHANNEL_HOME/, args.join(" "));
    }
    const line = homeless(["statusline"], {});
    assert.equal(line.status, 0, line.stderr);
    const stop = homeless(["hook", "stop", "--timeout", "1"], {}, STOP);
    assert.equal(stop.status, 0, stop.stderr);
    assert.match(stop.stderr, /set BACKCHANNEL_HOME.*not watching/);
  });
});
