import type { Statement } from 'better-sqlite3';
import type { Db } from './open';

/**
 * Prepared statements for SQL text compiled at run time (filters): the text
 * varies only with the shape of a query, so a few stay prepared; the least
 * recently used goes when `size` are held.
 */
export function statementCache<P extends unknown[] | Record<string, unknown>, R>(db: Db, size: number) {
  const cache = new Map<string, Statement<P, R>>();
  return (text: string): Statement<P, R> => {
    let stmt = cache.get(text);
    if (stmt) {
      cache.delete(text);
    } else {
      stmt = db.prepare<P, R>(text);
      if (cache.size >= size) cache.delete(cache.keys().next().value!);
    }
    cache.set(text, stmt);
    return stmt;
  };
}
