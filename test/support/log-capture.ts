/** A logger that keeps every line in memory, so a test can search what the service logged. */
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '../../platform/logger';

export function capturingLogger(): { logger: Logger; text(): string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), text: () => lines.join('') };
}
