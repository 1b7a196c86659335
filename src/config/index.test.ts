import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.js';

describe('loadConfig', () => {
  it('applies defaults, and flags win over the environment', () => {
    const defaults = loadConfig({ cwd: '/srv' });
    expect(defaults.port).toBe(8124);
    expect(defaults.dataDir).toBe(path.resolve('/srv/.hangar'));
    expect(defaults.databaseUrl).toBeUndefined();
    const both = loadConfig({ flags: { port: '9001' }, env: { PORT: '9000', HANGAR_DATA_DIR: '/data' } });
    expect(both.port).toBe(9001);
    expect(both.dataDir).toBe('/data');
    expect(Object.isFrozen(both)).toBe(true);
  });

  it('names every bad setting the way it was set', () => {
    expect(() => loadConfig({ env: { PORT: '70000', LOG_LEVEL: 'loud' } })).toThrow(ConfigError);
    const bad = () => loadConfig({ env: { PORT: '70000', LOG_LEVEL: 'loud' }, flags: { databaseUrl: 'mysql://x' } });
    expect(bad).toThrow(/PORT:/);
    expect(bad).toThrow(/LOG_LEVEL:/);
    expect(bad).toThrow(/--database-url:/);
  });

  it('accepts a secret key only as 32 bytes', () => {
    expect(loadConfig({ env: { HANGAR_SECRET_KEY: 'ab'.repeat(32) } }).secretKey).toBe('ab'.repeat(32));
    expect(() => loadConfig({ env: { HANGAR_SECRET_KEY: 'short' } })).toThrow(/HANGAR_SECRET_KEY/);
  });

  it('reads CORS origins as a list (none by default) and refuses what is not an origin', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ env: { HANGAR_CORS_ORIGINS: 'https://chat.example.com, http://127.0.0.1:5173' } }).corsOrigins).toEqual(['https://chat.example.com', 'http://127.0.0.1:5173']);
    expect(loadConfig({ env: { HANGAR_CORS_ORIGINS: '*' } }).corsOrigins).toEqual(['*']);
    expect(() => loadConfig({ env: { HANGAR_CORS_ORIGINS: 'https://chat.example.com/app' } })).toThrow(/HANGAR_CORS_ORIGINS: each entry must be an origin/);
  });
});
