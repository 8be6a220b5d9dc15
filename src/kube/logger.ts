// The runtime logs through this small interface; a pino logger satisfies it as is.

export interface Logger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

/** Discards everything (tests, or when the caller logs elsewhere). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** The default until the process configures pino: warnings and errors as JSON lines on stderr. */
export const stderrLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (fields, message) => write('warn', fields, message),
  error: (fields, message) => write('error', fields, message),
};

function write(level: string, fields: object, message?: string): void {
  const plain = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v instanceof Error ? v.message : v]));
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), ...plain, msg: message })}\n`);
}
