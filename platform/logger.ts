/**
 * Logs (pino): JSON lines, or readable lines (pino-pretty) in a terminal. One root logger per process;
 * modules take children.
 */
import pino from 'pino';
import type PinoPretty from 'pino-pretty';
import type { Config } from './config';

export type Logger = pino.Logger;

/** `auto`: readable when stdout is a terminal, JSON otherwise (a file, a pipe, a log collector). */
export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerOptions {
  /** @default 'json' */
  format?: LogFormat;
  /** Where lines go (tests); @default stdout */
  destination?: NodeJS.WritableStream;
  /** Whether that destination is a terminal, for `auto`; @default process.stdout.isTTY */
  isTty?: boolean;
}

export function createLogger(
  level: Config['logLevel'],
  bindings: Record<string, unknown> = {},
  options: LoggerOptions = {},
): Logger {
  const format = resolveLogFormat(options.format ?? 'json', options.isTty ?? process.stdout.isTTY === true);
  const settings: pino.LoggerOptions = {
    level,
    base: { service: 'switchyard', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    // The Temporal SDK logs failures under `error` ("Workflow failed"); an Error's own fields are not
    // enumerable, so without this it would print as {} (the workflow sandbox's errors are of another
    // realm: the serializer goes by shape, not instanceof).
    serializers: { error: pino.stdSerializers.err },
    // Belt and braces: credentials never reach the logs even if a request object is logged by mistake.
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.secret', '*.value', 'key'],
      censor: '[redacted]',
    },
  };
  if (format === 'pretty') return pino(settings, prettyStream(options.destination));
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

export function resolveLogFormat(format: LogFormat, isTty: boolean): 'json' | 'pretty' {
  if (format === 'auto') return isTty ? 'pretty' : 'json';
  return format;
}

/**
 * pino-pretty as a synchronous stream in this thread (not a transport worker): terminal output is for a
 * person reading it, and a worker thread per process would cost more than the formatting does. Loaded
 * only when used, so JSON processes never load it.
 */
function prettyStream(destination: NodeJS.WritableStream | undefined): pino.DestinationStream {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pretty = require('pino-pretty') as typeof PinoPretty;
  return pretty({
    colorize: destination ? false : process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
    sync: true,
    ...(destination && { destination }),
  });
}
