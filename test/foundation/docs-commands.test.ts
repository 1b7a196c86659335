// The commands the docs show must be the CLI's: every verb and flag of `hangar --help` (and of each
// command's own `--help`) is in the README's CLI table, every command the README or docs/ write exists
// with the flags they give it, every shell block parses, and every `npm run` script they name exists.
// Offline and quick: it reads the built CLI's command tree, and runs nothing against a server.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';

const exec = promisify(execFile);
const root = new URL('../../', import.meta.url);
const docNames = ['README.md', ...(await readdir(new URL('docs/', root))).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const docs = new Map(await Promise.all(docNames.map(async (name) => [name, await readFile(new URL(name, root), 'utf8')] as const)));

/** Flags every client or operator command takes, documented once beside the table rather than on each row. */
const SHARED = new Set(['--help', '--url', '--api-key', '--hangar-url', '--data-dir', '--database-url']);

/**
 * Each command of the CLI (path of words) with its long flags: the built CLI's own command tree
 * (what `--help` prints), read in one process by having its parse print the tree instead of running.
 */
async function commandTree(): Promise<Map<string, Set<string>>> {
  const script = `
    import { Command } from 'commander';
    Command.prototype.parseAsync = async function () {
      const tree = {};
      const walk = (command, path) => {
        if (path.length > 0) tree[path.join(' ')] = command.options.map((o) => o.long).filter(Boolean).concat('--help');
        for (const sub of command.commands) walk(sub, [...path, sub.name()]);
      };
      walk(this, []);
      process.stdout.write(JSON.stringify(tree));
    };
    await import('./dist/cli/main.js');
  `;
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(root) });
  const tree = new Map(Object.entries(JSON.parse(stdout) as Record<string, string[]>).map(([command, flags]) => [command, new Set(flags)]));
  // The tree is the one `--help` shows.
  const { stdout: help } = await runHangar(['schedules', 'update', '--help']);
  for (const flag of tree.get('schedules update')!) expect(help).toContain(flag);
  return tree;
}

/** The longest command of the tree that `words` start with. */
function commandOf(tree: Map<string, Set<string>>, words: string[]): string | undefined {
  for (let n = words.length; n > 0; n--) {
    const candidate = words.slice(0, n).join(' ');
    if (tree.has(candidate)) return candidate;
  }
  return undefined;
}

/** Fenced shell blocks of a document. */
function shellBlocks(text: string): string[] {
  return [...text.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
}

let tree: Map<string, Set<string>>;
beforeAll(async () => {
  tree = await commandTree();
});

describe('the CLI reference', () => {
  const readme = docs.get('README.md')!;
  const cliSection = readme.split('\n## CLI\n')[1]!.split('\n## ')[0]!;
  // `hangar a b ARGS [--flag]` / `sub ARGS` / …: each piece documents one command.
  const pieces = cliSection
    .split('\n')
    .filter((line) => line.startsWith('| `hangar '))
    .flatMap((line) => {
      let group = '';
      return line
        .split(' | ')[0]!
        .slice(2)
        .split(' / ')
        .map((piece) => {
          const words = piece.replace(/`/g, '').trim().split(/\s+/);
          if (words[0] === 'hangar') group = words[1]!;
          else words.unshift('hangar', group);
          return { text: piece, words: words.slice(1), flags: [...piece.matchAll(/--[a-z-]+/g)].map((m) => m[0]) };
        });
    });

  it('documents every command, with every flag it takes', () => {
    const documented = new Map<string, Set<string>>();
    for (const piece of pieces) {
      const command = commandOf(tree, piece.words);
      expect(command, `${piece.text}: no such command`).toBeDefined();
      const flags = documented.get(command!) ?? new Set<string>();
      for (const flag of piece.flags) flags.add(flag);
      documented.set(command!, flags);
    }
    const groups = new Set([...tree.keys()].filter((c) => [...tree.keys()].some((other) => other.startsWith(`${c} `))));
    const missing: string[] = [];
    for (const [command, flags] of tree) {
      // A group (`hangar keys`) is its subcommands; `serve`'s flags are the settings table's.
      if (groups.has(command) || command === 'serve') continue;
      if (!documented.has(command)) missing.push(`hangar ${command}`);
      else for (const flag of flags) if (!SHARED.has(flag) && !documented.get(command)!.has(flag)) missing.push(`hangar ${command} ${flag}`);
    }
    expect(missing, "missing from the README's CLI table").toEqual([]);
    expect(documented.has('serve')).toBe(true);
  });

  it('gives no command a flag it does not take', () => {
    for (const piece of pieces) {
      const command = commandOf(tree, piece.words)!;
      const unknown = piece.flags.filter((flag) => !tree.get(command)!.has(flag));
      expect(unknown, `${piece.text}`).toEqual([]);
    }
  });
});

describe('the command blocks of README.md and docs/', () => {
  it('call only commands that exist, with flags they take', () => {
    const problems: string[] = [];
    let commands = 0;
    for (const [name, text] of docs) {
      for (const block of shellBlocks(text)) {
        for (const line of block.split('\n')) {
          // `hangar …` where a command starts: a line's start, `$(`, or after `;`, `&&`, `||`.
          for (const m of line.matchAll(/(?:^|\$\(|;|&&|\|\|)\s*hangar ([^#);|&]*)/g)) {
            const words = m[1]!.trim().split(/\s+/);
            const command = commandOf(tree, words);
            commands++;
            if (command === undefined) {
              problems.push(`${name}: hangar ${m[1]!.trim()}: no such command`);
              continue;
            }
            for (const flag of words.filter((w) => w.startsWith('--'))) {
              if (!tree.get(command)!.has(flag.split('=')[0]!)) problems.push(`${name}: hangar ${command} has no ${flag}`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(commands).toBeGreaterThan(15);
  });

  it('are valid shell', async () => {
    for (const [name, text] of docs) {
      for (const block of shellBlocks(text)) {
        await expect(exec('bash', ['-n', '-c', block]), `${name}:\n${block}`).resolves.toBeDefined();
      }
    }
  });

  it('run only npm scripts that exist', async () => {
    const { scripts } = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> };
    for (const [name, text] of docs) {
      for (const m of text.matchAll(/npm run (?:-s )?([a-z][a-z0-9:-]*)/g)) {
        // `npm run bench:<name>` is a pattern, not a script.
        if (m[1]!.endsWith(':')) continue;
        expect(Object.keys(scripts), `${name}: npm run ${m[1]}`).toContain(m[1]);
      }
    }
  });
});
