// The process's JSON logs (pino): one line per event on stdout, with the fields an operator
// filters by — repository, pr, environment, controller — bound once in child loggers so no
// call site has to repeat them.
import pino from 'pino';
import type { Logger } from './kube/logger.js';

export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

/** The fields a child logger binds; all optional, each names what a line is about. */
export interface LogContext {
  /** `owner/name`. */
  repository?: string;
  /** Pull request number. */
  pr?: number;
  /** PreviewEnvironment name. */
  environment?: string;
  controller?: string;
  /** A part of the process that is not a controller (`webhook`, `resync`, `server`, …). */
  component?: string;
}

/** A Logger (as the controller runtime wants it) that can bind context for a child. */
export interface OperatorLogger extends Logger {
  child(context: LogContext): OperatorLogger;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go (default stdout). Tests pass a stream to read them back. */
  destination?: pino.DestinationStream;
  /** Fields on every line (default: none besides pino's pid and hostname). */
  base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions = {}): OperatorLogger {
  const logger = pino(
    {
      level: options.level ?? 'info',
      ...(options.base ? { base: options.base } : {}),
      // `level: "info"` rather than 30: the line is read by people and by log pipelines
      // that do not know pino's numbers.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      // The runtime logs errors under `err` (and sometimes `error`): both get stack and type.
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      // Belt and braces: a token or secret passed in fields by mistake never reaches the log.
      redact: {
        paths: ['token', 'secret', 'privateKey', 'password', '*.token', '*.secret', '*.privateKey', '*.password', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    // Asynchronous: a line is handed to the kernel without blocking the event loop. In sync mode a
    // full stdout pipe (a slow log collector) made every line spin on EAGAIN — 0.8 ms a line in a
    // 50-PR burst. pino flushes what is pending when the process exits.
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
  return wrap(logger);
}

function wrap(logger: pino.Logger): OperatorLogger {
  return {
    debug: (fields, message) => logger.debug(fields, message),
    info: (fields, message) => logger.info(fields, message),
    warn: (fields, message) => logger.warn(fields, message),
    error: (fields, message) => logger.error(fields, message),
    child: (context) => wrap(logger.child(definedFields(context))),
  };
}

/** pino writes `"pr": undefined` as nothing, but a child binding would still shadow a parent's field. */
function definedFields(context: LogContext): Record<string, unknown> {
  return Object.fromEntries(Object.entries(context).filter(([, value]) => value !== undefined));
}
