/** Structured JSON logs (pino). One root logger per process; modules take children. */
import pino from 'pino';
import type { Config } from './config';

export type Logger = pino.Logger;

export function createLogger(level: Config['logLevel'], bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'switchyard', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Belt and braces: credentials never reach the logs even if a request object is logged by mistake.
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.secret', '*.value', 'key'],
      censor: '[redacted]',
    },
  });
}
