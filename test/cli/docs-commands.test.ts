// The CLI the docs describe is the CLI there is: every `hangar …` command line in README.md and
// docs/*.md names a command `hangar --help` lists and only flags that command's `--help` lists, and
// every command the CLI has is in the README's CLI table. The CLI runs as the installed command.
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runHangar } from '../support/cli.js';

const root = new URL('../../', import.meta.url);

/** README.md and every docs/*.md, by name. */
async function docs(): Promise<Map<string, string>> {
  const files = new Map([['README.md', await readFile(new URL('README.md', root), 'utf8')]]);
  for (const name of (await readdir(new URL('docs/', root))).filter((f) => f.endsWith('.md'))) files.set(`docs/${name}`, await readFile(new URL(`docs/${name}`, root), 'utf8'));
  return files;
}

const helps = new Map<string, Promise<string>>();
/** `hangar PATH… --help`, once per path. */
function help(path: string[]): Promise<string> {
  const key = path.join(' ');
  if (!helps.has(key)) {
    helps.set(
      key,
      runHangar([...path, '--help']).then((r) => {
        expect(r.code, `hangar ${key} --help: ${r.stderr}`).toBe(0);
        return r.stdout;
      }),
    );
  }
  return helps.get(key)!;
}

/** The command names a `--help` lists under "Commands:" (without `help`). */
function commandsOf(text: string): string[] {
  const section = text.split('\nCommands:\n')[1] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
}

describe('the CLI in the docs', () => {
  it('every `hangar …` command line names a command that exists, with flags that command takes', async () => {
    const top = commandsOf(await help([]));
    expect(top.length).toBeGreaterThan(10);
    const problems: string[] = [];
    let checked = 0;
    for (const [file, text] of await docs()) {
      // Inline `hangar …` spans, and lines of shell blocks that start with hangar (comments cut off).
      const lines = [...text.matchAll(/`(hangar [^`]+)`|^(hangar [^\n]*)$/gm)].map((m) => (m[1] ?? m[2]!).split(' # ')[0]!.replace(/\\\|/g, '|'));
      for (const line of lines) {
        const words = line.split(/\s+/).slice(1);
        const verb = words[0]!;
        if (verb.startsWith('-')) continue; // `hangar --help`
        if (!top.includes(verb)) {
          problems.push(`${file}: \`${line}\`: no command "${verb}"`);
          continue;
        }
        const path = [verb];
        const subs = commandsOf(await help(path));
        if (subs.length > 0 && words[1] && /^[a-z][a-z-]*$/.test(words[1]) && subs.includes(words[1])) path.push(words[1]);
        else if (subs.length > 0 && words[1] && /^[a-z][a-z-]*$/.test(words[1]) && !/^[A-Z]/.test(words[1])) {
          problems.push(`${file}: \`${line}\`: "${verb}" has no command "${words[1]}" (it has ${subs.join(', ')})`);
          continue;
        }
        const text = await help(path);
        for (const flag of line.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) {
          if (flag[0] !== '--help' && !new RegExp(`(^|[\\s,])${flag[0]}(?![\\w-])`, 'm').test(text)) problems.push(`${file}: \`${line}\`: hangar ${path.join(' ')} has no ${flag[0]}`);
        }
        checked++;
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(40);
  }, 120_000);

  it('the README\'s CLI table has every command of `hangar --help`', async () => {
    const readme = (await docs()).get('README.md')!;
    const table = readme.split('\n## CLI\n')[1]!.split('\n## ')[0]!;
    const rows = table.split('\n').filter((l) => l.startsWith('| `hangar '));
    const missing: string[] = [];
    for (const verb of commandsOf(await help([]))) {
      const own = rows.filter((r) => r.includes(`\`hangar ${verb}`));
      if (own.length === 0) {
        missing.push(verb);
        continue;
      }
      // A sub-command is in a row of its parent: `hangar keys list …`, or `… / \`tools SERVER\`` beside it.
      for (const sub of commandsOf(await help([verb]))) {
        if (!own.some((r) => r.includes(`\`hangar ${verb} ${sub}`) || r.includes(` / \`${sub}`))) missing.push(`${verb} ${sub}`);
      }
    }
    expect(missing).toEqual([]);
  }, 120_000);
});
