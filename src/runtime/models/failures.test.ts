// The run error codes of provider failures as the provider SDKs and LangChain raise them (wrapped by
// the agent framework), and messages scrubbed of stacks, server paths and key fragments.
import { MiddlewareError } from 'langchain';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { classifyFailure, RunFailureError } from './failures.js';

function apiError(status: number, message: string, headers: Record<string, string> = {}) {
  return OpenAI.APIError.generate(status, { error: { message } }, message, new Headers(headers));
}

describe('classifyFailure', () => {
  it.each([
    [401, 'model_auth_failed'],
    [403, 'model_auth_failed'],
    [404, 'model_not_found'],
    [429, 'model_rate_limited'],
    [500, 'model_unavailable'],
    [503, 'model_unavailable'],
    [400, 'model_request_rejected'],
  ])('an SDK error with status %i wrapped by the agent framework is %s', (status, code) => {
    const wrapped = MiddlewareError.wrap(apiError(status, 'provider said no'), 'model');
    expect(classifyFailure(wrapped).code).toBe(code);
  });

  it('a refused connection is model_unavailable; an SDK timeout model_timeout; bad JSON model_bad_response', () => {
    const refused = new OpenAI.APIConnectionError({ cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) });
    expect(classifyFailure(refused).code).toBe('model_unavailable');
    expect(classifyFailure(new OpenAI.APIConnectionTimeoutError()).code).toBe('model_timeout');
    expect(classifyFailure(new SyntaxError('Unexpected token < in JSON at position 0')).code).toBe('model_bad_response');
  });

  it('a missing key is model_auth_failed; anything else run_failed with its type', () => {
    expect(classifyFailure(new Error('OpenAI or Azure OpenAI API key or Token Provider not found')).code).toBe('model_auth_failed');
    expect(classifyFailure(new RangeError('something else'))).toEqual({ code: 'run_failed', error: 'RangeError', message: 'something else' });
  });

  it("Hangar's database gone under the run is DatabaseUnavailable, without the database's words; a provider's refused socket is not", () => {
    // The shape pg gives the FATAL error PostgreSQL sends when it ends or refuses a session (a real one
    // is in src/db/reconnect.test.ts and test/runtime/chaos.test.ts).
    const fatal = Object.assign(new Error('database "t_secret_name" is not currently accepting connections'), { severity: 'FATAL', code: '55000' });
    const wrapped = MiddlewareError.wrap(fatal, 'model');
    expect(classifyFailure(wrapped)).toEqual({ code: 'run_failed', error: 'DatabaseUnavailable', message: 'the database could not be reached while the run executed; start it again' });
    expect(classifyFailure(new Error('Client has encountered a connection error and is not queryable')).error).toBe('DatabaseUnavailable');
    const refused = new OpenAI.APIConnectionError({ cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) });
    expect(classifyFailure(refused).code).toBe('model_unavailable');
  });

  it("Hangar's own failures keep their code", () => {
    expect(classifyFailure(new RunFailureError('run_timeout', 'RunTimeout', 'too long'))).toEqual({ code: 'run_timeout', error: 'RunTimeout', message: 'too long' });
  });

  it('messages carry no key fragment, stack or server path', () => {
    const auth = classifyFailure(apiError(401, 'Incorrect API key provided: sk-proj-ab*********************wxyz. You can find your API key at …'));
    expect(auth.message).not.toMatch(/sk-|wxyz/);
    const failure = new Error("ENOENT: no such file or directory, open '/home/hangar/app/src/runtime/x.ts'");
    failure.stack = `${failure.message}\n    at open (/home/hangar/app/node_modules/x/index.js:1:1)`;
    const described = classifyFailure(failure);
    expect(described.message).toBe("ENOENT: no such file or directory, open '[path]'");
    const bearer = classifyFailure(apiError(500, 'upstream said: Authorization: Bearer abcdefghijklmnop failed'));
    expect(bearer.message).not.toContain('abcdefghijklmnop');
  });
});
