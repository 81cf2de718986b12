import type { Database } from 'better-sqlite3';

/**
 * Versioned migrations: one file each under migrations/, applied in order, each
 * inside its own immediate transaction and recorded in `schema_migrations`.
 * The CLI and the server may open the same data dir at once; the immediate
 * transaction plus the re-check of the recorded version makes that safe.
 */
export interface Migration {
  version: number;
  name: string;
  up(db: Database): void;
}

export function migrate(db: Database, migrations: readonly Migration[]): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const isApplied = db.prepare<[number], { version: number }>('SELECT version FROM schema_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: number[] = [];
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  });
  // The usual case, everything applied, takes no write lock.
  const done = new Set(db.prepare<[], number>('SELECT version FROM schema_migrations').pluck().all());
  for (const m of sorted.filter((m) => !done.has(m.version))) {
    const step = db.transaction(() => {
      if (isApplied.get(m.version)) return false;
      m.up(db);
      record.run(m.version, m.name, new Date().toISOString());
      return true;
    });
    if (step.immediate()) applied.push(m.version);
  }
  return applied;
}
