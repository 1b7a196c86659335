// Row types of the Console's tables (migrations/0750_console_sessions.sql).
import type { Generated } from 'kysely';

export interface ConsoleSessionsTable {
  id: Generated<string>;
  token_hash: Buffer;
  key_id: string;
  created_at: Generated<Date>;
  expires_at: Date;
}

export interface ConsoleTables {
  console_sessions: ConsoleSessionsTable;
}
