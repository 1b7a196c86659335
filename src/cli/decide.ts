// Who answers a run's approval requests in `hangar chat` and `hangar dev`: the person at the terminal
// (a prompt per action), or a flag that answers every action the same way (scripts).
import { createInterface } from 'node:readline/promises';
import type { Decider, Decision } from './chat.js';

/** Answer every action with `decision` (when the action allows it; otherwise leave it waiting). */
export function scriptedDecider(decision: Decision): Decider {
  return async (action) => (action.allowed.includes(decision.type) ? decision : undefined);
}

/** Ask at the terminal: approve, edit (new JSON arguments), reject (a reason) or respond (a reply). */
export function terminalDecider(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stderr): Decider {
  return async (action, index, total) => {
    const rl = createInterface({ input, output, terminal: false });
    // End of input answers nothing: the action stays waiting (and chat exits non-zero).
    const closed = new Promise<string>((resolve) => rl.once('close', () => resolve('')));
    const ask = (question: string) => Promise.race([rl.question(question).catch(() => ''), closed]);
    try {
      return await askingDecider(ask, output)(action, index, total);
    } finally {
      rl.close();
    }
  };
}

/** The prompt itself, over any way of asking a question and reading a line ('' at end of input). */
export function askingDecider(ask: (question: string) => Promise<string>, output: NodeJS.WritableStream = process.stderr): Decider {
  return async (action, index, total) => {
    {
      const choices = [
        ['a', 'approve', '[a]pprove'],
        ['e', 'edit', '[e]dit'],
        ['r', 'reject', '[r]eject'],
        ['s', 'respond', 're[s]pond'],
      ].filter(([, name]) => action.allowed.includes(name!));
      const menu = choices.map(([, , label]) => label).join(' / ');
      for (;;) {
        const answer = (await ask(`${action.name} (${index + 1}/${total}): ${menu}? `)).trim().toLowerCase();
        const choice = choices.find(([key, name]) => answer === key || answer === name)?.[1];
        if (answer === '') return undefined; // end of input, or nothing chosen: leave it waiting
        if (choice === 'approve') return { type: 'approve' };
        if (choice === 'reject') {
          const message = (await ask('reason (optional, the model sees it): ')).trim();
          return { type: 'reject', ...(message ? { message } : {}) };
        }
        if (choice === 'respond') return { type: 'respond', message: (await ask('reply (the model sees it as the tool’s result): ')).trim() };
        if (choice === 'edit') {
          const text = await ask(`arguments as JSON [${JSON.stringify(action.args)}]: `);
          try {
            const args = text.trim() === '' ? action.args : (JSON.parse(text) as Record<string, unknown>);
            return { type: 'edit', edited_action: { name: action.name, args } };
          } catch {
            output.write('not valid JSON; try again\n');
            continue;
          }
        }
        output.write(`answer one of: ${choices.map(([key]) => key).join(', ')}\n`);
      }
    }
  };
}
