/** The path of the fntrace.so this package carries. */
export function getLoadablePath(): string;
/** Loads the fntrace extension into db (a better-sqlite3 Database). */
export function load(db: { loadExtension(path: string): unknown }): void;
